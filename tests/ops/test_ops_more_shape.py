"""NumPy-style joins and splits, roll, tile, repeat_interleave, broadcasting, meshgrid and the *_scatter
functions (gradcli/ops/shape/more_shape.py), beyond the op table's generic checks: a program run by ``gradcli
run`` prints what it prints with PyTorch (values, grad_fn names, gradients, the non-differentiable helpers), and
bad arguments raise PyTorch's errors."""

import pytest

import gradcli as G

from helpers import python_and_gradcli_stdout

PROGRAM = '''
import torch
a = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
b = torch.tensor([7., 8., 9.], requires_grad=True)
print(torch.hstack((a[0], b)))
print(torch.vstack((a, b)))
print(torch.row_stack([b, b]).shape)
print(torch.dstack((a, a)).shape, torch.column_stack((b, b)))
print(torch.hsplit(a, 3)[1], torch.vsplit(a, [1])[1])
print(torch.tensor_split(torch.arange(7), 3))
print(torch.tensor_split(a, torch.tensor([1, 2]), dim=1)[2])
print(torch.dsplit(torch.arange(8.).reshape(1, 2, 4), 2)[1])
print(torch.roll(a, 1), torch.roll(a, (1, -1), (0, 1)))
print(torch.tile(b, (2, 2)), a.repeat_interleave(2, dim=0))
print(torch.repeat_interleave(b, torch.tensor([1, 0, 2])), torch.repeat_interleave(torch.tensor([2, 1])))
print(torch.broadcast_to(b, (2, 3)), torch.broadcast_tensors(a, b)[1])
print(torch.broadcast_shapes((2, 1), (1, 3), 3))
print(torch.atleast_1d(torch.tensor(1.)), torch.atleast_2d(b).shape, torch.atleast_3d(a).shape)
print(torch.atleast_3d(b, a)[0].shape)
print(torch.flipud(a), torch.fliplr(a), torch.rot90(a), torch.rot90(a, 2, [1, 0]))
print(torch.ravel(a.t()), torch.diagflat(b, 1))
x, y = torch.meshgrid(b, a[0], indexing="xy")
print(x, y)
print(torch.meshgrid(b, b[:2], indexing="ij")[1])
print(torch.cartesian_prod(b[:2], a[1, :2]))
print(torch.combinations(b), torch.combinations(b, 2, with_replacement=True).shape)
print(torch.block_diag(a, b, torch.tensor(5.)))
print(torch.select_scatter(torch.zeros(2, 3), b, 0, 1))
print(torch.slice_scatter(torch.zeros(4, 3), a, start=1, end=4, step=2))
print(torch.diagonal_scatter(torch.zeros(3, 3), b))
print(torch.tril_indices(3, 3), torch.triu_indices(3, 4, 1))
print(torch.unravel_index(torch.tensor([4, 1, -1, 9, -8]), (2, 3)), torch.unravel_index(torch.tensor(5), 6))
print(torch.numel(a), torch.is_tensor(a), torch.is_tensor(3), torch.positive(a) is a)
out = (torch.hstack([a, a]).sum() + torch.vstack([b, b]).pow(2).sum() + torch.roll(a, 1).mul(b).sum()
       + torch.tile(b, (2,)).mul(torch.arange(6.)).sum() + a.repeat_interleave(2).sum()
       + torch.block_diag(a, b).sum() + torch.rot90(a).mul(torch.arange(6.).reshape(3, 2)).sum()
       + torch.select_scatter(a, b * 3, 0, 0).sum() + torch.combinations(b).prod(1).sum()
       + torch.diagonal_scatter(a, b[:2], 0).mul(a).sum())
out.backward()
print(a.grad, b.grad)
print(torch.roll(a, 1).grad_fn.name(), torch.block_diag(a).grad_fn.name(), torch.rot90(a).grad_fn.name())
print(torch.select_scatter(a, b, 0, 0).grad_fn.name(), torch.slice_scatter(a, a).grad_fn.name(),
      torch.diagonal_scatter(a, b[:2]).grad_fn.name(), a.repeat_interleave(2).grad_fn.name(),
      torch.meshgrid(b, b, indexing="ij")[0].grad_fn.name(), torch.tensor_split(a, 2)[0].grad_fn.name())
'''


def test_program_matches_pytorch(tmp_path):
    """A program using the new shape functions prints with ``gradcli run`` what it prints with PyTorch."""
    want, got = python_and_gradcli_stdout(tmp_path, "more_shape", PROGRAM)
    assert got == want


OUT_PROGRAM = '''
import torch
a = torch.tensor([0, 1, 10, 0], dtype=torch.int8)
b = torch.tensor([4, 0, 1, 0], dtype=torch.int8)
print(torch.logical_and(a, b, out=torch.empty(4, dtype=torch.bool)))
t = torch.zeros(3)
r = torch.add(torch.ones(3), 2, out=t)
print(r, t, r is t, t._version)
e = torch.empty(0)
torch.hstack([torch.ones(2), torch.zeros(1)], out=e)
print(e)
try:
    torch.add(torch.ones(2), 1, out=torch.empty(2, dtype=torch.long))
except RuntimeError as err:
    print(err)
x = torch.ones(2, requires_grad=True)
try:
    torch.mul(x, 2, out=torch.empty(2))
except RuntimeError as err:
    print(err)
with torch.no_grad():
    print(torch.mul(x, 2, out=torch.empty(2)))
'''


def test_out_keyword_matches_pytorch(tmp_path):
    """``out=``: the result written into the given tensor (resized from zero elements, its version counted) and
    returned; a result that cannot be cast, and an input that requires grad, refused with PyTorch's messages;
    allowed under no_grad."""
    want, got = python_and_gradcli_stdout(tmp_path, "out_keyword", OUT_PROGRAM)
    assert got == want


def test_meshgrid_without_indexing_warns_as_pytorch(torch):
    """meshgrid without ``indexing`` gives the "ij" grids and PyTorch's UserWarning; with it, no warning."""
    import warnings

    def run(m):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            grids = m.meshgrid(m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0, 5.0]))
            m.meshgrid(m.tensor([1.0]), indexing="xy")
        return [g.tolist() for g in grids], [(w.category.__name__, str(w.message).split(" (Triggered")[0])
                                             for w in caught]

    assert run(G) == run(torch)


ERRORS = {  # id: fn(m) that raises, in gradcli as in torch
    "hsplit-indivisible": lambda m: m.hsplit(m.ones(2, 3), 2),
    "vsplit-1d": lambda m: m.vsplit(m.ones(3), 1),
    "tensor_split-0d": lambda m: m.tensor_split(m.tensor(1.0), 2),
    "tensor_split-zero-sections": lambda m: m.tensor_split(m.ones(3), 0),
    "roll-misaligned": lambda m: m.roll(m.ones(2, 2), (1, 2), 0),
    "repeat_interleave-negative": lambda m: m.repeat_interleave(m.ones(2), -1),
    "repeat_interleave-mismatch": lambda m: m.repeat_interleave(m.ones(2), m.tensor([1, 2, 3]), 0),
    "fliplr-1d": lambda m: m.fliplr(m.ones(3)),
    "flipud-0d": lambda m: m.flipud(m.tensor(1.0)),
    "rot90-same-dims": lambda m: m.rot90(m.ones(2, 2), 1, [0, 0]),
    "rot90-1d": lambda m: m.rot90(m.ones(2)),
    "block_diag-3d": lambda m: m.block_diag(m.ones(2), m.ones(1, 1, 1)),
    "meshgrid-indexing": lambda m: m.meshgrid(m.ones(2), indexing="ji"),
    "combinations-2d": lambda m: m.combinations(m.ones(2, 2)),
    "select_scatter-shape": lambda m: m.select_scatter(m.ones(2, 3), m.ones(2), 0, 0),
    "slice_scatter-shape": lambda m: m.slice_scatter(m.ones(4, 3), m.ones(1, 3), start=1),
    "diagonal_scatter-shape": lambda m: m.diagonal_scatter(m.ones(3, 3), m.ones(2)),
    "broadcast_shapes-mismatch": lambda m: m.broadcast_shapes((2, 3), (1, 4)),
    "broadcast_shapes-third": lambda m: m.broadcast_shapes((2,), (3, 1), (5, 1)),
    "broadcast_shapes-negative": lambda m: m.broadcast_shapes(-1),
    "broadcast_tensors-mismatch": lambda m: m.broadcast_tensors(m.ones(2, 3), m.ones(2, 1), m.ones(3, 2)),
    "hstack-tensor": lambda m: m.hstack(m.ones(2)),
    "numel-list": lambda m: m.numel([1]),
    "positive-bool": lambda m: m.positive(m.tensor([True])),
    "tril_indices-negative": lambda m: m.tril_indices(-1, 2),
    "unravel_index-float": lambda m: m.unravel_index(m.tensor([1.0]), (2, 2)),
    "unravel_index-negative-size": lambda m: m.unravel_index(m.tensor([1]), (2, -2)),
}


def _error(m, fn):
    try:
        fn(m)
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return e
    raise AssertionError(f"{m.__name__}: no error")


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_pytorch(case, torch):
    """Bad arguments raise PyTorch's exception type and message."""
    want, got = _error(torch, ERRORS[case]), _error(G, ERRORS[case])
    assert (type(got).__name__, str(got)) == (type(want).__name__, str(want))
