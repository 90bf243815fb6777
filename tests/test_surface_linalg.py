"""Linear algebra against PyTorch 2.13: matmul/@ at every rank (value, gradients and the whole
graph of grad_fn names PyTorch records), mm mv bmm dot outer, transposes, trace diag, det inv
solve cholesky, through each spelling, in float64 and float32, and PyTorch's error texts."""

from __future__ import annotations

import re
import zlib

import numpy as np
import pytest
from conftest import session_run, torch_or_skip

import ddx
from ddx.errors import DdxError

TOL = {"float64": dict(rtol=1e-10, atol=1e-12), "float32": dict(rtol=2e-5, atol=2e-5)}


def ddx_graph(fn) -> tuple:
    """A grad_fn and everything behind it, as nested (name, inputs) pairs."""
    if fn is None:
        return None
    name = getattr(fn, "name", None)
    if name == "AccumulateGrad":
        return "AccumulateGrad"
    return (name, tuple(ddx_graph(f) for f, _ in fn.next_functions))


def torch_graph(fn) -> tuple:
    if fn is None:
        return None
    if fn.name() == "torch::autograd::AccumulateGrad":
        return "AccumulateGrad"
    return (fn.name(), tuple(torch_graph(f) for f, _ in fn.next_functions))


def values_for(shapes: dict, seed: str, *, spd: tuple = ()) -> dict:
    rng = np.random.default_rng(zlib.crc32(seed.encode()))
    out = {}
    for var, shape in shapes.items():
        v = rng.uniform(-1.5, 1.5, shape)
        if var in spd:  # a symmetric positive definite matrix
            v = v @ np.swapaxes(v, -1, -2) + np.eye(shape[-1])
        out[var] = v
    return out


def agree(source: str, torch_fn, values: dict, dtype: str = "float64", *, no_grad=(),
          graph: bool = True):
    """ddx's value, gradients and grad_fn graph for ``source`` equal PyTorch's for
    ``torch_fn`` (a function of the tensors, in the order of ``values``)."""
    torch = torch_or_skip()
    g = ddx.trace(source, dtype=dtype, no_grad=list(no_grad) or None, **values)
    tdt = {"float64": torch.float64, "float32": torch.float32}[dtype]
    ts = [torch.tensor(np.asarray(v), dtype=tdt, requires_grad=k not in no_grad)
          for k, v in values.items()]
    torch.set_default_dtype(tdt)  # (PyTorch's float32 backward of det makes float64 eyes else)
    try:
        out = torch_fn(*ts)
        weights = np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)) \
            if out.numel() > 1 else np.ones(tuple(out.shape))
        out.backward(torch.tensor(weights, dtype=tdt), retain_graph=True)
    finally:
        torch.set_default_dtype(torch.float64)
    np.testing.assert_allclose(np.asarray(g.value, dtype=np.float64),
                               out.detach().double().numpy(), **TOL[dtype], err_msg=source)
    assert np.asarray(g.value).dtype == np.dtype(dtype), source
    if graph:
        assert ddx_graph(g.output.grad_fn) == torch_graph(out.grad_fn), source
    g.backward(weights)
    for k, t in zip(values, ts):
        if k in no_grad:
            continue
        if t.grad is None:  # (not used: expand_as's other)
            assert g.grads[k] is None or not np.any(g.grads[k]), (source, k)
            continue
        np.testing.assert_allclose(np.asarray(g.grads[k], dtype=np.float64),
                                   t.grad.double().numpy(), **TOL[dtype],
                                   err_msg=f"{source}: d/d{k}")
    return g


# every rank pair PyTorch's matmul takes, and which operand needs no gradient (it changes what
# PyTorch records: a batch is folded into mm when the other operand requires grad)
MATMUL = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4)), ((5, 2, 3), (3,)),
          ((3,), (5, 3, 2)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)),
          ((5, 1, 2, 3), (4, 3, 2)), ((2, 2, 3), (1, 3, 4)), ((1, 2, 3), (2, 3, 4)),
          ((1, 2, 3), (3, 4)), ((2, 1, 2, 3), (3,)), ((3,), (2, 2, 3, 2)), ((2, 4, 3), (3, 2)),
          ((0, 2, 3), (3, 4))]


@pytest.mark.parametrize("no_grad", [(), ("x",), ("y",)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("shapes", MATMUL, ids=str)
def test_matmul_records_what_pytorch_records(shapes, dtype, no_grad):
    values = values_for({"x": shapes[0], "y": shapes[1]}, str(shapes))
    for source in ("x @ y", "matmul(x, y)", "torch.matmul(x, y)", "x.matmul(y)"):
        agree(source, lambda a, b: a @ b, values, dtype, no_grad=no_grad)


def test_matmul_of_transposed_operands_follows_pytorchs_strides():
    """A transposed operand is not contiguous: PyTorch copies (CloneBackward0) where it cannot
    view, and ddx records the same."""
    values = values_for({"x": (5, 3, 2), "y": (3, 4)}, "strides")
    agree("transpose(x, 1, 2) @ y", lambda a, b: a.transpose(1, 2) @ b, values, no_grad=("y",))
    other = values_for({"y": (3, 4), "z": (3, 5, 2)}, "strides2")
    agree("y.T @ transpose(z, 0, 1)", lambda b, c: b.T @ c.transpose(0, 1), other)
    agree("y.T @ transpose(z, 0, 1)", lambda b, c: b.T @ c.transpose(0, 1), other,
          no_grad=("y",))
    agree("x.mT @ x", lambda a: a.mT @ a, {"x": values["x"]})


@pytest.mark.parametrize("source, torch_src, shapes", [
    ("mm(x, y)", "torch.mm(x, y)", {"x": (2, 3), "y": (3, 4)}),
    ("x.mm(y)", "x.mm(y)", {"x": (2, 3), "y": (3, 4)}),
    ("torch.mv(x, y)", "torch.mv(x, y)", {"x": (2, 3), "y": (3,)}),
    ("x.mv(y)", "x.mv(y)", {"x": (2, 3), "y": (3,)}),
    ("dot(x, y)", "torch.dot(x, y)", {"x": (4,), "y": (4,)}),
    ("x.dot(y)", "x.dot(y)", {"x": (4,), "y": (4,)}),
    ("bmm(x, y)", "torch.bmm(x, y)", {"x": (3, 2, 4), "y": (3, 4, 2)}),
    ("torch.bmm(x, y)", "torch.bmm(x, y)", {"x": (3, 2, 4), "y": (3, 4, 2)}),
    ("x.bmm(y)", "x.bmm(y)", {"x": (3, 2, 4), "y": (3, 4, 2)}),
    ("outer(x, y)", "torch.outer(x, y)", {"x": (3,), "y": (2,)}),
    ("torch.ger(x, y)", "torch.ger(x, y)", {"x": (3,), "y": (2,)}),
    ("x.outer(y)", "x.outer(y)", {"x": (3,), "y": (2,)}),
    ("transpose(x, 0, 2)", "torch.transpose(x, 0, 2)", {"x": (2, 3, 4)}),
    ("x.transpose(-1, 0)", "x.transpose(-1, 0)", {"x": (2, 3, 4)}),
    ("torch.swapaxes(x, 0, 1)", "torch.swapaxes(x, 0, 1)", {"x": (2, 3)}),
    ("x.swapdims(0, 1)", "x.swapdims(0, 1)", {"x": (2, 3)}),
    ("transpose(x, 0, 0)", "torch.transpose(x, 0, 0)", {"x": (3,)}),
    ("x.T", "x.T", {"x": (2, 3)}),
    ("x.mT", "x.mT", {"x": (4, 2, 3)}),
    ("x.mH", "x.mH", {"x": (2, 3)}),
    ("x.H", "x.H", {"x": (2, 3)}),
    ("x.adjoint()", "x.adjoint()", {"x": (2, 3)}),
    ("t(x)", "torch.t(x)", {"x": (2, 3)}),
    ("x.t()", "x.t()", {"x": (3,)}),
    ("permute(x, 2, 0, 1)", "torch.permute(x, (2, 0, 1))", {"x": (2, 3, 4)}),
    ("x.permute(1, 0)", "x.permute(1, 0)", {"x": (2, 3)}),
    ("x.permute(-1, 0, 1)", "x.permute(-1, 0, 1)", {"x": (2, 3, 4)}),
    ("trace(x)", "torch.trace(x)", {"x": (3, 3)}),
    ("x.trace()", "x.trace()", {"x": (2, 3)}),
    ("diag(x)", "torch.diag(x)", {"x": (3,)}),
    ("diag(x, -1)", "torch.diag(x, -1)", {"x": (3,)}),
    ("x.diag(1)", "x.diag(1)", {"x": (3, 4)}),
    ("diagonal(x)", "torch.diagonal(x)", {"x": (3, 4)}),
    ("torch.linalg.diagonal(x, offset=1)", "torch.linalg.diagonal(x, offset=1)", {"x": (3, 3)}),
])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_products_and_transposes_match_pytorch(source, torch_src, shapes, dtype):
    torch = torch_or_skip()
    names = list(shapes)
    fn = eval(f"lambda {', '.join(names)}: {torch_src}", {"torch": torch})  # noqa: S307 - test
    agree(source, fn, values_for(shapes, source), dtype)


EINSUM = [("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ij->", [(2, 3)]),
          ("ij->j", [(2, 3)]), ("ij->ji", [(2, 3)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
          ("i,i->", [(3,), (3,)]), ("i,j->ij", [(3,), (2,)]), ("ij,j->i", [(2, 3), (3,)]),
          ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]), ("ij,ij->ij", [(2, 3), (2, 3)]),
          ("ij,kj->ik", [(2, 3), (4, 3)]), ("...ij,...jk->...ik", [(5, 2, 3), (5, 3, 4)]),
          ("...ij,jk", [(2, 2, 3), (3, 4)]), ("ij,i->j", [(2, 3), (1,)]), ("iij->j", [(2, 2, 3)]),
          ("i,ij,j->", [(3,), (3, 3), (3,)]), ("ij,k->jk", [(2, 3), (4,)]),
          (" ij , jk -> ki ", [(2, 3), (3, 4)])]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("equation, shapes", EINSUM, ids=[e for e, _ in EINSUM])
def test_einsum_matches_pytorch(equation, shapes, dtype):
    """The value, the gradients and the node PyTorch's einsum ends with (its inner nodes are
    PyTorch's own plan, not recorded here)."""
    torch = torch_or_skip()
    names = "abc"[:len(shapes)]
    values = values_for(dict(zip(names, shapes)), equation)
    fn = lambda *ts: torch.einsum(equation, *ts)  # noqa: E731
    for source in (f"einsum('{equation}', {', '.join(names)})",
                   f"torch.einsum(\"{equation}\", [{', '.join(names)}])"):
        g = agree(source, fn, values, dtype, graph=False)
        assert g.output.grad_fn.name == fn(*[torch.tensor(v, requires_grad=True)
                                             for v in values.values()]).grad_fn.name()


def test_einsum_hessian_matches_pytorch():
    torch = torch_or_skip()
    values = values_for({"a": (3,), "b": (3, 3)}, "einsum-hessian")
    h = ddx.trace("einsum('i,ij,j->', a, b, a)", **values).backward().hessian()
    assert h["check"]["ok"]
    theirs = torch.autograd.functional.hessian(lambda a, b: torch.einsum("i,ij,j->", a, b, a),
                                               tuple(torch.tensor(v) for v in values.values()))
    np.testing.assert_allclose(h["hessian"]["a"]["a"], theirs[0][0].numpy(), rtol=1e-10)
    np.testing.assert_allclose(h["hessian"]["a"]["b"], theirs[0][1].numpy(), rtol=1e-10)


@pytest.mark.parametrize("equation, shapes", [
    ("ij,jk->ik", [(2, 3), (4, 3)]), ("ij", [(3,)]), ("ij,jk", [(2, 3)]), ("i", [(3,), (3,)]),
    ("ij->k", [(2, 3)]), ("ij->ii", [(2, 3)]), ("i!", [(3,)]), ("...i,...i->...", [(2, 3), (4, 3)]),
])
def test_einsum_errors_in_pytorchs_words(equation, shapes):
    torch = torch_or_skip()
    names = "abc"[:len(shapes)]
    with pytest.raises(DdxError) as info:
        ddx.trace(f"einsum('{equation}', {', '.join(names)})",
                  **{n: np.ones(s) for n, s in zip(names, shapes)})
    with pytest.raises(RuntimeError) as theirs:
        torch.einsum(equation, *[torch.ones(s) for s in shapes])
    assert info.value.message == str(theirs.value)


@pytest.mark.parametrize("source, torch_src", [
    ("det(x)", "torch.det(x)"), ("torch.linalg.det(x)", "torch.linalg.det(x)"),
    ("x.det()", "x.det()"),
    ("inv(x)", "torch.linalg.inv(x)"), ("torch.linalg.inv(x)", "torch.linalg.inv(x)"),
    ("torch.inverse(x)", "torch.inverse(x)"), ("x.inverse()", "x.inverse()"),
    ("solve(x, y)", "torch.linalg.solve(x, y)"),
    ("torch.linalg.solve(x, y)", "torch.linalg.solve(x, y)"),
    ("solve(x, x @ y)", "torch.linalg.solve(x, x @ y)"),
    ("cholesky(x)", "torch.linalg.cholesky(x)"),
    ("torch.linalg.cholesky(x)", "torch.linalg.cholesky(x)"),
    ("torch.cholesky(x)", "torch.cholesky(x)"), ("x.cholesky()", "x.cholesky()"),
    ("det(x) * sum(inv(x) @ y)", "torch.det(x) * (torch.linalg.inv(x) @ y).sum()"),
])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_matrix_functions_match_pytorch(source, torch_src, dtype):
    torch = torch_or_skip()
    import warnings

    values = values_for({"x": (3, 3), "y": (3,)}, source, spd=("x",))
    if not re.search(r"\by\b", source):
        values.pop("y")
    fn = eval(f"lambda {', '.join(values)}: {torch_src}", {"torch": torch})  # noqa: S307
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch.cholesky is deprecated)
        agree(source, fn, values, dtype)


def test_batched_matrix_functions_match_pytorch():
    torch = torch_or_skip()
    values = values_for({"x": (2, 3, 3)}, "batched", spd=("x",))
    for name in ("det", "inv", "cholesky"):
        agree(f"torch.linalg.{name}(x)", getattr(torch.linalg, name), values)


def test_det_of_a_singular_matrix_has_pytorchs_gradient():
    """PyTorch's det backward is g det(A) times a (perturbed) inverse: 0 where det is 0."""
    torch = torch_or_skip()
    values = {"x": np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])}
    agree("det(x)", torch.linalg.det, values)


def test_matrix_functions_hessians_match_pytorch():
    torch = torch_or_skip()
    values = values_for({"x": (2, 2)}, "hess", spd=("x",))
    for source, fn in (("sum(inv(x))", lambda a: torch.linalg.inv(a).sum()),
                       ("det(x)", torch.linalg.det),
                       ("sum(cholesky(x))", lambda a: torch.linalg.cholesky(a).sum())):
        h = ddx.trace(source, **values).backward().hessian()
        assert h["check"]["ok"], source
        theirs = torch.autograd.functional.hessian(fn, torch.tensor(values["x"]))
        np.testing.assert_allclose(h["hessian"]["x"]["x"], theirs.numpy(), rtol=1e-8,
                                   atol=1e-10, err_msg=source)


@pytest.mark.parametrize("source, bindings, message", [
    ("x @ y", {"x": (2, 3), "y": (2, 3)}, "mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"),
    ("x @ y", {"x": (2, 3), "y": (2,)}, "size mismatch, got input (2), mat (2x3), vec (2)"),
    ("x @ y", {"x": (3,), "y": (2, 3)}, "mat1 and mat2 shapes cannot be multiplied (1x3 and 2x3)"),
    ("x @ y", {"x": (2,), "y": (3,)}, "inconsistent tensor size, expected tensor [2] and src [3] "
                                      "to have the same number of elements, but got 2 and 3 "
                                      "elements respectively"),
    ("x @ y", {"x": (4, 2, 3), "y": (4, 2, 3)}, "Expected size for first two dimensions of "
                                                "batch2 tensor to be: [4, 3] but got: [4, 2]."),
    ("x @ y", {"x": (4, 2, 3), "y": (5, 3, 2)}, "The size of tensor a (4) must match the size "
                                                "of tensor b (5) at non-singleton dimension 0"),
    ("x @ y", {"x": (4, 2, 3), "y": (2,)}, "size mismatch, got input (8), mat (8x3), vec (2)"),
    ("x @ y", {"x": (4, 2, 3), "y": (2, 3)}, "mat1 and mat2 shapes cannot be multiplied (8x3 "
                                             "and 2x3)"),
    ("mm(x, y)", {"x": (3,), "y": (2, 3)}, "self must be a matrix"),
    ("mv(x, y)", {"x": (3,), "y": (3,)}, "vector + matrix @ vector expected, got 1, 1, 1"),
    ("bmm(x, y)", {"x": (2, 3), "y": (2, 3)}, "batch1 must be a 3D tensor"),
    ("dot(x, y)", {"x": (2, 3), "y": (3,)}, "1D tensors expected, but got 2D and 1D tensors"),
    ("outer(x, y)", {"x": (2, 3), "y": (3,)}, "outer: Expected 1-D argument self, but got 2-D"),
    ("t(x)", {"x": (4, 2, 3)}, "t() expects a tensor with <= 2 dimensions, but self is 3D"),
    ("x.mT", {"x": (3,)}, "tensor.mT is only supported on matrices or batches of matrices. Got "
                          "1-D tensor."),
    ("transpose(x, 0, 2)", {"x": (2, 3)}, "Dimension out of range (expected to be in range of "
                                          "[-2, 1], but got 2)"),
    ("permute(x, 0)", {"x": (2, 3)}, "permute(sparse_coo): number of dimensions in the tensor "
                                     "input does not match the length of the desired ordering of "
                                     "dimensions i.e. input.dim() = 2 is not equal to len(dims) "
                                     "= 1"),
    ("permute(x, 0, 0)", {"x": (2, 3)}, "permute(): duplicate dims are not allowed."),
    ("trace(x)", {"x": (3,)}, "trace: expected a matrix, but got tensor with dim 1"),
    ("diag(x)", {"x": (2, 2, 2)}, "diag(): Supports 1D or 2D tensors. Got 3D"),
    ("det(x)", {"x": (2, 3)}, "linalg.det: A must be batches of square matrices, but they are 2 "
                              "by 3 matrices"),
    ("det(x)", {"x": (3,)}, "linalg.det: The input tensor A must have at least 2 dimensions."),
    ("inv(x)", {"x": (2, 3)}, "linalg.inv: A must be batches of square matrices, but they are 2 "
                              "by 3 matrices"),
    ("solve(x, y)", {"x": (2, 2), "y": (3,)}, "linalg.solve: Incompatible shapes of A and B for "
                                              "the equation AX = B (2x2 and 3x1)"),
    ("cholesky(x)", {"x": (2, 3)}, "linalg.cholesky: A must be batches of square matrices, but "
                                   "they are 2 by 3 matrices"),
])
def test_shape_errors_in_pytorchs_words(source, bindings, message):
    values = {k: np.ones(s) for k, s in bindings.items()}
    with pytest.raises(DdxError) as info:
        ddx.trace(source, **values)
    assert info.value.message == message
    torch = torch_or_skip()  # the same text from PyTorch itself
    ts = {k: torch.ones(s) for k, s in bindings.items()}
    torch_src = source.replace("x.mT", "x.mT").replace("det(", "torch.linalg.det(").replace(
        "inv(", "torch.linalg.inv(").replace("solve(", "torch.linalg.solve(").replace(
        "cholesky(", "torch.linalg.cholesky(")
    for name in ("mm", "mv", "bmm", "dot", "outer", "t", "transpose", "permute", "trace",
                 "diag"):
        if torch_src.startswith(name + "("):
            torch_src = "torch." + torch_src
    if "permute" in torch_src:
        torch_src = torch_src.replace("permute(x, ", "x.permute(")
        torch_src = torch_src.replace("torch.x.", "x.")
    with pytest.raises((RuntimeError, IndexError)) as theirs:
        eval(torch_src, {"torch": torch, **ts})  # noqa: S307 - the test's own text
    assert str(theirs.value) == message


@pytest.mark.parametrize("source, message", [
    ("inv(x)", "linalg.inv: The diagonal element 2 is zero, the inversion could not be completed "
               "because the input matrix is singular."),
    ("cholesky(x)", "linalg.cholesky: The factorization could not be completed because the input "
                    "is not positive-definite (the leading minor of order 2 is not "
                    "positive-definite)."),
    ("solve(x, [1, 2])", "torch.linalg.solve: The solver failed because the input matrix is "
                         "singular."),
])
def test_singular_matrices_in_pytorchs_words(source, message):
    torch = torch_or_skip()
    x = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(DdxError) as info:
        ddx.trace(source, x=x)
    assert info.value.message == message
    fn = {"inv": torch.linalg.inv, "cholesky": torch.linalg.cholesky,
          "solve": lambda a: torch.linalg.solve(a, torch.tensor([1.0, 2.0]))}[source.split("(")[0]]
    with pytest.raises(RuntimeError) as theirs:
        fn(torch.tensor(x))
    assert str(theirs.value) == message


def test_matmul_error_points_at_the_operator_with_the_shapes_as_hint(run):
    code, _, err = run("x @ y", "x=[[1,2,3],[4,5,6]]", "y=[[1,2,3],[4,5,6]]")
    assert code == 1
    lines = err.splitlines()
    assert lines[0] == "error: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)"
    assert lines[-1] == "hint: '@' got shapes [2, 3] and [2, 3]"


def test_one_liner_json_has_pytorchs_chain(run_json):
    code, doc, _ = run_json("sum(x @ y)", "x=[[[1,2],[3,4]],[[5,6],[7,8]]]", "y=[1,-1]")
    assert code == 0
    assert doc["gradients"] == {"x": [[[1.0, -1.0], [1.0, -1.0]], [[1.0, -1.0], [1.0, -1.0]]],
                                "y": [16.0, 20.0]}
    assert [n["grad_fn"] for n in doc["nodes"] if n["grad_fn"]] == [
        "ViewBackward0", "MvBackward0", "UnsafeViewBackward0", "SumBackward0"]


def test_ddx_run_script_prints_pytorchs_reprs():
    torch = torch_or_skip()
    lines = session_run("A = tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)\n"
                        "b = tensor([1.0, 2.0], requires_grad=True)\n"
                        "x = torch.linalg.solve(A, b)\n"
                        "x\n"
                        "y = (A @ x).sum() + A.T.trace() + torch.linalg.det(A)\n"
                        "y.backward()\n"
                        "A.grad\nb.grad\n"
                        "A.mT.grad_fn.name()\nA.T.grad_fn\nA.t().grad_fn.name()\n")
    A = torch.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    b = torch.tensor([1.0, 2.0], requires_grad=True)
    x = torch.linalg.solve(A, b)
    y = (A @ x).sum() + A.T.trace() + torch.linalg.det(A)
    y.backward()
    assert lines[0] == repr(x)
    for line, want in zip(lines[1:3], (A.grad, b.grad)):  # (the repr's four decimals)
        got = [float(v) for v in re.findall(r"-?\d+\.\d*(?:e[-+]\d+)?", line)]
        np.testing.assert_allclose(got, want.numpy().reshape(-1), atol=1e-4)
    assert lines[3] == "'TransposeBackward0'"
    assert lines[4].startswith("<PermuteBackward0 object at ")
    assert lines[5] == "'TBackward0'"


@pytest.mark.parametrize("args, torch_args", [
    ("", ""), (", 'fro'", ", 'fro'"), (", 1", ", 1"), (", -1", ", -1"),
    (", inf", ", float('inf')"), (", -inf", ", -float('inf')"),
    (", 1, keepdim=True", ", 1, keepdim=True"),
    (", inf, (2, 0)", ", float('inf'), (2, 0)"), (", -1, (-1, 0), True", ", -1, (-1, 0), True"),
])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_matrix_norm_matches_pytorch(args, torch_args, dtype):
    torch = torch_or_skip()
    fn = eval(f"lambda x: torch.linalg.matrix_norm(x{torch_args})", {"torch": torch})  # noqa: S307
    agree(f"torch.linalg.matrix_norm(x{args})", fn, values_for({"x": (2, 3, 4)}, args), dtype)


@pytest.mark.parametrize("source", ["torch.linalg.cholesky(x, upper=True)", "torch.cholesky(x, True)",
                                    "x.cholesky(upper=True)"])
def test_cholesky_upper_matches_pytorch(source):
    torch = torch_or_skip()
    import warnings

    fn = eval(f"lambda x: {source}", {"torch": torch})  # noqa: S307 - the test's own text
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (torch.cholesky is deprecated)
        agree(source, fn, values_for({"x": (3, 3)}, source, spd=("x",)))


@pytest.mark.parametrize("source", ["a @ b", "a @ c", "c @ a", "torch.mm(a, b)",
                                    "torch.dot(c, a[0])", "torch.bmm(a[None], b[None])",
                                    "torch.linalg.solve(a, c)"])
def test_products_of_two_dtypes_in_pytorchs_words(source):
    """PyTorch's products do not promote: float32 with float64 is an error, in each one's
    words (ddx run's tensors are float32 by default, as PyTorch's)."""
    torch = torch_or_skip()
    setup = ("a = torch.ones(2, 2, dtype=torch.float32) + torch.eye(2, dtype=torch.float32)\n"
             "b = torch.ones(2, 2, dtype=torch.float64)\nc = torch.ones(2, dtype=torch.float64)\n")
    lines = session_run(setup + source + "\n")
    scope = {"torch": torch}
    exec(setup, scope)  # noqa: S102 - the test's own text
    with pytest.raises(RuntimeError) as theirs:
        eval(source, scope)  # noqa: S307
    assert lines == [f"error: {theirs.value}"]
