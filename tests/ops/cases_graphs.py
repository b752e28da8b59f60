"""Graphs of several ops, beside the op table (tests/ops/opinfo.py): gradients flowing through chains,
shared inputs and diamonds, and small networks.

tests/ops/test_op_table.py runs each case as it runs the table's samples: gradcheck, gradgradcheck and the
PyTorch oracle (values, dtypes, grad_fn names, first and second derivatives).
"""

from __future__ import annotations

from helpers import Arg, CaseBook, api

BOOK = CaseBook()
R, NZ, POS, UNIT = "real", "nonzero", "pos", "unit"


def idx(shape, classes):
    """A class-index target."""
    return Arg(shape, "index", high=classes)


def add(id: str, fn, *args: Arg) -> None:
    """A graph case with id ``composite-<id>``."""
    BOOK.add("composite", id, fn, *args)


# ------------------------------------------------------------------------------------------ elementwise
add("mlp", lambda m, x, w, b: m.sigmoid(m.tanh(x @ w + b)).sum(dim=0), Arg((3, 4)), Arg((4, 2)), Arg((2,)))
add("softplus-like", lambda m, x: m.log(1 + m.exp(x)).mean(), Arg((2, 3, 4)))
add("normalize", lambda m, x: x / m.norm(x, dim=1, keepdim=True), Arg((3, 4)))
add("diamond", lambda m, x: (lambda y: y * y + y.sum() - m.relu(y))(x * 2 + 1), Arg((3, 4), NZ))
add("trig-chain", lambda m, a: m.atan2(m.sin(a), m.cos(a)) * m.cosh(a).rsqrt(), Arg((3, 4), UNIT))
add("log-family", lambda m, a: m.log2(a) + m.log10(a) * m.log1p(a) - m.exp2(-a) * m.expm1(a), Arg((3, 4), POS))

# ------------------------------------------------------------------------------------------ activations
# gradients flow through two activations and a shared input
add("activation-mlp",
    lambda m, x, w: api(m, "gelu")(api(m, "silu")(x @ w) + api(m, "softplus")(x @ w, beta=2.0)).sum(dim=0),
    Arg((3, 4)), Arg((4, 2)))
add("elu-of-leaky", lambda m, x: api(m, "elu")(api(m, "leaky_relu")(x, 0.5) - 0.3, alpha=0.7), Arg((3, 4), NZ))

# ----------------------------------------------------------------------------------------- reductions
add("standardize", lambda m, x: (x - x.mean(1, keepdim=True)) / x.std(1, keepdim=True), Arg((3, 4)))
add("softmax-by-hand", lambda m, x: m.exp(x - m.logsumexp(x, 1, keepdim=True)), Arg((3, 4)))
add("max-minus-min", lambda m, x: m.max(x, 1).values - m.amin(x, 1) + x.prod(0).sum(), Arg((3, 4)))

# ------------------------------------------------------------------------------------------ linalg
add("two-layer", lambda m, x, w1, b1, w2: api(m, "linear")(m.tanh(api(m, "linear")(x, w1, b1)), w2),
    Arg((3, 4)), Arg((5, 4)), Arg((5,)), Arg((2, 5)))
add("attention-scores", lambda m, q, k: m.einsum("bqd,bkd->bqk", q, k).sum(-1) + (q @ k.mT).mean(),
    Arg((2, 3, 4)), Arg((2, 5, 4)))

# ------------------------------------------------------------------------------------------ losses
add("classifier", lambda m, x, w, b, t: api(m, "cross_entropy")(api(m, "linear")(x, w, b), t, label_smoothing=0.1),
    Arg((5, 3)), Arg((4, 3)), Arg((4,)), idx((5,), 4))
add("mse-of-softmax", lambda m, x, y: api(m, "mse_loss")(api(m, "softmax")(x, dim=-1), y),
    Arg((3, 4)), Arg((3, 4), UNIT, grad=False))
