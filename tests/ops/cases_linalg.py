"""Case book of the linear algebra (gradcli/ops/linalg.py): bmm, einsum, linear, and the matmul forms whose
recorded graph depends on which operand requires grad or on memory layout (PyTorch's fold into mm/mv, the
squeezed size-1 batch, non-contiguous operands).

Every case runs through tests/ops/test_ops.py: gradcheck, gradgradcheck and the torch oracle (values, dtypes,
grad_fn names, first and second derivatives). Error messages are compared in tests/ops/test_ops_reduction.py.
"""

from __future__ import annotations

from helpers import Arg, CaseBook, api

BOOK = CaseBook()
INT = "int"



# ------------------------------------------------------------------------------------------------------ bmm
BOOK.add("bmm", "2x3x4-2x4x5", lambda m, a, b: m.bmm(a, b), Arg((2, 3, 4)), Arg((2, 4, 5)))
BOOK.add("bmm", "1x1x4-1x4x1", lambda m, a, b: m.bmm(a, b), Arg((1, 1, 4)), Arg((1, 4, 1)))
BOOK.add("bmm", "nograd-mat2", lambda m, a, b: m.bmm(a, b), Arg((2, 3, 4)), Arg((2, 4, 5), grad=False))
BOOK.add("bmm", "nograd-input", lambda m, a, b: m.bmm(a, b), Arg((2, 3, 4), grad=False), Arg((2, 4, 5)))
BOOK.add("bmm", "method", lambda m, a, b: a.bmm(b), Arg((2, 3, 4)), Arg((2, 4, 5)))
BOOK.add("bmm", "transposed", lambda m, a, b: m.bmm(a.transpose(1, 2), b), Arg((2, 4, 3)), Arg((2, 4, 5)))
BOOK.add("bmm", "int", lambda m, a, b: m.bmm(a, b), Arg((2, 3, 4), INT), Arg((2, 4, 5), INT))

# ------------------------------------------------------------------------- matmul: fold, squeeze, layout
MATMUL = [  # (id, shape a, shape b, a requires grad, b requires grad)
    ("2-3-nograd-input", (3, 4), (2, 4, 5), False, True),
    ("2-3-nograd-other", (3, 4), (2, 4, 5), True, False),
    ("1-3-nograd-other", (4,), (2, 4, 5), True, False),
    ("1-3-nograd-input", (4,), (2, 4, 5), False, True),
    ("3-1-nograd-other", (2, 3, 4), (4,), True, False),
    ("3-1-nograd-input", (2, 3, 4), (4,), False, True),
    ("2-4", (3, 4), (2, 2, 4, 5), True, True),
    ("1x3-3-nograd-input", (1, 3, 4), (2, 4, 5), False, True),
    ("1x3-3-nograd-other", (1, 3, 4), (2, 4, 5), True, False),
    ("3-1x3", (2, 3, 4), (1, 4, 5), True, True),
    ("3-1x3-nograd-other", (2, 3, 4), (1, 4, 5), True, False),
    ("3-1x3-nograd-input", (2, 3, 4), (1, 4, 5), False, True),
    ("1x3-1x3", (1, 3, 4), (1, 4, 5), True, True),
    ("1x1x3-3", (1, 1, 3, 4), (2, 4, 5), True, True),
    ("1-1x3", (4,), (1, 4, 5), True, True),
    ("2-1x3", (3, 4), (1, 4, 5), True, True),
    ("1x2-3", (1, 4), (2, 4, 5), True, True),
    ("1x3-3-p1", (1, 3, 4), (2, 4, 1), True, True),
    ("4-1", (2, 2, 3, 4), (4,), True, True),
    ("1-4", (4,), (2, 2, 4, 5), True, True),
    ("3-4-bcast", (3, 3, 4), (2, 1, 4, 5), True, True),
]
for _id, _sa, _sb, _ga, _gb in MATMUL:
    BOOK.add("matmul", _id, lambda m, a, b: m.matmul(a, b), Arg(_sa, grad=_ga), Arg(_sb, grad=_gb))
# non-contiguous operands: whether PyTorch folds depends on strides (gradcli reads numpy's)
BOOK.add("matmul", "3t-2-nograd-other", lambda m, a, b: m.matmul(a.transpose(0, 1), b), Arg((3, 2, 4)),
         Arg((4, 5), grad=False))
BOOK.add("matmul", "3t-1-nograd-other", lambda m, a, b: m.matmul(a.transpose(0, 1), b), Arg((3, 2, 4)),
         Arg((4,), grad=False))
BOOK.add("matmul", "3t-2", lambda m, a, b: m.matmul(a.transpose(0, 1), b), Arg((3, 2, 4)), Arg((4, 5)))
BOOK.add("matmul", "3-2t", lambda m, a, b: m.matmul(a, b.t()), Arg((2, 3, 4)), Arg((5, 4)))
BOOK.add("matmul", "2-3mT-nograd-input", lambda m, a, b: m.matmul(a, b.mT), Arg((3, 4), grad=False),
         Arg((2, 5, 4)))
BOOK.add("matmul", "int-3-2", lambda m, a, b: m.matmul(a, b), Arg((2, 3, 4), INT), Arg((4, 5), INT))
BOOK.add("__matmul__", "1x3-3", lambda m, a, b: a @ b, Arg((1, 3, 4)), Arg((2, 4, 5)))

# --------------------------------------------------------------------------------------------------- einsum
EINSUM = [  # (id, equation, shapes)
    ("mm", "ij,jk->ik", [(3, 4), (4, 5)]),
    ("mm-implicit", "ij,jk", [(3, 4), (4, 5)]),
    ("dot", "i,i->", [(4,), (4,)]),
    ("outer", "i,j->ij", [(3,), (4,)]),
    ("hadamard", "ij,ij->ij", [(3, 4), (3, 4)]),
    ("rowdot", "ij,ij->i", [(3, 4), (3, 4)]),
    ("bmm", "bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bmm-bcast-1", "bij,bjk->bik", [(1, 3, 4), (2, 4, 5)]),
    ("ellipsis", "...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("ellipsis-implicit", "...ij,...jk", [(1, 3, 4), (2, 4, 5)]),
    ("ellipsis-middle", "i...j,j->i...", [(3, 2, 4), (4,)]),
    ("transpose", "ij->ji", [(3, 4)]),
    ("identity", "ij", [(3, 4)]),
    ("sum-all", "ij->", [(3, 4)]),
    ("sum-rows", "ij->j", [(3, 4)]),
    ("diag", "ii->i", [(3, 3)]),
    ("trace", "ii", [(3, 3)]),
    ("trace-explicit", "ii->", [(3, 3)]),
    ("diag-times", "ii,i->i", [(3, 3), (3,)]),
    ("only-in-one", "ij,k->k", [(3, 4), (5,)]),
    ("all-summed", "ij,k->", [(3, 4), (5,)]),
    ("three", "ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
    ("three-implicit", "ij,jk,kl", [(3, 4), (4, 5), (5, 2)]),
    ("three-outer", "i,j,k->ijk", [(3,), (4,), (2,)]),
    ("scalars", ",->", [(), ()]),
    ("scalar-identity", "", [()]),
    ("spaces", "i j , j k -> i k", [(3, 4), (4, 5)]),
    ("uppercase", "Ij,jK->IK", [(3, 4), (4, 5)]),
    ("bilinear", "bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("diag-3d", "iij->ji", [(3, 3, 2)]),
    ("diag-batch", "bii->bi", [(2, 3, 3)]),
    ("diag-twice", "iijj->ij", [(2, 2, 3, 3)]),
    ("bmm-bcast-both", "bij,bjk->bik", [(2, 3, 1), (1, 1, 5)]),
    ("ellipsis-summed", "i...,...i->...", [(3, 2, 1), (2, 4, 3)]),
    ("ellipsis-dropped", "ab...,b...->a", [(2, 3, 4, 1), (3, 1, 5)]),
    ("ellipsis-only", "...->...", [(2, 3)]),
    ("three-diag-bcast", "bii,bi,j->bj", [(2, 3, 3), (1, 3), (4,)]),
    ("three-bcast", "ij,ij,ij->j", [(3, 4), (1, 4), (3, 1)]),
    ("four", "ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 2), (2, 3)]),
    ("sum-middle", "ijk->ik", [(2, 3, 4)]),
    ("permute-3d", "ijk->kij", [(2, 3, 4)]),
    ("size-one-summed", "ij,jk->ik", [(3, 1), (1, 5)]),
]
for _id, _eq, _shapes in EINSUM:
    BOOK.add("einsum", _id, (lambda eq: lambda m, *xs: m.einsum(eq, *xs))(_eq), *[Arg(s) for s in _shapes])
BOOK.add("einsum", "list-operands", lambda m, a, b: m.einsum("ij,jk->ik", [a, b]), Arg((3, 4)), Arg((4, 5)))
BOOK.add("einsum", "same-operand-twice", lambda m, a: m.einsum("ij,ij->", a, a), Arg((3, 4)))
BOOK.add("einsum", "nograd-other", lambda m, a, b: m.einsum("ij,jk->ik", a, b), Arg((3, 4)),
         Arg((4, 5), grad=False))
BOOK.add("einsum", "int", lambda m, a, b: m.einsum("i,i->", a, b), Arg((4,), INT), Arg((4,), INT))

# --------------------------------------------------------------------------------------------------- linear
LINEAR = [  # (id, input shape, weight shape, bias shape or None)
    ("2d-bias", (3, 4), (5, 4), (5,)), ("2d-nobias", (3, 4), (5, 4), None), ("1d-bias", (4,), (5, 4), (5,)),
    ("1d-nobias", (4,), (5, 4), None), ("3d-bias", (2, 3, 4), (5, 4), (5,)), ("3d-nobias", (2, 3, 4), (5, 4), None),
    ("4d-bias", (2, 2, 3, 4), (5, 4), (5,)), ("2d-0d-bias", (3, 4), (5, 4), ()), ("1d-0d-bias", (4,), (5, 4), ()),
    ("3d-2d-bias", (2, 3, 4), (5, 4), (3, 5)), ("2d-1d-weight", (3, 4), (4,), None),
    ("3d-1d-weight-0d-bias", (2, 3, 4), (4,), ()), ("1d-1d-weight-0d-bias", (4,), (4,), ()),
]
for _id, _si, _sw, _sbias in LINEAR:
    if _sbias is None:
        BOOK.add("linear", _id, lambda m, x, w: api(m, "linear")(x, w), Arg(_si), Arg(_sw))
    else:
        BOOK.add("linear", _id, lambda m, x, w, b: api(m, "linear")(x, w, b), Arg(_si), Arg(_sw), Arg(_sbias))
BOOK.add("linear", "bias-keyword", lambda m, x, w, b: api(m, "linear")(x, w, bias=b), Arg((3, 4)), Arg((5, 4)),
         Arg((5,)))
BOOK.add("linear", "nograd-weight", lambda m, x, w, b: api(m, "linear")(x, w, b), Arg((3, 4)),
         Arg((5, 4), grad=False), Arg((5,)))
BOOK.add("linear", "only-bias-grad", lambda m, x, w, b: api(m, "linear")(x, w, b), Arg((2, 3, 4), grad=False),
         Arg((5, 4), grad=False), Arg((5,)))
BOOK.add("linear", "noncontiguous-3d", lambda m, x, w, b: api(m, "linear")(x.transpose(0, 1), w, b),
         Arg((3, 2, 4)), Arg((5, 4)), Arg((5,)))
BOOK.add("linear", "int", lambda m, x, w: api(m, "linear")(x, w), Arg((3, 4), INT), Arg((5, 4), INT))

# ------------------------------------------------------------------------------------------- compositions
BOOK.add("composite", "two-layer", lambda m, x, w1, b1, w2: api(m, "linear")(m.tanh(api(m, "linear")(x, w1, b1)), w2),
         Arg((3, 4)), Arg((5, 4)), Arg((5,)), Arg((2, 5)))
BOOK.add("composite", "attention-scores", lambda m, q, k: m.einsum("bqd,bkd->bqk", q, k).sum(-1) + (q @ k.mT).mean(),
         Arg((2, 3, 4)), Arg((2, 5, 4)))
