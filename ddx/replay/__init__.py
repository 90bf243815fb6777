"""The replay: graphs as flat columns, compiled once from the same lowering and replayed on new
bindings; the one template cache.
"""
