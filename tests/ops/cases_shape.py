"""Case book of the shape ops (gradcli/ops/shape.py): cat/concat, stack, split, chunk, unbind, narrow, movedim,
flip, repeat, clone,
index_select, gather, expand_as/view_as/reshape_as, reshape/view/flatten of tensors that are not contiguous, and
indexing beyond the basic cases of tests/ops/test_ops.py (PyTorch's placement of advanced indices, masks, bools,
aliases, 0-d index tensors).

Collected by tests/ops/test_ops.py: every case is gradchecked, gradgradchecked and compared with PyTorch (values,
dtypes, grad_fn names, first and second derivatives). A case returns one tensor: ops with several outputs
(split, chunk) are checked through one piece or a combination of all of them.
"""

from __future__ import annotations

from helpers import Arg, CaseBook

BOOK = CaseBook()
add = BOOK.add
R, NZ, BOOL, INT = "real", "nonzero", "bool", "int"


def _combine(pieces):
    """All pieces in one output, each weighted differently, so every piece's gradient is checked."""
    out = pieces[0].sum() * 1.0
    for k, p in enumerate(pieces[1:], 2):
        out = out + p.sum() * k
    return out


# ------------------------------------------------------------------------------------------ cat, stack
for _name in ("cat", "concat"):
    add(_name, "3x4-2x4", (lambda n: lambda m, a, b: getattr(m, n)([a, b]))(_name), Arg((3, 4)), Arg((2, 4)))
add("cat", "dim1", lambda m, a, b: m.cat([a, b], dim=1), Arg((3, 4)), Arg((3, 2)))
add("cat", "dim-1-three", lambda m, a, b, c: m.cat((a, b, c), -1), Arg((2, 3)), Arg((2, 1)), Arg((2, 2)))
add("cat", "1d", lambda m, a, b: m.cat([a, b]), Arg((4,)), Arg((3,)))
add("cat", "2x3x4-dim1", lambda m, a, b: m.cat([a, b], 1), Arg((2, 3, 4)), Arg((2, 1, 4)))
add("cat", "single", lambda m, a: m.cat([a]), Arg((3, 4)))
add("cat", "same-tensor", lambda m, a: m.cat([a, a * 2, a], dim=0), Arg((2, 3)))
add("cat", "nograd-other", lambda m, a, b: m.cat([a, b]), Arg((3, 4)), Arg((2, 4), grad=False))
add("cat", "int-and-float", lambda m, a, b: m.cat([a, b]), Arg((2, 3), INT), Arg((2, 3)))
for _id, _d in (("dim0", 0), ("dim1", 1), ("dim-1", -1), ("dim2", 2)):
    add("stack", _id, (lambda d: lambda m, a, b: m.stack([a, b], d))(_d), Arg((3, 4)), Arg((3, 4)))
add("stack", "0d", lambda m, a, b, c: m.stack((a, b, c)), Arg(()), Arg(()), Arg(()))
add("stack", "1d-dim1", lambda m, a, b: m.stack([a, b], dim=1), Arg((4,)), Arg((4,)))
add("stack", "same-tensor", lambda m, a: m.stack([a, a]), Arg((2, 3)))
add("stack", "int-and-float", lambda m, a, b: m.stack([a, b]), Arg((4,), INT), Arg((4,)))

# ----------------------------------------------------------------------------------------- split, chunk
for _id, _s, _size, _kw in (("even", (4, 3), 2, {}), ("uneven", (5, 3), 2, {}), ("dim1", (3, 4), 3, {"dim": 1}),
                            ("sizes", (6, 2), [1, 3, 2], {}), ("sizes-dim-1", (2, 5), [2, 3], {"dim": -1}),
                            ("bigger", (3, 4), 10, {}), ("sizes-with-zero", (4,), [0, 4], {})):
    add("split", _id, (lambda sz, kw: lambda m, a: _combine(m.split(a, sz, **kw)))(_size, _kw), Arg(_s))
add("split", "one-piece", lambda m, a: m.split(a, 2)[1], Arg((4, 3)))
add("split", "one-piece-sizes", lambda m, a: m.split(a, [1, 2], dim=1)[1], Arg((3, 3)))
add("split", "method", lambda m, a: a.split(2, dim=1)[0], Arg((3, 4)))
for _id, _s, _c, _kw in (("2-of-4", (4, 3), 2, {}), ("3-of-5", (5,), 3, {}), ("4-of-6", (6, 2), 4, {}),
                         ("dim1", (3, 4), 3, {"dim": 1}), ("more-chunks", (3, 2), 5, {})):
    add("chunk", _id, (lambda c, kw: lambda m, a: _combine(m.chunk(a, c, **kw)))(_c, _kw), Arg(_s))
add("chunk", "one-piece", lambda m, a: m.chunk(a, 2, dim=-1)[1], Arg((3, 4)))
add("chunk", "method", lambda m, a: a.chunk(2)[0], Arg((4, 3)))

add("unbind", "dim0", lambda m, a: _combine(m.unbind(a)), Arg((3, 4)))
add("unbind", "dim-1", lambda m, a: _combine(m.unbind(a, -1)), Arg((2, 3, 4)))
add("unbind", "one-piece", lambda m, a: a.unbind(1)[2], Arg((3, 4)))
for _id, _s, _args in (("dim1", (3, 4), (1, 1, 2)), ("negative-start", (4, 3), (0, -2, 2)), ("full", (3, 4), (0, 0, 3)),
                       ("empty", (3, 4), (0, 3, 0)), ("dim-1", (2, 3, 4), (-1, 0, 1))):
    add("narrow", _id, (lambda args: lambda m, a: m.narrow(a, *args))(_args), Arg(_s))
add("narrow", "method", lambda m, a: a.narrow(0, 1, 1), Arg((3, 4)))
for _name in ("movedim", "moveaxis"):
    add(_name, "0-1", (lambda n: lambda m, a: getattr(m, n)(a, 0, 1))(_name), Arg((3, 4)))
add("movedim", "lists", lambda m, a: m.movedim(a, (0, 1), (2, 0)), Arg((2, 3, 4)))
add("movedim", "negative", lambda m, a: m.movedim(a, -1, 0), Arg((2, 3, 4)))
add("movedim", "same", lambda m, a: m.movedim(a, 1, 1), Arg((3, 4)))
add("movedim", "method-then-reshape", lambda m, a: a.movedim(2, 0).reshape(4, 6), Arg((2, 3, 4)))

# ---------------------------------------------------------------------------------------- flip, repeat
for _id, _s, _dims in (("dim0", (3, 4), (0,)), ("both", (3, 4), (0, 1)), ("last", (2, 3, 4), [-1]),
                       ("02", (2, 3, 4), (0, 2)), ("0d", (), (0,)), ("none", (3, 4), ()), ("4", (4,), [0])):
    add("flip", _id, (lambda d: lambda m, a: m.flip(a, d))(_dims), Arg(_s))
add("flip", "method-varargs", lambda m, a: a.flip(0, 1), Arg((3, 4)))
add("flip", "method-list", lambda m, a: a.flip([1]), Arg((3, 4)))
add("flip", "transposed-input", lambda m, a: m.flip(a.t(), (1,)).reshape(-1), Arg((3, 4)))
for _id, _s, _r in (("2x1", (3, 4), (2, 1)), ("1x3", (3, 4), (1, 3)), ("lead", (3, 4), (2, 1, 2)),
                    ("0d", (), (2, 3)), ("1d", (4,), (3,)), ("zero", (3, 4), (2, 0)), ("same", (3, 4), (1, 1)),
                    ("3d", (2, 1, 3), (1, 4, 2))):
    add("repeat", _id, (lambda r: lambda m, a: a.repeat(*r))(_r), Arg(_s))
add("repeat", "tuple", lambda m, a: a.repeat((2, 2)), Arg((3, 4)))
# gradcli also has repeat as a function (torch only as a method), like view and expand
add("repeat", "function", lambda m, a: m.repeat(a, 2, 1) if m.__name__ == "gradcli" else a.repeat(2, 1),
    Arg((3, 4)))

# ------------------------------------------------------------------------------- index_select, gather
add("index_select", "dim0", lambda m, a: m.index_select(a, 0, m.tensor([2, 0])), Arg((3, 4)))
add("index_select", "dim1-repeated", lambda m, a: m.index_select(a, 1, m.tensor([3, 1, 3, 3])), Arg((3, 4)))
add("index_select", "dim-1-3d", lambda m, a: m.index_select(a, -1, m.tensor([0, 2])), Arg((2, 3, 4)))
add("index_select", "0d-index", lambda m, a: m.index_select(a, 0, m.tensor(1)), Arg((3, 4)))
add("index_select", "int32-index", lambda m, a: m.index_select(a, 0, m.tensor([1, 1], dtype=m.int32)), Arg((3, 4)))
add("index_select", "0d-input", lambda m, a: m.index_select(a, 0, m.tensor([0])), Arg(()))
add("index_select", "empty-index", lambda m, a: m.index_select(a, 0, m.tensor([], dtype=m.int64)), Arg((3, 4)))
add("index_select", "method", lambda m, a: a.index_select(1, m.tensor([0, 0])), Arg((3, 4)))
add("gather", "dim0", lambda m, a: m.gather(a, 0, m.tensor([[0, 1, 2, 0], [2, 2, 1, 0]])), Arg((3, 4)))
add("gather", "dim1", lambda m, a: m.gather(a, 1, m.tensor([[3], [0], [3]])), Arg((3, 4)))
add("gather", "smaller-index", lambda m, a: m.gather(a, 1, m.tensor([[1, 1, 0]])), Arg((3, 4)))
add("gather", "3d-dim-1", lambda m, a: m.gather(a, -1, m.tensor([[[0, 3]] * 3] * 2)), Arg((2, 3, 4)))
add("gather", "0d", lambda m, a: m.gather(a, 0, m.tensor(0)), Arg(()))
add("gather", "int32-index", lambda m, a: m.gather(a, 0, m.tensor([[2, 0, 1, 1]], dtype=m.int32)), Arg((3, 4)))
add("gather", "method", lambda m, a: a.gather(1, m.tensor([[0, 0], [1, 0], [2, 3]])), Arg((3, 4)))

# ------------------------------------------------------------------------------------- clone, *_as
add("clone", "3x4", lambda m, a: m.clone(a), Arg((3, 4)))
add("clone", "transposed-then-reshape", lambda m, a: a.t().clone().reshape(-1), Arg((3, 4)))
add("clone", "method", lambda m, a: a.clone(), Arg(()))
add("clone", "via-contiguous", lambda m, a: a.t().contiguous(), Arg((3, 4)))
add("clone", "contiguous-noop", lambda m, a: (a * 2).contiguous(), Arg((3, 4)))
add("expand_as", "3x1-3x4", lambda m, a, b: a.expand_as(b), Arg((3, 1)), Arg((3, 4), grad=False))
add("expand_as", "4-2x3x4", lambda m, a, b: a.expand_as(b), Arg((4,)), Arg((2, 3, 4)))
add("view_as", "3x4-12", lambda m, a, b: a.view_as(b), Arg((3, 4)), Arg((12,), grad=False))
add("reshape_as", "3x4-2x6", lambda m, a, b: a.reshape_as(b), Arg((3, 4)), Arg((2, 6), grad=False))
add("reshape_as", "transposed", lambda m, a, b: a.t().reshape_as(b), Arg((3, 4)), Arg((12,), grad=False))

# ---------------------------------------------------------------------- views of non-contiguous tensors
# torch.reshape views a contiguous tensor (ViewBackward0), views a non-contiguous one whose strides allow it
# (ReshapeAliasBackward0), and copies otherwise (CloneBackward0 + UnsafeViewBackward0)
for _id, _s, _f in (
        ("permuted", (2, 3, 4), lambda m, a: a.permute(2, 0, 1).reshape(4, 6)),
        ("permuted-viewable", (2, 3, 4), lambda m, a: a.permute(1, 2, 0).reshape(12, 2)),
        ("expanded", (3, 1), lambda m, a: a.expand(3, 4).reshape(12)),
        ("expanded-viewable", (3, 1), lambda m, a: a.expand(3, 4).reshape(3, 2, 2)),
        ("step-sliced", (3, 4), lambda m, a: a[:, ::2].reshape(6)),
        ("column", (3, 4), lambda m, a: a[:, 1].reshape(3, 1)),
        ("narrowed-rows", (4, 3), lambda m, a: a[1:3].reshape(6)),
        ("narrowed-columns", (3, 4), lambda m, a: a[:, 1:3].reshape(6)),
        ("transposed-unsqueezed", (3, 4), lambda m, a: a.t().unsqueeze(0).reshape(4, 3)),
        ("mT", (2, 3, 4), lambda m, a: a.mT.reshape(2, 12)),
        ("flatten-transposed", (3, 4), lambda m, a: a.t().flatten()),
        ("flatten-permuted-partial", (2, 3, 4), lambda m, a: a.permute(0, 2, 1).flatten(0, 1)),
        ("flatten-permuted-viewable", (2, 3, 4), lambda m, a: a.permute(1, 0, 2).flatten(1)),
        ("twice", (3, 4), lambda m, a: a.t().reshape(2, 6).reshape(12))):
    add("reshape", _id, _f, Arg(_s))
add("view", "transposed-same-shape", lambda m, a: a.t().view(4, 3), Arg((3, 4)))
add("view", "transposed-split-dim", lambda m, a: a.t().view(2, 2, 3), Arg((3, 4)))
add("view", "expanded-new-dim", lambda m, a: a.expand(2, 3, 4).view(2, 3, 2, 2), Arg((3, 4)))
add("view", "minus1", lambda m, a: a.view(-1, 2), Arg((3, 4)))

# ------------------------------------------------------------------------------------------ indexing
INDEXING = [  # (id, shape, key function); PyTorch's placement of advanced indices differs from NumPy's
    ("full-slices-alias", (3, 4), lambda m, a: a[:, :]),
    ("full-slice-range-alias", (3, 4), lambda m, a: a[:, 0:100]),
    ("empty-tuple-alias", (3, 4), lambda m, a: a[()]),
    ("oversized-slice-skipped", (3, 4), lambda m, a: a[0:100, 0]),
    ("negative-start-slice", (3, 4), lambda m, a: a[-3:, 0]),
    ("slice-neg-stop", (4,), lambda m, a: a[:-1]),
    ("slice-step-3", (2, 7), lambda m, a: a[:, 1::3]),
    ("int-list", (3, 4), lambda m, a: a[1, [0, 2]]),
    ("list-int", (3, 4), lambda m, a: a[[0, 2], 1]),
    ("int-slice-list-3d", (2, 3, 4), lambda m, a: a[0, :, [1, 2]]),
    ("list-slice-list-3d", (2, 3, 4), lambda m, a: a[[0, 1], :, [1, 2]]),
    ("slice-list-list-3d", (2, 3, 4), lambda m, a: a[:, [0, 1], [1, 2]]),
    ("slice-list-slice-3d", (2, 3, 4), lambda m, a: a[1:, [0, 2], 1:3]),
    ("ellipsis-list", (2, 3, 4), lambda m, a: a[..., [1, 0]]),
    ("list-ellipsis-list", (2, 3, 4), lambda m, a: a[[0], ..., [0]]),
    ("none-list", (3, 4), lambda m, a: a[:, None, [0]]),
    ("list-none-list", (3, 4), lambda m, a: a[[0], None, [0]]),
    ("none-ellipsis-int", (3, 4), lambda m, a: a[None, ..., 0]),
    ("true", (3, 4), lambda m, a: a[True]),
    ("false", (3, 4), lambda m, a: a[False]),
    ("true-in-tuple", (3, 4), lambda m, a: a[True, 0]),
    ("0d-int-tensor", (3, 4), lambda m, a: a[m.tensor(1)]),
    ("0d-int-tensor-in-tuple", (3, 4), lambda m, a: a[:, m.tensor(-1)]),
    ("0d-bool-tensor", (3, 4), lambda m, a: a[m.tensor(True)]),
    ("bool-list", (3, 4), lambda m, a: a[[True, False, True]]),
    ("bool-list-int", (3, 4), lambda m, a: a[[True, False, True], 1]),
    ("list-of-lists-is-tuple", (3, 4), lambda m, a: a[[[0, 1], [1, 3]]]),
    ("list-with-slice-is-tuple", (3, 4), lambda m, a: a[[0, slice(1, 3)]]),
    ("list-with-none-is-tuple", (3, 4), lambda m, a: a[[0, None]]),
    ("broadcast-indices", (3, 4), lambda m, a: a[m.tensor([[0], [2]]), m.tensor([1, 3, 3])]),
    ("int32-tensor", (3, 4), lambda m, a: a[m.tensor([2, 0], dtype=m.int32)]),
    ("empty-list", (3, 4), lambda m, a: a[[]]),
    ("negative-list", (3, 4), lambda m, a: a[:, [-1, -4]]),
    ("2d-mask-then-int", (2, 3, 4), lambda m, a: a[m.tensor([[True, False, True], [False, True, True]]), 0]),
    ("int-then-2d-mask", (2, 3, 4), lambda m, a: a[0, m.tensor([[True] * 4, [False] * 4, [True, False] * 2])]),
    ("mask-then-none", (2, 3, 4), lambda m, a: a[m.tensor([[True, False, True], [False, True, True]]), None]),
    ("index-of-transposed", (3, 4), lambda m, a: a.t()[[0, 2]].reshape(-1)),
    ("list-of-transposed-columns", (3, 4), lambda m, a: a.t()[:, [0, 1]].view(-1)),
]
for _id, _s, _f in INDEXING:
    add("__getitem__", _id, _f, Arg(_s))
add("__getitem__", "mask-arg-2d-of-3d", lambda m, a, mask: a[mask], Arg((2, 3, 4)), Arg((2, 3), BOOL))
add("__getitem__", "mask-arg-second-dim", lambda m, a, mask: a[:, mask], Arg((3, 4)), Arg((4,), BOOL))
add("__getitem__", "index-arg-int", lambda m, a, i: a[i.abs()], Arg((4, 2)), Arg((5,), INT))
