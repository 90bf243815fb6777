"""Text for a terminal: control, escape and bidi characters from any input shown escaped."""

from __future__ import annotations

import re
import unicodedata

# C0 controls but tab and newline, DEL and C1 (ESC, BEL, CR, the 8-bit CSI ...); zero-width and
# bidi controls (LRM/RLM/ALM, LRE..RLO, LRI..PDI), line/paragraph separators, BOM, interlinear
# annotations, tag characters; and lone surrogates (undecodable bytes of a command line), which
# no terminal encoding can write.
UNSAFE = ("\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f"
          "\ufeff\ufff9-\ufffb\ud800-\udfff\U000e0000-\U000e007f")
_patterns: dict[bool, re.Pattern] = {}  # compiled when first needed (a few ms: not at start-up)


def _pattern(newlines: bool) -> re.Pattern:
    pattern = _patterns.get(newlines)
    if pattern is None:
        pattern = _patterns[newlines] = re.compile(f"[{UNSAFE}]" if newlines else
                                                   f"[\n{UNSAFE}]")
    return pattern


def _escape(m: re.Match) -> str:
    code = ord(m.group())
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def safe_text(text: str, *, newlines: bool = True) -> str:
    """``text`` with every unsafe character written as ``\\x1b``, ``\\u202e`` ...; tabs and
    (unless ``newlines=False``) newlines are kept. Plain text comes back as it is."""
    if text.isprintable():  # (the usual case, checked in C: no control of any kind)
        return text
    pattern = _pattern(newlines)
    if pattern.search(text) is None:
        return text
    return pattern.sub(_escape, text)


def pad_under(text: str) -> str:
    """Blanks as wide on a terminal as ``safe_text(text)``, tabs kept: where a caret goes."""
    out = []
    for ch in text:
        if ch == "\t":
            out.append("\t")
        elif not ch.isprintable() and _pattern(False).match(ch):
            out.append(" " * len(safe_text(ch, newlines=False)))
        elif unicodedata.combining(ch):
            continue
        else:
            out.append("  " if unicodedata.east_asian_width(ch) in "WF" else " ")
    return "".join(out)
