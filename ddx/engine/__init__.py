"""The engine: reverse mode (the one backward loop), forward mode, second order and the explain
view, all from the op table's rules.
"""
