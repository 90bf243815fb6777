"""The builder for the REPL's Python (SPEC §5): statements (if/while/for/def/class/try/import,
return, augmented assignment, ...), lambdas, conditional and boolean expressions, f-strings,
comprehensions, dicts and sets, on top of the expression language's builder (tree.Builder).

Parts evaluated only when taken (a conditional's branches, ``and``/``or``'s right side, a
lambda's body, a comprehension) are kept out of ``kids``, so the evaluator's post-order code
does not run them eagerly."""

from __future__ import annotations

from ..errors import DdxSyntaxError
from .tree import Ast, Builder, Stmt, unquote


def _tokens(children) -> list:
    return [c for c in children if type(c) is not tuple]


def _tok(children, kind: str):
    return next((c for c in children if type(c) is tuple and c[0] == kind), None)


def _clauses(children, kinds: tuple) -> dict:
    """The clause tuples (("else", body), ...) among a compound statement's children."""
    out: dict = {}
    for c in children:
        if type(c) is list and c and type(c[0]) is str and c[0] in kinds:
            out.setdefault(c[0], []).append(c[1:])
    return out


class Param:
    """One parameter of a def or lambda: ``kind`` "pos", "star" (*args) or "kwstar" (**kw)."""

    __slots__ = ("name", "default", "kind")

    def __init__(self, name: str, default: Ast | None = None, kind: str = "pos") -> None:
        self.name, self.default, self.kind = name, default, kind


class PythonBuilder(Builder):
    # --- blocks ---------------------------------------------------------------------------
    def suite(self, *groups):
        return [s for group in groups if type(group) is list for s in group]

    def if_stmt(self, kw, cond, colon, body, *clauses):
        found = _clauses(clauses, ("elif", "else"))
        branches = [(cond, body)] + [(c, b) for c, b in found.get("elif", [])]
        orelse = found["else"][0][0] if "else" in found else []
        return [Stmt("if", None, cond, body, start=kw[2], end=cond.oend,
                     extra={"branches": branches, "else": orelse})]

    def elif_clause(self, kw, cond, colon, body):
        return ["elif", cond, body]

    def else_clause(self, kw, colon, body):
        return ["else", body]

    def while_stmt(self, kw, cond, colon, body, *clauses):
        found = _clauses(clauses, ("else",))
        return [Stmt("while", None, cond, body, start=kw[2], end=cond.oend,
                     extra={"else": found["else"][0][0] if found else []})]

    def for_stmt(self, kw, target, in_, iterable, colon, body, *clauses):
        found = _clauses(clauses, ("else",))
        return [Stmt("for", target, iterable, body, start=kw[2], end=iterable.oend,
                     extra={"else": found["else"][0][0] if found else []})]

    def def_stmt(self, kw, name, lpar, params, rpar, *rest):
        return [Stmt("def", None, None, rest[-1], start=kw[2], end=rpar[3],
                     extra={"name": name[1], "params": params, "decorators": []})]

    def class_stmt(self, kw, name, *rest):
        bases = rest[1] if type(rest[0]) is tuple and rest[0][0] == "LPAR" else []
        return [Stmt("class", None, None, rest[-1], start=kw[2], end=name[3],
                     extra={"name": name[1], "bases": [b for b in bases if isinstance(b, Ast)],
                            "decorators": []})]

    def try_stmt(self, kw, colon, body, *clauses):
        found = _clauses(clauses, ("except", "else", "finally"))
        return [Stmt("try", None, None, body, start=kw[2], end=colon[3],
                     extra={"handlers": found.get("except", []),
                            "else": found["else"][0][0] if "else" in found else [],
                            "finally": found["finally"][0][0] if "finally" in found else []})]

    def except_clause(self, kw, *rest):
        exprs = [c for c in rest if isinstance(c, Ast)]
        name = _tok(rest, "NAME")
        return ["except", exprs[0] if exprs else None, name[1] if name else None, rest[-1]]

    def finally_clause(self, kw, colon, body):
        return ["finally", body]

    def decorated(self, *children):
        decorators = [c for c in children if isinstance(c, Ast)]
        defn = children[-1]
        defn[0].extra["decorators"] = decorators
        return defn

    def decorator(self, at, expr):
        if at[1] != "@":
            raise DdxSyntaxError(f"unexpected '{at[1]}'", start=at[2], end=at[3])
        return expr

    # --- parameters ---------------------------------------------------------------------
    def params(self, *children):
        params = _tokens(children)
        seen = set()
        for p in params:
            if p.name in seen:
                raise DdxSyntaxError(f"duplicate argument '{p.name}' in function definition")
            seen.add(p.name)
        return params

    lambda_params = params

    def param(self, name):
        return Param(name[1])

    def param_typed(self, name, colon, annotation):
        return Param(name[1])

    def param_default(self, name, eq, default):
        return Param(name[1], default)

    def param_typed_default(self, name, colon, annotation, eq, default):
        return Param(name[1], default)

    def param_star(self, op, name):
        if op[1] not in ("*", "**"):
            raise DdxSyntaxError(f"unexpected '{op[1]}'", start=op[2], end=op[3])
        return Param(name[1], None, "star" if op[1] == "*" else "kwstar")

    def param_kwonly(self, op):  # def f(a, *, b=2): the names after it are keyword-only
        if op[1] != "*":
            raise DdxSyntaxError(f"unexpected '{op[1]}'", start=op[2], end=op[3])
        return Param("*", None, "kwonly")

    # --- simple statements --------------------------------------------------------------
    def _simple(self, kind, tok, value=None, **extra):
        end = value.oend if isinstance(value, Ast) else tok[3]
        return Stmt(kind, None, value, start=tok[2], end=end, extra=extra or None)

    def assign_chain(self, a, *rest):
        """a = b = c = value: the value once, then each target from the left, as Python."""
        parts = [a, *rest[1::2]]  # (rest alternates '=' tokens and the parts after them)
        value = parts.pop()
        return Stmt("assign", a, value, start=a.ostart, end=value.oend,
                    extra={"also": parts[1:]})

    def augassign(self, target, op, value):
        return Stmt("augassign", target, value, start=target.ostart, end=value.oend,
                    extra={"op": op[1][:-1], "pos": op[2]})

    def return_stmt(self, kw, value=None):
        return self._simple("return", kw, value)

    def pass_stmt(self, kw):
        return self._simple("pass", kw)

    def break_stmt(self, kw):
        return self._simple("break", kw)

    def continue_stmt(self, kw):
        return self._simple("continue", kw)

    def raise_stmt(self, kw, value=None):
        return self._simple("raise", kw, value)

    def assert_stmt(self, kw, test, *rest):
        msg = rest[-1] if rest else None
        return self._simple("assert", kw, test, message=msg)

    def del_stmt(self, kw, targets):
        return self._simple("del", kw, targets)

    def global_stmt(self, kw, *names):
        return self._simple("global", kw, None, names=[n[1] for n in names if n[0] == "NAME"])

    def dotted(self, *names):
        return ".".join(n[1] for n in names if n[0] == "NAME"), names[0][2], names[-1][3]

    def dotted_as(self, dotted, *rest):
        return dotted, (rest[1][1] if rest else None)

    def import_stmt(self, kw, *items):
        pairs = [c for c in items if type(c) is tuple and len(c) == 2 and type(c[0]) is tuple]
        return self._simple("import", kw, None, modules=pairs)

    def import_as(self, name, *rest):
        return name[1], (rest[1][1] if rest else None)

    def import_names(self, *children):
        if len(children) == 1 and children[0][0] == "MULOP":
            return "*"
        return [c for c in children if type(c) is tuple and len(c) == 2 and
                type(c[0]) is str and not c[0].isupper()]

    def from_stmt(self, kw, dotted, imp, names):
        return self._simple("from", kw, None, module=dotted, names=names)

    # --- expressions --------------------------------------------------------------------
    def lambdef(self, kw, params, colon, body):
        return Ast("lambda", (params, body), tuple(p.default for p in params if p.default),
                   (), kw[2], body.oend)

    def ifexp(self, then, kw, cond, kw2, orelse):
        return Ast("ifexp", (then, orelse), (cond,), (), then.ostart, orelse.oend, kw[2])

    def boolop(self, a, op, b):
        return Ast("boolop", (op[1], b), (a,), (), a.ostart, b.oend, op[2])

    def notop(self, kw, a):
        return Ast("not", None, (a,), (), kw[2], a.oend, kw[2])

    def compare_not(self, a, *rest):
        b = rest[-1]
        op = "not in" if rest[0][0] == "NOT" else "is not"
        return Ast("bin", op, (a, b), (), a.ostart, b.oend, rest[0][2])

    def string(self, *toks):
        return Ast("str", "".join(unquote(t[1]) for t in toks), (), (), toks[0][2], toks[-1][3])

    def fstring(self, *toks):  # (with the strings it is written next to: 'a' f'{b}' 'c')
        parts: list = []
        for tok in toks:
            if tok[0] == "FSTRING":
                parts.extend(fstring_parts(tok[1][1:], tok[2] + 1))
            else:
                parts.append(unquote(tok[1]))
        return Ast("fstr", tuple(parts), (), (), toks[0][2], toks[-1][3])

    def listcomp(self, lsqb, expr, comp, rsqb):
        return Ast("comp", ("list", expr, *comp), (comp[1],), (), lsqb[2], rsqb[3])

    def genexp(self, lpar, expr, comp, rpar):
        return Ast("comp", ("list", expr, *comp), (comp[1],), (), lpar[2], rpar[3])

    def args_gen(self, expr, comp):  # sum(x * x for x in xs): a generator as the argument
        return [Ast("comp", ("list", expr, *comp), (comp[1],), (), expr.ostart, expr.oend)]

    def dictcomp(self, lbrace, key, colon, value, comp, rbrace):
        return Ast("comp", ("dict", (key, value), *comp), (comp[1],), (), lbrace[2], rbrace[3])

    def comp_for(self, first, *more):
        """The first clause's (target, iterable, conds), then every later clause as a tuple of
        them (``for i in a for j in b if c``: nested loops, left to right)."""
        return (*first, tuple(more))

    def comp_clause(self, kw, target, in_, iterable, *conds):
        return target, iterable, tuple(c for c in conds if isinstance(c, Ast))

    def setcomp(self, lbrace, expr, comp, rbrace):
        return Ast("comp", ("set", expr, *comp), (comp[1],), (), lbrace[2], rbrace[3])

    def star_item(self, op, value):  # a, *rest = xs; [*xs, 1]
        if op[1] != "*":
            raise DdxSyntaxError(f"unexpected '{op[1]}'", start=op[2], end=op[3])
        return Ast("star", None, (value,), (), op[2], value.oend)

    def walrus(self, lpar, name, op, value, rpar):  # (n := len(xs)) > 2
        return Ast("walrus", name[1], (value,), (), lpar[2], rpar[3], name[2])

    def dict_items(self, *children):  # (k, v, k, v, ...; a **unpacked mapping as one)
        return [x for c in _tokens(children) for x in (c if type(c) is list else [c])]

    def dict_item(self, key, colon, value):  # (k: v: two expressions, as before)
        return [key, value]

    def dict_unpack(self, op, value):  # {**defaults, "lr": 0.1}
        if op[1] != "**":
            raise DdxSyntaxError(f"unexpected '{op[1]}'", start=op[2], end=op[3])
        return Ast("dstar", None, (value,), (), op[2], value.oend)

    def dict(self, lbrace, items, rbrace):
        return Ast("dict", None, tuple(items), (), lbrace[2], rbrace[3])

    def set(self, lbrace, *rest):
        items = [rest[0], *rest[2]] if len(rest) == 4 else [rest[0]]
        return Ast("set", None, tuple(items), (), lbrace[2], rest[-1][3])

    def star_arg(self, op, value):
        if op[1] not in ("*", "**"):
            raise DdxSyntaxError(f"unexpected '{op[1]}'", start=op[2], end=op[3])
        return Ast("star" if op[1] == "*" else "dstar", None, (value,), (), op[2], value.oend)

    def call_value(self, fn, lpar, args, rpar):
        node = self._call("call_value", ("NAME", "", fn.ostart, fn.oend), fn, args, rpar[3])
        return node


def fstring_parts(text: str, offset: int) -> tuple:
    """An f-string's parts: literal text, and (expression source, its offset, conversion,
    format spec) for each ``{...}``; ``{{``/``}}`` are braces. No recursion: one scan."""
    quote = text[0]
    body = text[1:-1] if not text.startswith(quote * 3) else text[3:-3]
    base = offset + (1 if not text.startswith(quote * 3) else 3)
    parts: list = []
    literal: list[str] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c == "{" and body.startswith("{{", i):
            literal.append("{")
            i += 2
            continue
        if c == "}" and body.startswith("}}", i):
            literal.append("}")
            i += 2
            continue
        if c == "}":
            raise DdxSyntaxError("f-string: single '}' is not allowed", start=base + i)
        if c != "{":
            literal.append(c)
            i += 1
            continue
        if literal:
            parts.append(unquote(quote + "".join(literal) + quote))
            literal = []
        depth, j, in_str = 0, i + 1, None
        conv = spec = None
        expr_end = None
        while j < n:
            d = body[j]
            if in_str:
                if d == in_str:
                    in_str = None
            elif d in "'\"":
                in_str = d
            elif d in "([{":
                depth += 1
            elif d in ")]}" and depth:
                depth -= 1
            elif depth == 0 and d == "!" and body[j + 1:j + 2] in ("r", "s", "a") and \
                    expr_end is None and body[j + 1:j + 2] != "=":
                expr_end = j
                conv = body[j + 1]
                j += 1
            elif depth == 0 and d == ":" and spec is None:
                expr_end = expr_end if expr_end is not None else j
                spec = j + 1
            elif depth == 0 and d == "}":
                break
            j += 1
        if j >= n:
            raise DdxSyntaxError("f-string: expecting '}'", start=base + i)
        end = expr_end if expr_end is not None else j
        source = body[i + 1:end]
        fmt = body[spec:j] if spec is not None else ""
        debug = source.rstrip().endswith("=") and not source.rstrip().endswith(("==", "!=",
                                                                                  "<=", ">="))
        if debug:
            parts.append(source)
            source = source.rstrip()[:-1]
            conv = conv or ("r" if not fmt else None)
        if not source.strip():
            raise DdxSyntaxError("f-string: empty expression not allowed", start=base + i)
        parts.append((source, base + i + 1, conv, fmt))
        i = j + 1
    if literal:
        parts.append(unquote(quote + "".join(literal) + quote))
    return tuple(parts)
