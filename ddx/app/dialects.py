"""The seed chapter's other listings, run as written: its Scala-like form (``val``/``var``,
``println``, ``//`` comments, ``catch (e: RuntimeError) =>``, ``s"..."``) and its Java form
(JavaCPP's ``Tensor x = tensor(new DoublePointer(2.0), requires_grad(true));``,
``System.out.printf``, ``try { } catch (RuntimeException e) { }``, ``new TensorOptions()...``)
are rewritten line by line into the REPL's Python before parsing. Lines keep their numbers, so
an error points at the line the user wrote. A Python script is never rewritten.

Assumed where JavaCPP's behaviour is not shown by the chapter: ``new DoublePointer(v)`` of one
value is a 0-d tensor (the Scala listing's ``torch.tensor(2.0)``), of several a 1-d tensor;
``%s`` of a tensor prints PyTorch's repr; ``%b`` prints Java's ``true``/``false``."""

from __future__ import annotations

import re

PYTHON, SCALA, JAVA = "python", "scala", "java"
_EXTENSIONS = {".py": PYTHON, ".scala": SCALA, ".sc": SCALA, ".java": JAVA}

_SCALA_LINE = re.compile(r"^\s*(?:val|var)\s+\w+\s*(?::\s*\w+\s*)?=|^\s*println\s*\(|"
                         r"^\s*catch\s*\(|^\s*import\s+[\w.]+\.\*\s*$")
_JAVA_LINE = re.compile(r"System\.out\.|new\s+\w+Pointer\s*\(|^\s*(?:Tensor|TensorOptions|"
                        r"Scalar|double|boolean|long|int|float|String)\s+\w+\s*=|;\s*(?://.*)?$"
                        r"|^\s*}\s*catch\s*\(|^\s*try\s*\{")


MIXED = "mixed"


def detect(text: str, filename: str | None = None) -> str:
    """The dialect: by the file's extension, else by the text itself (Java where a line is
    Java's, Scala where one is Scala's, mixed where both are: a Scala listing pasted with its
    Java twin; else Python)."""
    if filename:
        for ext, dialect in _EXTENSIONS.items():
            if filename.endswith(ext):
                return dialect
    code = [line for line in text.split("\n") if line.strip() and
            not line.lstrip().startswith(("#", "//"))]
    java = any(_JAVA_LINE.search(_strip_comment(line)) for line in code)
    scala = any(_SCALA_LINE.search(line) for line in code)
    return MIXED if java and scala else JAVA if java else SCALA if scala else PYTHON


def to_python(text: str, dialect: str) -> str:
    if dialect == SCALA:
        return "\n".join(_scala_line(line) for line in text.split("\n"))
    if dialect in (JAVA, MIXED):
        return _java(text, mixed=True)  # (a Java file pasted with its Scala twin too)
    return text


# --- shared pieces ------------------------------------------------------------------------
def _split_code(line: str) -> tuple[str, str]:
    """A line's code and its ``//`` comment (outside string literals)."""
    quote = None
    i = 0
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif line.startswith("//", i):
            return line[:i].rstrip(), line[i + 2:]
        elif c == "#":
            return line[:i].rstrip(), line[i + 1:]
        i += 1
    return line, ""


def _strip_comment(line: str) -> str:
    return _split_code(line)[0]


def _with_comment(code: str, comment: str, indent: str = "") -> str:
    if not comment:
        return code
    return f"{code}  #{comment}" if code.strip() else f"{indent}#{comment}"


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def _interpolate(code: str) -> str:
    """Scala's s"...$x ${expr}..." as an f-string."""
    def fix(m):
        body = m.group(2)
        body = re.sub(r"\$\{([^}]*)\}", r"{\1}", body)
        body = re.sub(r"\$([A-Za-z_]\w*)", r"{\1}", body)
        return "f" + m.group(1) + body + m.group(1)
    return re.sub(r"\bs(\")((?:[^\"\\]|\\.)*)\"", fix, code)


# --- Scala --------------------------------------------------------------------------------
def _scala_line(line: str) -> str:
    code, comment = _split_code(line)
    if not code.strip():
        return _with_comment("", comment, _indent(line))
    code = re.sub(r"^(\s*)import\s+([\w.]+)\.(?:\*|_)\s*$", r"\1import \2", code)
    code = re.sub(r"^(\s*)(?:val|var)\s+(\w+)\s*(?::\s*[\w\[\]]+\s*)?=", r"\1\2 =", code)
    code = re.sub(r"\bprintln\s*\(", "print(", code)
    code = re.sub(r"^(\s*)catch\s*\(\s*(\w+)\s*:\s*([\w.]+)\s*\)\s*=>\s*$",
                  r"\1except \3 as \2:", code)
    code = _interpolate(code)
    return _with_comment(code, comment)


# --- Java ---------------------------------------------------------------------------------
_TYPES = r"(?:final\s+)?(?:Tensor|TensorOptions|Scalar|double|boolean|long|int|float|String|var)"
_SCALAR_TYPES = {"Long": "torch.int64", "Double": "torch.float64", "Float": "torch.float32",
                 "Int": "torch.int32", "Bool": "torch.bool"}


def _looks_java(line: str) -> bool:
    code = _strip_comment(line).strip()
    return bool(code) and (code.endswith((";", "{", "}")) or code.startswith(("}", ".")) or
                           bool(_JAVA_LINE.search(code)) or bool(re.search(r"\bnew\s+\w+\(",
                                                                          code)))


def _java(text: str, *, mixed: bool = False) -> str:
    """Java's statements as Python's, re-indented by their braces; in a mixed paste the
    lines that are not Java's go through the Scala rules (a no-op on Python's)."""
    lines = text.split("\n")
    out: list[str] = []
    depth = 0
    options: set[str] = set()
    i = 0
    while i < len(lines):
        if mixed and not _looks_java(lines[i]) and (
                _SCALA_LINE.search(lines[i]) or lines[i].lstrip().startswith("//")):
            out.append(_scala_line(lines[i]))
            i += 1
            continue
        if mixed and not _looks_java(lines[i]):
            out.append(lines[i])
            i += 1
            continue
        code, comment = _split_code(lines[i])
        joined = 1
        # a builder chain continued on the next lines (.dtype(...) ...): one statement
        while i + joined < len(lines) and _split_code(lines[i + joined])[0].lstrip() \
                .startswith(".") and not code.rstrip().endswith(";"):
            code = code.rstrip() + _split_code(lines[i + joined])[0].strip()
            joined += 1
        stripped = code.strip()
        if re.match(r"(?:import|package)\s", stripped) or re.match(
                r"(?:public|private|static|class)\b.*\{$", stripped):
            out.append("")  # a Java file's frame: import lines, class and main headers
            depth += stripped.endswith("{") and 0
        else:
            depth, text_line = _java_statement(stripped, depth, options)
            out.append(_with_comment(text_line, comment, "    " * depth))
        out.extend([""] * (joined - 1))
        i += joined
    return "\n".join(out)


def _java_statement(code: str, depth: int, options: set) -> tuple[int, str]:
    indent = "    "
    if not code:
        return depth, ""
    closes = code.startswith("}")
    if closes:
        depth = max(depth - 1, 0)
        code = code[1:].strip()
        if not code:
            return depth, ""
    opens = code.endswith("{")
    if opens:
        code = code[:-1].rstrip()
    m = re.match(r"catch\s*\(\s*(\w+)\s+(\w+)\s*\)$", code)
    if m:
        kind = {"RuntimeException": "RuntimeError", "Exception": "Exception",
                "IllegalArgumentException": "ValueError"}.get(m.group(1), m.group(1))
        code = f"except {kind} as {m.group(2)}:"
    elif code == "try":
        code = "try:"
    elif code in ("else", "finally"):
        code = code + ":"
    elif re.match(r"(?:if|while)\s*\(", code):
        code = re.sub(r"^(if|while)\s*\((.*)\)$", r"\1 \2:", code)
    else:
        code = _java_expression(code.rstrip(";").rstrip(), options)
    line = indent * depth + code
    if opens:
        depth += 1
    return depth, line


def _java_expression(code: str, options: set) -> str:
    m = re.match(rf"{_TYPES}\s+(\w+)\s*=\s*(.*)$", code)
    if m:
        name, value = m.group(1), m.group(2)
        if "new TensorOptions()" in value:
            options.add(name)
        code = f"{name} = {value}"
    code = re.sub(r"\bnew\s+(?:Double|Float)Pointer\s*\(([^()]*)\)",
                  lambda mm: _pointer(mm.group(1)), code)
    code = re.sub(r"\bnew\s+(?:Long|Int)Pointer\s*\(([^()]*)\)",
                  lambda mm: _pointer(re.sub(r"(\d)[lL]\b", r"\1", mm.group(1)), ints=True),
                  code)
    code = re.sub(r"\bnew\s+Scalar\s*\(([^()]*)\)", r"\1", code)
    code = re.sub(r"\bnew\s+\w+Optional\s*\(\s*\)", "None", code)
    code = re.sub(r"\bnew\s+(?:Bool|ScalarType|Layout|Device|MemoryFormat)Optional\s*\(([^()]*"
                  r"(?:\([^()]*\))?[^()]*)\)", r"\1", code)
    code = re.sub(r"\bnew\s+Device\s*\(\s*DeviceType\.CPU\s*\)", "torch.device('cpu')", code)
    code = re.sub(r"\bScalarType\.(\w+)", lambda mm: _SCALAR_TYPES.get(mm.group(1),
                                                                      "torch.float32"), code)
    code = re.sub(r"\b(?:Layout|MemoryFormat|DeviceType)\.(\w+)", r"'\1'", code)
    code = re.sub(r"\bnew\s+TensorOptions\s*\(\s*\)", "TensorOptions()", code)
    code = re.sub(r"(?<![\w.])requires_grad\s*\(\s*(true|false)\s*\)(?=\s*[,)])",
                  lambda mm: f"requires_grad={mm.group(1).capitalize()}", code)
    code = re.sub(r"\.(requires_grad|grad|is_leaf|grad_fn|shape)\s*\(\s*\)", r".\1", code)
    code = re.sub(r"\b(\w+)\.getMessage\s*\(\s*\)", r"str(\1)", code)
    code = re.sub(r"\bSystem\.out\.printf\s*\(", "printf(", code)
    code = re.sub(r"\bSystem\.out\.println\s*\(", "print(", code)
    code = re.sub(r"\bSystem\.out\.print\s*\((.*)\)$", r"print(\1, end='')", code)
    for name in options:  # tensor(data, options): the options as keyword arguments
        code = re.sub(rf",\s*{name}\s*\)", f", **{name})", code)
    code = re.sub(r"\btrue\b", "True", code)
    code = re.sub(r"\bfalse\b", "False", code)
    return _interpolate(code)


def _pointer(items: str, ints: bool = False) -> str:
    values = [v.strip() for v in items.split(",") if v.strip()]
    return values[0] if len(values) == 1 else "[" + ", ".join(values) + "]"
