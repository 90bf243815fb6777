"""The app: the library facade, the REPL's PyTorch surface, session and prompt, batch and data
jobs, and the CLI.
"""
