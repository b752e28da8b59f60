"""Case book of softmax/log_softmax (gradcli/ops/nn.py) and the losses (gradcli/ops/loss.py).

Every case runs through tests/ops/test_ops.py: gradcheck, gradgradcheck and the torch oracle (values, dtypes,
grad_fn names, first and second derivatives). Class-index targets use the "index" domain of tests/helpers.py
(int64 in [0, C)); they never require grad. Error messages and warnings are compared in
tests/ops/test_ops_reduction.py.
"""

from __future__ import annotations

import warnings

from helpers import Arg, CaseBook, api, sh

BOOK = CaseBook()
R, NZ, POS, UNIT, INT = "real", "nonzero", "pos", "unit", "int"



def idx(shape, classes):
    """A class-index target."""
    return Arg(shape, "index", high=classes)


def quiet(fn):
    """``fn`` with warnings silenced (the implicit-dim and broadcasting warnings are checked elsewhere)."""
    def wrapped(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args)
    return wrapped


def F(name, *args, **kwargs):
    """``F.<name>(*tensors, *args, **kwargs)`` as a case function."""
    return lambda m, *xs: api(m, name)(*xs, *args, **kwargs)


# --------------------------------------------------------------------------------------- softmax, log_softmax
for _name in ("softmax", "log_softmax"):
    for _s, _d in (((4,), 0), ((3, 4), 1), ((3, 4), 0), ((3, 4), -1), ((2, 3, 4), 1), ((2, 3, 4), -1), ((), 0),
                   ((3, 1), 1)):
        BOOK.add(_name, f"{sh(_s)}-dim{_d}", F(_name, dim=_d), Arg(_s))
    BOOK.add(_name, "dtype-float64", lambda m, a, n=_name: api(m, n)(a, 1, dtype=m.float64), Arg((3, 4)))
    BOOK.add(_name, "torch-dtype-positional", lambda m, a, n=_name: getattr(m, n)(a, 1, m.float64), Arg((3, 4)))
    BOOK.add(_name, "method", lambda m, a, n=_name: getattr(a, n)(-1), Arg((3, 4)))
    BOOK.add(_name, "large-logits", lambda m, a, n=_name: api(m, n)(a * 50, dim=1), Arg((3, 4)))
    for _s in ((4,), (3, 4), (2, 3, 4)):
        BOOK.add(_name, f"implicit-dim-{sh(_s)}", quiet(F(_name)), Arg(_s))
    BOOK.add(_name, "int-dtype", lambda m, a, n=_name: api(m, n)(a, 1, dtype=m.float32), Arg((3, 4), INT))

# ------------------------------------------------------------------------------------ cross_entropy: indices
CE = "cross_entropy"
for _red in ("mean", "sum", "none"):
    BOOK.add(CE, f"3x4-{_red}", F(CE, reduction=_red), Arg((3, 4)), idx((3,), 4))
    BOOK.add(CE, f"3d-{_red}", F(CE, reduction=_red), Arg((2, 4, 3)), idx((2, 3), 4))
    BOOK.add(CE, f"4d-{_red}", F(CE, reduction=_red), Arg((2, 4, 3, 2)), idx((2, 3, 2), 4))
    BOOK.add(CE, f"weight-{_red}", lambda m, x, t, w, r=_red: api(m, CE)(x, t, weight=w, reduction=r), Arg((5, 4)),
             idx((5,), 4), Arg((4,), POS, grad=False))
    BOOK.add(CE, f"ignore-{_red}", F(CE, ignore_index=1, reduction=_red), Arg((6, 3)), idx((6,), 3))
    BOOK.add(CE, f"smoothing-{_red}", F(CE, label_smoothing=0.1, reduction=_red), Arg((3, 4)), idx((3,), 4))
    BOOK.add(CE, f"smoothing-weight-ignore-{_red}",
             lambda m, x, t, w, r=_red: api(m, CE)(x, t, weight=w, ignore_index=2, label_smoothing=0.2, reduction=r),
             Arg((6, 3)), idx((6,), 3), Arg((3,), POS, grad=False))
    BOOK.add(CE, f"smoothing-3d-{_red}", F(CE, label_smoothing=0.3, reduction=_red), Arg((2, 4, 3)), idx((2, 3), 4))
BOOK.add(CE, "1d-input", F(CE), Arg((4,)), idx((), 4))
BOOK.add(CE, "1d-input-none", F(CE, reduction="none"), Arg((4,)), idx((), 4))
BOOK.add(CE, "1d-smoothing", F(CE, label_smoothing=0.25), Arg((4,)), idx((), 4))
BOOK.add(CE, "weight-ignore-3d", lambda m, x, t, w: api(m, CE)(x, t, w, ignore_index=0), Arg((2, 3, 5)),
         idx((2, 5), 3), Arg((3,), POS, grad=False))
BOOK.add(CE, "smoothing-one", F(CE, label_smoothing=1.0), Arg((3, 4)), idx((3,), 4))
BOOK.add(CE, "5d", F(CE), Arg((2, 3, 2, 2, 2)), idx((2, 2, 2, 2), 3))
BOOK.add(CE, "5d-none", F(CE, reduction="none"), Arg((2, 3, 2, 2, 2)), idx((2, 2, 2, 2), 3))

# ------------------------------------------------------------------------------ cross_entropy: probabilities
for _red in ("mean", "sum", "none"):
    BOOK.add(CE, f"probs-{_red}", F(CE, reduction=_red), Arg((3, 4)), Arg((3, 4), UNIT, grad=False))
    BOOK.add(CE, f"probs-weight-{_red}", lambda m, x, t, w, r=_red: api(m, CE)(x, t, weight=w, reduction=r),
             Arg((3, 4)), Arg((3, 4), UNIT, grad=False), Arg((4,), POS, grad=False))
    BOOK.add(CE, f"probs-smoothing-{_red}", F(CE, label_smoothing=0.2, reduction=_red), Arg((3, 4)),
             Arg((3, 4), UNIT, grad=False))
BOOK.add(CE, "probs-target-grad", F(CE), Arg((3, 4)), Arg((3, 4), UNIT))
BOOK.add(CE, "probs-target-grad-smoothing", F(CE, label_smoothing=0.1), Arg((3, 4)), Arg((3, 4), UNIT))
BOOK.add(CE, "probs-1d", F(CE), Arg((4,)), Arg((4,), UNIT, grad=False))
BOOK.add(CE, "probs-3d", F(CE), Arg((2, 4, 3)), Arg((2, 4, 3), UNIT, grad=False))
BOOK.add(CE, "probs-3d-weight-none", lambda m, x, t, w: api(m, CE)(x, t, weight=w, reduction="none"),
         Arg((2, 4, 3)), Arg((2, 4, 3), UNIT, grad=False), Arg((4,), POS, grad=False))
BOOK.add(CE, "probs-from-softmax", lambda m, x, y: api(m, CE)(x, api(m, "softmax")(y, dim=1)), Arg((3, 4)),
         Arg((3, 4)))

# --------------------------------------------------------------------------------------------------- nll_loss
NLL = "nll_loss"
for _red in ("mean", "sum", "none"):
    BOOK.add(NLL, f"3x4-{_red}", F(NLL, reduction=_red), Arg((3, 4)), idx((3,), 4))
    BOOK.add(NLL, f"1d-{_red}", F(NLL, reduction=_red), Arg((4,)), idx((), 4))
    BOOK.add(NLL, f"3d-{_red}", F(NLL, reduction=_red), Arg((2, 4, 3)), idx((2, 3), 4))
    BOOK.add(NLL, f"4d-{_red}", F(NLL, reduction=_red), Arg((2, 4, 3, 2)), idx((2, 3, 2), 4))
    BOOK.add(NLL, f"weight-ignore-{_red}", lambda m, x, t, w, r=_red: api(m, NLL)(x, t, w, ignore_index=1, reduction=r),
             Arg((6, 3)), idx((6,), 3), Arg((3,), POS, grad=False))
BOOK.add(NLL, "of-log-softmax", lambda m, x, t: api(m, NLL)(api(m, "log_softmax")(x, 1), t), Arg((3, 4)),
         idx((3,), 4))
BOOK.add(NLL, "legacy-size-average", quiet(F(NLL, size_average=False)), Arg((3, 4)), idx((3,), 4))

# ---------------------------------------------------------------------------------------------- regression
for _name in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"):
    for _red in ("mean", "sum", "none"):
        for _s in ((3, 4), (4,), ()):
            BOOK.add(_name, f"{sh(_s)}-{_red}", F(_name, reduction=_red), Arg(_s), Arg(_s, grad=False))
    BOOK.add(_name, "target-grad", F(_name), Arg((3, 4)), Arg((3, 4)))
    BOOK.add(_name, "target-grad-none", F(_name, reduction="none"), Arg((3, 4)), Arg((3, 4)))
    BOOK.add(_name, "only-target-grad", F(_name), Arg((3, 4), grad=False), Arg((3, 4)))
    BOOK.add(_name, "broadcast", quiet(F(_name)), Arg((3, 4)), Arg((4,)))
    BOOK.add(_name, "broadcast-target-grad-sum", quiet(F(_name, reduction="sum")), Arg((3, 1)), Arg((1, 4)))
    BOOK.add(_name, "same-tensor", lambda m, a, n=_name: api(m, n)(a, a * 0.5), Arg((3, 4), NZ))
for _name in ("mse_loss", "l1_loss"):
    for _red in ("mean", "sum", "none"):
        BOOK.add(_name, f"weight-{_red}", lambda m, x, y, w, n=_name, r=_red: api(m, n)(x, y, reduction=r, weight=w),
                 Arg((3, 4)), Arg((3, 4)), Arg((3, 4), POS))
    BOOK.add(_name, "legacy-reduce", quiet(F(_name, reduce=False)), Arg((3, 4)), Arg((3, 4), grad=False))
for _beta in (0.5, 2.0, 0.0):
    BOOK.add("smooth_l1_loss", f"beta{_beta}", F("smooth_l1_loss", beta=_beta), Arg((3, 4)), Arg((3, 4)))
BOOK.add("smooth_l1_loss", "beta-none", F("smooth_l1_loss", reduction="none", beta=0.3), Arg((3, 4)), Arg((3, 4)))
for _delta in (0.5, 2.0):
    BOOK.add("huber_loss", f"delta{_delta}", F("huber_loss", delta=_delta), Arg((3, 4)), Arg((3, 4)))
for _red in ("mean", "sum", "none"):
    BOOK.add("huber_loss", f"weight-{_red}", lambda m, x, y, w, r=_red: api(m, "huber_loss")(x, y, r, 0.7, weight=w),
             Arg((3, 4)), Arg((3, 4)), Arg((3, 4), POS))

# -------------------------------------------------------------------------------------- binary_cross_entropy
BCE = "binary_cross_entropy"
for _red in ("mean", "sum", "none"):
    for _s in ((3, 4), (4,), ()):
        BOOK.add(BCE, f"{sh(_s)}-{_red}", F(BCE, reduction=_red), Arg(_s, UNIT), Arg(_s, UNIT, grad=False))
    BOOK.add(BCE, f"weight-{_red}", lambda m, x, y, w, r=_red: api(m, BCE)(x, y, w, reduction=r), Arg((3, 4), UNIT),
             Arg((3, 4), UNIT, grad=False), Arg((4,), POS, grad=False))
BOOK.add(BCE, "target-grad", F(BCE), Arg((3, 4), UNIT), Arg((3, 4), UNIT))
BOOK.add(BCE, "target-grad-weight-none", lambda m, x, y, w: api(m, BCE)(x, y, weight=w, reduction="none"),
         Arg((3, 4), UNIT), Arg((3, 4), UNIT), Arg((3, 1), POS, grad=False))
BOOK.add(BCE, "of-sigmoid", lambda m, x, y: api(m, BCE)(m.sigmoid(x), y), Arg((3, 4)), Arg((3, 4), UNIT, grad=False))
BOOK.add(BCE, "legacy-size-average", quiet(F(BCE, size_average=False)), Arg((3, 4), UNIT),
         Arg((3, 4), UNIT, grad=False))
BCEL = "binary_cross_entropy_with_logits"
BOOK.add(BCEL, "positional-weight", lambda m, x, y, w: api(m, BCEL)(x, y, w), Arg((3, 4)), Arg((3, 4), UNIT),
         Arg((4,), POS, grad=False))
BOOK.add(BCEL, "2x3x4-pos-weight-none", lambda m, x, y, p: api(m, BCEL)(x, y, pos_weight=p, reduction="none"),
         Arg((2, 3, 4)), Arg((2, 3, 4), UNIT, grad=False), Arg((4,), POS, grad=False))

# ---------------------------------------------------------------------------------------------------- kl_div
KL = "kl_div"
for _red in ("mean", "sum", "none", "batchmean"):
    BOOK.add(KL, f"3x4-{_red}", quiet(F(KL, reduction=_red)), Arg((3, 4)), Arg((3, 4), UNIT, grad=False))
    BOOK.add(KL, f"log-target-{_red}", quiet(F(KL, reduction=_red, log_target=True)), Arg((3, 4)),
             Arg((3, 4), grad=False))
BOOK.add(KL, "target-grad", F(KL, reduction="sum"), Arg((3, 4)), Arg((3, 4), UNIT))
BOOK.add(KL, "log-target-grad", F(KL, reduction="batchmean", log_target=True), Arg((3, 4)), Arg((3, 4)))
BOOK.add(KL, "0d-batchmean", F(KL, reduction="batchmean"), Arg(()), Arg((), UNIT, grad=False))
BOOK.add(KL, "2x3x4-batchmean", F(KL, reduction="batchmean"), Arg((2, 3, 4)), Arg((2, 3, 4), UNIT, grad=False))
BOOK.add(KL, "of-log-softmax", lambda m, x, y: api(m, KL)(api(m, "log_softmax")(x, dim=1), y, reduction="batchmean"),
         Arg((3, 4)), Arg((3, 4), UNIT, grad=False))
BOOK.add(KL, "zero-target", lambda m, x, y: api(m, KL)(x, y * 0, reduction="sum"), Arg((3, 4)),
         Arg((3, 4), UNIT, grad=False))

# ------------------------------------------------------------------------------------------- compositions
BOOK.add("composite", "classifier", lambda m, x, w, b, t: api(m, CE)(api(m, "linear")(x, w, b), t, label_smoothing=0.1),
         Arg((5, 3)), Arg((4, 3)), Arg((4,)), idx((5,), 4))
BOOK.add("composite", "mse-of-softmax", lambda m, x, y: api(m, "mse_loss")(api(m, "softmax")(x, dim=-1), y),
         Arg((3, 4)), Arg((3, 4), UNIT, grad=False))
