"""ddx/out/torchfmt.py prints tensors exactly as PyTorch 2.13's repr does: every test builds the
same values in torch and compares repr(t) with tensor_repr(...) character for character."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import torch_or_skip
from hypothesis import given, settings
from hypothesis import strategies as st

from ddx.out.torchfmt import (
    DEFAULT_OPTIONS,
    PrintOptions,
    dtype_repr,
    set_printoptions,
    size_repr,
    tensor_repr,
)

NAN, INF = math.nan, math.inf


def _torch_dtype(torch, name: str):
    return getattr(torch, name)


def _compare(values, dtype="float32", *, requires_grad=False, op=None, options=None):
    """repr of torch.tensor(values, dtype) (made to require grad, then passed through op, if
    asked) under torch.set_printoptions(**options), against torchfmt's text for the same
    numbers. The default dtype is float32 in both, as in the REPL."""
    torch = torch_or_skip()
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)
    try:
        t = torch.tensor(values, dtype=_torch_dtype(torch, dtype))
        if requires_grad:
            t.requires_grad_(True)
        grad_fn = None
        if op is not None:
            t = op(t)
            grad_fn = type(t.grad_fn).__name__
        opts = DEFAULT_OPTIONS
        if options is not None:
            torch.set_printoptions(**options)
            opts = set_printoptions(DEFAULT_OPTIONS, **options)
        theirs = repr(t)
        ours = tensor_repr(t.detach().numpy(), requires_grad=t.requires_grad, grad_fn=grad_fn,
                           is_leaf=t.is_leaf, default=np.float32, options=opts)
    finally:
        torch.set_printoptions(profile="default")
        torch.set_default_dtype(before)
    assert ours == theirs
    return ours


@pytest.mark.parametrize("values", [
    -0.0, [-0.0], [0.0, -0.0], [1.0, -0.0, 2.5], [-0.0, -1.5],
    NAN, INF, -INF, [NAN], [NAN, 1.0], [INF, -INF, 1.5], [NAN, INF, -0.0], [NAN, 0.5, 1e-7],
    [1e10, 1.0], [1e-5, 1.0], [1e-9], [123456789.0], [1e8], [1.5e8], [1e8, 1.5],
    [1e-4, 1.0], [1000.0, 1.0], [1001.0, 1.0], [0.5, 1e-3], [12345.678, 0.001], [-3e38, 3e38],
    3.14159, 2.0, 1e-12, 1e20, 0.0, -7.0, [1.0, 2.0, 3.0], [0.1, 0.2, 0.3], [-1.0, 10.0, -100.0],
    [[1.0, 2.5], [-3.25, 4.0]], [[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]],
    [i * 0.37 for i in range(30)], [i * 1234.567 for i in range(30)], [i * 1e-6 for i in range(25)],
    [[float(i * j) for j in range(40)] for i in range(40)],
    [], [[]], [[], []],
], ids=repr)
def test_float32_values_print_as_pytorch_prints_them(values):
    _compare(values)


@pytest.mark.parametrize("values, dtype", [
    ([1.0, 2.0, 3.0], "float64"), ([1.5, 2.0], "float64"), (2.5, "float64"), ([1e-9, 1.0], "float64"),
    ([0.1, 0.2], "float16"), ([65504.0, 1.0], "float16"), ([1, 2, 3], "int64"), (7, "int64"),
    ([1, -2, 300], "int32"), ([-(2 ** 40), 5], "int64"), ([0, 255], "uint8"), ([1, -1], "int8"),
    ([1, 2], "int16"), ([True, False], "bool"), (True, "bool"), ([[True], [False]], "bool"),
    ([], "int64"), ([], "float64"),
], ids=repr)
def test_other_dtypes_show_dtype_unless_int64_bool_or_default(values, dtype):
    _compare(values, dtype)


@pytest.mark.parametrize("shape", [(1001,), (2000,), (10, 10, 11), (2, 3, 200), (1200, 1), (1, 1200),
                                   (40, 40), (4, 300)])
@pytest.mark.parametrize("dtype", ["float32", "int64", "float64"])
def test_more_than_a_thousand_elements_are_summarised(shape, dtype):
    values = (np.arange(int(np.prod(shape))).reshape(shape) * (0.5 if dtype != "int64" else 3))
    text = _compare(values.tolist(), dtype)
    assert "..." in text


@pytest.mark.parametrize("n", [7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 24, 60])
@pytest.mark.parametrize("op", [None, lambda t: t * 2, lambda t: t.exp(),
                                lambda t: t.to(__import__("torch").float64) * 3],
                         ids=["leaf", "MulBackward0", "ExpBackward0", "dtype+grad_fn"])
def test_long_rows_wrap_at_80_and_suffixes_go_on_their_own_line_past_it(n, op):
    _compare([i * 1.25 - 3.0 for i in range(n)], requires_grad=True, op=op)
    _compare([[i * 0.123 for i in range(n)]] * 2, requires_grad=True, op=op)


def test_a_suffix_past_the_line_width_starts_a_new_line():
    text = _compare([1.0] * 14, requires_grad=True)
    assert text.endswith(",\n       requires_grad=True)")


@pytest.mark.parametrize("options", [
    {"precision": 2}, {"precision": 0}, {"precision": 8}, {"sci_mode": True}, {"sci_mode": False},
    {"linewidth": 40}, {"linewidth": 120}, {"linewidth": 10}, {"threshold": 5},
    {"threshold": 5, "edgeitems": 1}, {"threshold": 4, "edgeitems": 0},
    {"edgeitems": 2, "threshold": 10}, {"profile": "short"}, {"profile": "full"},
    {"profile": "short", "precision": 6}, {"precision": 3, "sci_mode": True, "linewidth": 60},
])
@pytest.mark.parametrize("values", [
    [i * 0.37 for i in range(30)], [1e-6, 1.0, 1e6], [1.0, 2.0, 30000.0], [NAN, -0.0, 2.5],
    [[0.123456789, -2.0], [3.0, 4e-3]], [1, 2, 3], 3.14159265, list(range(1500)),
], ids=lambda v: repr(v)[:30])
def test_set_printoptions_changes_the_repr_as_in_pytorch(options, values):
    _compare(values, "int64" if values == [1, 2, 3] else "float32", options=options)
    if isinstance(values, list) and values and not isinstance(values[0], list):
        _compare(values, requires_grad=True, options=options, op=lambda t: t * 2)


def test_set_printoptions_follows_pytorchs_rules_for_what_it_keeps():
    torch = torch_or_skip()
    steps = [{"precision": 2, "sci_mode": True}, {"linewidth": 50}, {"profile": "short"},
             {"profile": "nonsense", "edgeitems": 5}, {"profile": "full"}, {"threshold": 7},
             {"profile": "default"}]
    opts = DEFAULT_OPTIONS
    try:
        for step in steps:
            torch.set_printoptions(**step)
            opts = set_printoptions(opts, **step)
            theirs = torch._tensor_str.get_printoptions()
            assert opts.as_dict() == theirs
    finally:
        torch.set_printoptions(profile="default")
    assert opts == PrintOptions()


finite32 = st.floats(width=32, allow_nan=False, allow_infinity=False)
anyfloat32 = st.one_of(finite32, st.just(NAN), st.just(INF), st.just(-INF), st.just(-0.0))


@settings(max_examples=300, deadline=None)
@given(st.one_of(
    st.lists(anyfloat32, max_size=30),
    st.lists(st.lists(finite32, min_size=3, max_size=3), min_size=1, max_size=6),
    st.lists(st.floats(-1e4, 1e4, width=32).map(round).map(float), min_size=1, max_size=20),
    anyfloat32),
    st.integers(0, 2))
def test_any_float32_values_print_as_in_pytorch(values, grad):
    op = {0: None, 1: None, 2: lambda t: t * 1}[grad]
    _compare(values, requires_grad=grad > 0, op=op)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(-(2 ** 62), 2 ** 62), max_size=40))
def test_any_integers_print_as_in_pytorch(values):
    _compare(values, "int64")
    _compare([v % 100 for v in values], "int32")


def test_dtype_and_size_reprs():
    torch = torch_or_skip()
    for name in ["float32", "float64", "float16", "int64", "int32", "bool", "uint8"]:
        assert dtype_repr(np.dtype(name)) == repr(getattr(torch, name))
    for shape in [(), (3,), (2, 3), (1, 0, 4)]:
        assert size_repr(shape) == repr(torch.Size(shape))


@pytest.mark.parametrize("setting, tensor", [
    ("precision=2", "torch.tensor([1.12345, -2.5])"),
    ("sci_mode=True", "torch.tensor([1.5, 2.0], requires_grad=True) * 2"),
    ("threshold=5", "torch.arange(10)"),
    ("threshold=5, edgeitems=1", "torch.arange(10.)"),
    ("linewidth=30", "torch.linspace(0, 1, 9)"),
    ("profile='short'", "torch.tensor([[0.123456, 2.0], [3.0, 4.0]])"),
    ("2, sci_mode=False", "torch.tensor([1e-6, 1.0])"),
])
def test_torch_set_printoptions_in_a_session_prints_as_pytorch(setting, tensor):
    torch = torch_or_skip()
    from conftest import session_run

    kw = {"precision=2": {"precision": 2}, "sci_mode=True": {"sci_mode": True},
          "threshold=5": {"threshold": 5}, "threshold=5, edgeitems=1": {"threshold": 5,
                                                                        "edgeitems": 1},
          "linewidth=30": {"linewidth": 30}, "profile='short'": {"profile": "short"},
          "2, sci_mode=False": {"precision": 2, "sci_mode": False}}[setting]
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)
    try:
        made = {"torch.tensor([1.12345, -2.5])": lambda: torch.tensor([1.12345, -2.5]),
                "torch.tensor([1.5, 2.0], requires_grad=True) * 2":
                    lambda: torch.tensor([1.5, 2.0], requires_grad=True) * 2,
                "torch.arange(10)": lambda: torch.arange(10),
                "torch.arange(10.)": lambda: torch.arange(10.),
                "torch.linspace(0, 1, 9)": lambda: torch.linspace(0, 1, 9),
                "torch.tensor([[0.123456, 2.0], [3.0, 4.0]])":
                    lambda: torch.tensor([[0.123456, 2.0], [3.0, 4.0]]),
                "torch.tensor([1e-6, 1.0])": lambda: torch.tensor([1e-6, 1.0])}[tensor]()
        torch.set_printoptions(**kw)
        expected = repr(made).splitlines()
        options = torch._tensor_str.get_printoptions()
    finally:
        torch.set_printoptions(profile="default")
        torch.set_default_dtype(before)
    out = session_run(f"import torch\ntorch.set_printoptions({setting})\nprint({tensor})\n"
                      "print(torch.get_printoptions())\ntorch.set_printoptions(profile='default')\n"
                      f"print({tensor})")
    assert out[:len(expected)] == expected
    assert out[len(expected)] == str(options)
    assert out[len(expected) + 1:] == session_run(f"import torch\nprint({tensor})")


def test_print_options_belong_to_their_session_and_wrong_arguments_are_pythons_errors():
    from conftest import session_run

    assert session_run("import torch\ntorch.set_printoptions(precision=1)\n"
                       "print(torch.tensor([1.25]))") == ["tensor([1.2])"]
    assert session_run("import torch\nprint(torch.tensor([1.25]))") == ["tensor([1.2500])"]
    assert session_run("import torch\ntorch.set_printoptions(digits=2)") == [
        "error: set_printoptions() got an unexpected keyword argument 'digits'"]
    assert session_run("import torch\ntorch.set_printoptions(precision=2.5)") == [
        "error: set_printoptions(): precision must be an integer"]
