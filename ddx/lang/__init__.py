"""The language: the grammar's LALR tables, lexer, parser, syntax tree and messages, and the one
lowering of operators to op rows.
"""
