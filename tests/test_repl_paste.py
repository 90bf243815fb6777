"""The REPL keeps up with pasting and typing Python (issue 15, item 5): continuation that is
linear in the paste, auto-indent after a ':' line, Ctrl-C that stops a running statement and
undoes it, completion after a dot by what the object has, and `ddx run -i`."""

from __future__ import annotations

import os
import sys

import pytest
from test_repl_terminal import PROMPT, repl, typed  # noqa: F401 - the fixture

from ddx.app.repl import members_of
from ddx.app.session import Continuation, Session, needs_more

pexpect = pytest.importorskip("pexpect") if not os.environ.get("CI") else __import__("pexpect")


def test_continuation_follows_python():
    assert needs_more(["def f(x):"]) and needs_more(["def f(x):", "    return x"])
    assert not needs_more(["x = 1"]) and needs_more(["y = (1 +"])
    assert needs_more(["@torch.no_grad()"])
    state = Continuation()
    state.add("for i in range(3):")
    assert state.indent() == "    "
    state.add("    if i:")
    assert state.indent() == "        "


def test_continuation_is_linear_in_the_pasted_lines():
    """Each line is looked at once: the state after n lines is the state of its last line."""
    state = Continuation()
    calls = 0
    for _ in range(20_000):
        state.add("x = [1,")
        state.add(" 2]")
        calls += 2
    assert state.depth == 0 and state.count == calls


def test_completion_knows_what_follows_a_dot():
    session = Session(lambda t: None, lambda t: None)
    session.run_script("x = tensor([1.], requires_grad=True)\ny = x * 2\nitems = []\n"
                       "import torch.nn.functional as F")
    assert {"grad", "grad_fn", "backward(", "sum(", "T"} <= set(members_of(session, "x"))
    assert members_of(session, "y.grad_fn") == ["next_functions", "name()", "register_hook(",
                                                "register_prehook("]
    assert "append(" in members_of(session, "items")
    assert {"relu(", "softplus("} <= set(members_of(session, "F"))
    assert "sin(" not in members_of(session, "F")
    assert {"nn", "sin(", "no_grad"} <= set(members_of(session, "torch"))
    assert "functional" in members_of(session, "torch.nn")
    assert members_of(session, "nothing") == []


def test_a_block_is_auto_indented_and_ends_with_a_blank_line(repl):  # noqa: F811
    child, _ = repl
    child.sendline("def double(v):")
    child.expect_exact("...")
    child.sendline("return v * 2")  # (the prompt already holds the indentation)
    child.expect_exact("...")
    typed(child, "")
    typed(child, "double(21)", "42")


def test_ctrl_c_stops_a_running_statement_and_undoes_it(repl):  # noqa: F811
    child, _ = repl
    typed(child, "n = 0")
    child.sendline("while True: n += 1")
    child.expect_exact("...")
    child.sendline("")
    import time

    time.sleep(1.0)
    child.sendcontrol("c")
    child.expect_exact("KeyboardInterrupt")
    child.expect(PROMPT)
    typed(child, "n", "0")  # the statement's changes are undone


def test_run_i_runs_a_file_and_stays(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("import torch\nw = torch.tensor(3.0, requires_grad=True)\nprint('ran')\n")
    env = dict(os.environ, HOME=str(tmp_path), XDG_STATE_HOME=str(tmp_path / "state"),
               TERM="xterm", NO_COLOR="1", PROMPT_TOOLKIT_NO_CPR="1")
    child = pexpect.spawn(sys.executable, ["-m", "ddx", "run", "-i", str(script)], env=env,
                          encoding="utf-8", timeout=20, dimensions=(40, 120))
    try:
        child.expect_exact("ran")
        child.expect(PROMPT)
        typed(child, "w * 2", "tensor(6., grad_fn=<MulBackward0>)")
        child.sendcontrol("d")
        child.expect(pexpect.EOF)
    finally:
        if child.isalive():
            child.terminate(force=True)
