"""The graph: tensors (the nodes), recording op applications, and the evaluator that runs a
program over them.
"""
