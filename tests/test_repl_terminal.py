"""The real REPL driven through a pseudo-terminal, as a person would use it."""

from __future__ import annotations

import os
import sys

import pytest

pexpect = pytest.importorskip("pexpect") if not os.environ.get("CI") else __import__("pexpect")

PROMPT = r">>>"


@pytest.fixture
def repl(tmp_path):
    env = dict(os.environ, HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path / "state"),
               TERM="xterm", NO_COLOR="1", PROMPT_TOOLKIT_NO_CPR="1")
    child = pexpect.spawn(sys.executable, ["-m", "ddx", "repl"], env=env, encoding="utf-8",
                          timeout=20, dimensions=(40, 120))
    child.expect(PROMPT)
    yield child, tmp_path
    if child.isalive():
        child.terminate(force=True)


def typed(child, line: str, *expected: str) -> None:
    """Type a line and wait for each expected text in order, then for the next prompt."""
    child.sendline(line)
    for text in expected:
        child.expect_exact(text)
    child.expect(PROMPT)


def test_statement_error_history_completion_and_quit(repl):
    child, home = repl
    typed(child, "w = tensor(3.0, requires_grad=true)")
    typed(child, "w * 2", "tensor(6., grad_fn=<MulBackward0>)")
    typed(child, "undefined_name + 1", "error: unknown name 'undefined_name'")
    typed(child, "w", "tensor(3., requires_grad=True)")  # the session goes on, state intact
    # history: arrow up three times recalls `w * 2`
    child.send("\x1b[A")
    child.send("\x1b[A")
    child.send("\x1b[A")
    typed(child, "", "tensor(6., grad_fn=<MulBackward0>)")
    # completion: `ones_l<TAB>` completes to `ones_like(`
    child.send("ones_l")
    child.send("\t")
    typed(child, "w)", "tensor(1.)")
    typed(child, ":vars", "requires_grad", "float32")  # (the REPL default dtype: PyTorch's)
    child.sendline(":quit")
    child.expect(pexpect.EOF)
    assert "w * 2" in (home / "state" / "ddx" / "history").read_text()


def test_multiline_block_ctrl_c_and_ctrl_d(repl):
    child, _ = repl
    typed(child, "w = tensor(2.0, requires_grad=true)")
    child.sendline("with no_grad:")
    child.expect_exact("...")
    child.sendline("    a = w * 2")
    child.expect_exact("...")
    typed(child, "")
    typed(child, "a.requires_grad", "False")
    child.send("this line is abandoned")
    child.sendcontrol("c")
    child.expect(PROMPT)
    typed(child, "b = w * w")
    typed(child, "b.backward()")
    typed(child, ":graph b", "MulBackward0", "AccumulateGrad")
    child.sendcontrol("d")
    child.expect(pexpect.EOF)
