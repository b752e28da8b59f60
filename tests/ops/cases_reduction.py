"""Case book of the reductions (gradcli/ops/reduction.py): prod, max/min, amax/amin, argmax/argmin, var/std,
logsumexp, cumsum, and more forms of sum/mean/norm than tests/ops/test_ops.py has.

Every case runs through tests/ops/test_ops.py: gradcheck, gradgradcheck and the torch oracle (values, dtypes,
grad_fn names, first and second derivatives). Subgradients at ties and zeros, which finite differences cannot
check, are compared with PyTorch in tests/ops/test_ops_reduction.py.
"""

from __future__ import annotations

from helpers import Arg, CaseBook, api

BOOK = CaseBook()
R, NZ, POS, INT, BOOL = "real", "nonzero", "pos", "int", "bool"


def call(name, *args, **kwargs):
    """``m.<name>(a, *args, **kwargs)`` as a case function."""
    return lambda m, a: getattr(m, name)(a, *args, **kwargs)


def method(name, *args, **kwargs):
    """``a.<name>(*args, **kwargs)`` as a case function."""
    return lambda m, a: getattr(a, name)(*args, **kwargs)


# ---------------------------------------------------------------------------------------------- sum, mean
for _name in ("sum", "mean"):
    BOOK.add(_name, "dim-empty-tuple", call(_name, dim=()), Arg((3, 4)))
    BOOK.add(_name, "dim-list", call(_name, dim=[0, 2]), Arg((2, 3, 4)))
BOOK.add("sum", "int", call("sum", 1), Arg((3, 4), INT))
BOOK.add("sum", "bool", call("sum"), Arg((3, 4), BOOL))

# ----------------------------------------------------------------------------------------------------- prod
PROD = [("0d", (), {}), ("4", (4,), {}), ("3x4", (3, 4), {}), ("2x3x4", (2, 3, 4), {}),
        ("3x4-dim0", (3, 4), {"dim": 0}), ("3x4-dim1", (3, 4), {"dim": 1}), ("3x4-dim-1-keepdim", (3, 4),
                                                                             {"dim": -1, "keepdim": True}),
        ("2x3x4-dim1", (2, 3, 4), {"dim": 1}), ("0d-dim0", (), {"dim": 0}), ("3x1-dim1", (3, 1), {"dim": 1})]
for _id, _s, _kw in PROD:
    BOOK.add("prod", _id, call("prod", **_kw), Arg(_s))
BOOK.add("prod", "method", method("prod", 1), Arg((3, 4)))
BOOK.add("prod", "dtype-float64", lambda m, a: m.prod(a, dtype=m.float64), Arg((3, 4)))
BOOK.add("prod", "int", call("prod"), Arg((3, 4), INT))
BOOK.add("prod", "int-dim", call("prod", 0), Arg((3, 4), INT))
BOOK.add("prod", "bool", call("prod"), Arg((4,), BOOL))

# ---------------------------------------------------------------------------------------------- max / min
for _name in ("max", "min"):
    for _s in ((), (4,), (3, 4), (2, 3, 4)):
        BOOK.add(_name, f"all-{'x'.join(map(str, _s)) or '0d'}", call(_name), Arg(_s))
    BOOK.add(_name, "dim1-values", lambda m, a, n=_name: getattr(m, n)(a, 1).values, Arg((3, 4)))
    BOOK.add(_name, "dim0-index0", lambda m, a, n=_name: getattr(m, n)(a, dim=0)[0], Arg((3, 4)))
    BOOK.add(_name, "dim-1-keepdim", lambda m, a, n=_name: getattr(m, n)(a, -1, keepdim=True).values,
             Arg((2, 3, 4)))
    BOOK.add(_name, "dim-unpacked", lambda m, a, n=_name: (lambda v, i: v * 2)(*getattr(m, n)(a, 2)),
             Arg((2, 3, 4)))
    BOOK.add(_name, "0d-dim0", lambda m, a, n=_name: getattr(m, n)(a, 0).values, Arg(()))
    BOOK.add(_name, "method-dim", lambda m, a, n=_name: getattr(a, n)(1)[0], Arg((3, 4)))
    BOOK.add(_name, "method-all", method(_name), Arg((3, 4)))
    BOOK.add(_name, "int-all", call(_name), Arg((3, 4), INT))
    BOOK.add(_name, "int-dim", lambda m, a, n=_name: getattr(m, n)(a, 1).values, Arg((3, 4), INT))
    BOOK.add(_name, "values-used-twice", lambda m, a, n=_name: (lambda r: r.values * r[0])(getattr(m, n)(a, 0)),
             Arg((3, 4)))
from gradcli.ops import REGISTRY as _REGISTRY  # max(a, b) is maximum(a, b)
for _name, _pair in (("max", "maximum"), ("min", "minimum")):
    if _pair in _REGISTRY:
        BOOK.add(_name, "two-tensors", lambda m, a, b, n=_name: getattr(m, n)(a, b), Arg((3, 4)), Arg((4,)))
        BOOK.add(_name, "other-keyword", lambda m, a, b, n=_name: getattr(m, n)(a, other=b), Arg((3, 4)),
                 Arg((3, 4)))

# -------------------------------------------------------------------------------------------- amax / amin
AMAX = [("0d", (), {}), ("4", (4,), {}), ("3x4", (3, 4), {}), ("3x4-dim0", (3, 4), {"dim": 0}),
        ("3x4-dim1-keepdim", (3, 4), {"dim": 1, "keepdim": True}), ("2x3x4-dim02", (2, 3, 4), {"dim": (0, 2)}),
        ("2x3x4-dim-1", (2, 3, 4), {"dim": -1}), ("2x3x4-empty-dims-keepdim", (2, 3, 4), {"dim": (), "keepdim": True}),
        ("0d-dim0", (), {"dim": 0})]
for _name in ("amax", "amin"):
    for _id, _s, _kw in AMAX:
        BOOK.add(_name, _id, call(_name, **_kw), Arg(_s))
    BOOK.add(_name, "method", method(_name, 1), Arg((3, 4)))
    BOOK.add(_name, "int", call(_name, 0), Arg((3, 4), INT))

# ----------------------------------------------------------------------------------------- argmax / argmin
for _name in ("argmax", "argmin"):
    for _id, _s, _kw in (("all", (3, 4), {}), ("dim0", (3, 4), {"dim": 0}), ("dim-1-keepdim", (2, 3, 4),
                                                                             {"dim": -1, "keepdim": True}),
                         ("all-keepdim", (3, 4), {"keepdim": True}), ("0d", (), {}), ("0d-dim0", (), {"dim": 0}),
                         ("int", (3, 4), {"dim": 1})):
        BOOK.add_nd(_name, _id, call(_name, **_kw), Arg(_s, INT if _id == "int" else R))
    BOOK.add_nd(_name, "method", method(_name, 1), Arg((3, 4)))
    BOOK.add_nd(_name, "ties-first", lambda m, a, n=_name: getattr(m, n)(a * 0, 1), Arg((3, 4)))

# ------------------------------------------------------------------------------------------------ var / std
VAR = [("4", (4,), {}), ("3x4", (3, 4), {}), ("2x3x4", (2, 3, 4), {}), ("3x4-dim1", (3, 4), {"dim": 1}),
       ("3x4-dim0-keepdim", (3, 4), {"dim": 0, "keepdim": True}), ("2x3x4-dim02", (2, 3, 4), {"dim": (0, 2)}),
       ("2x3x4-dim-1-keepdim", (2, 3, 4), {"dim": -1, "keepdim": True}),
       ("correction0", (3, 4), {"correction": 0}), ("correction2-dim1", (3, 4), {"dim": 1, "correction": 2}),
       ("unbiased-false", (3, 4), {"dim": 1, "unbiased": False}), ("unbiased-true", (3, 4), {"unbiased": True}),
       ("0d-correction0", (), {"correction": 0}), ("dim-list", (2, 3, 4), {"dim": [1, 2]}),
       ("correction-float", (3, 4), {"dim": 1, "correction": 0.5})]
for _name in ("var", "std"):
    for _id, _s, _kw in VAR:
        BOOK.add(_name, _id, call(_name, **_kw), Arg(_s))
    BOOK.add(_name, "positional-unbiased", lambda m, a, n=_name: getattr(m, n)(a, 1, False), Arg((3, 4)))
    BOOK.add(_name, "bool-first", lambda m, a, n=_name: getattr(m, n)(a, False), Arg((3, 4)))
    BOOK.add(_name, "method", method(_name, 0), Arg((3, 4)))

# ------------------------------------------------------------------------------------------------ logsumexp
LSE = [("4-dim0", (4,), 0, {}), ("3x4-dim1", (3, 4), 1, {}), ("3x4-dim0-keepdim", (3, 4), 0, {"keepdim": True}),
       ("2x3x4-dims", (2, 3, 4), (0, 2), {}), ("2x3x4-dim-1", (2, 3, 4), -1, {}), ("0d", (), 0, {}),
       ("3x1-dim1", (3, 1), 1, {})]
for _id, _s, _d, _kw in LSE:
    BOOK.add("logsumexp", _id, call("logsumexp", _d, **_kw), Arg(_s))
BOOK.add("logsumexp", "method", method("logsumexp", 1), Arg((3, 4)))
BOOK.add("logsumexp", "large", lambda m, a: m.logsumexp(a * 100, 1), Arg((3, 4)))
BOOK.add("logsumexp", "int", call("logsumexp", 1), Arg((3, 4), INT))

# --------------------------------------------------------------------------------------------------- cumsum
for _id, _s, _d in (("4-dim0", (4,), 0), ("3x4-dim1", (3, 4), 1), ("3x4-dim0", (3, 4), 0),
                    ("2x3x4-dim-1", (2, 3, 4), -1), ("2x3x4-dim1", (2, 3, 4), 1), ("0d", (), 0),
                    ("3x1-dim1", (3, 1), 1)):
    BOOK.add("cumsum", _id, call("cumsum", _d), Arg(_s))
BOOK.add("cumsum", "method", method("cumsum", 1), Arg((3, 4)))
BOOK.add("cumsum", "dtype-float64", lambda m, a: m.cumsum(a, 1, dtype=m.float64), Arg((3, 4)))
BOOK.add("cumsum", "int", call("cumsum", 0), Arg((3, 4), INT))
BOOK.add("cumsum", "bool", call("cumsum", 0), Arg((4,), BOOL))

# ----------------------------------------------------------------------------------------------------- norm
for _id, _s, _dom, _kw in (("p1.5-3x4", (3, 4), NZ, {"p": 1.5}), ("p4-dim1", (3, 4), NZ, {"p": 4, "dim": 1}),
                           ("p-inf-dim0-keepdim", (3, 4), NZ, {"p": float("-inf"), "dim": 0, "keepdim": True}),
                           ("p0.5-dim-1", (2, 3, 4), NZ, {"p": 0.5, "dim": -1}),
                           ("fro-dim-tuple", (2, 3, 4), R, {"dim": (1, 2)}),
                           ("p0-dim1", (3, 4), NZ, {"p": 0, "dim": 1})):
    BOOK.add("norm", _id, call("norm", **_kw), Arg(_s, _dom))

BOOK.add("norm", "dtype-float64", lambda m, a: m.norm(a, dtype=m.float64), Arg((3, 4)))

# ---------------------------------------------------------------------------------------------- sum_to_size
BOOK.add("sum_to_size", "to-0d", lambda m, a: api(m, "sum_to_size")(a, ()), Arg((3, 4)))
BOOK.add("sum_to_size", "nonleaf-same-size", lambda m, a: api(m, "sum_to_size")(a * 2, (3, 4)), Arg((3, 4)))

# ------------------------------------------------------------------------------------------- compositions
BOOK.add("composite", "standardize", lambda m, x: (x - x.mean(1, keepdim=True)) / x.std(1, keepdim=True),
         Arg((3, 4)))
BOOK.add("composite", "softmax-by-hand", lambda m, x: m.exp(x - m.logsumexp(x, 1, keepdim=True)), Arg((3, 4)))
BOOK.add("composite", "max-minus-min", lambda m, x: m.max(x, 1).values - m.amin(x, 1) + x.prod(0).sum(),
         Arg((3, 4)))
