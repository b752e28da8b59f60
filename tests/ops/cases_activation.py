"""Case book of the activations (gradcli/ops/activation.py): relu relu6 leaky_relu elu selu gelu silu softplus
hardtanh, with their keyword arguments (negative_slope, alpha, approximate, beta, threshold, min_val, max_val).

tests/ops/test_ops.py runs every case through gradcheck, gradgradcheck and the PyTorch oracle (torch.nn.functional).
Inputs avoid the kinks (domain "nonzero" where the kink is at 0); the kinks themselves are compared with PyTorch
at exact points in tests/ops/test_ops_elementwise.py.
"""

from __future__ import annotations

from helpers import Arg, CaseBook, api, sh

BOOK = CaseBook()
R, NZ = "real", "nonzero"
SHAPES = [(), (4,), (3, 4), (3, 1), (2, 3, 4)]



def call(name, *args, **kw):
    """``fn(m, x)`` calling ``F.name(x, *args, **kw)`` (torch.nn.functional for torch)."""
    return lambda m, x: api(m, name)(x, *args, **kw)


ACTIVATIONS = {  # name -> domain (away from the kink at 0 where there is one)
    "leaky_relu": NZ, "elu": NZ, "selu": NZ, "gelu": R, "silu": R, "softplus": R, "hardtanh": R, "relu6": R,
}
for _name, _dom in ACTIVATIONS.items():
    for _s in SHAPES:
        BOOK.add(_name, sh(_s), call(_name), Arg(_s, _dom))

# keyword arguments
for _slope in (0.2, -0.5, 2.0, 0):
    BOOK.add("leaky_relu", f"slope-{_slope}", call("leaky_relu", negative_slope=_slope), Arg((3, 4), NZ))
BOOK.add("leaky_relu", "slope-positional", call("leaky_relu", 0.3), Arg((3, 4), NZ))
for _alpha in (0.5, 2.0, -1.0):
    BOOK.add("elu", f"alpha-{_alpha}", call("elu", alpha=_alpha), Arg((3, 4), NZ))
BOOK.add("elu", "alpha-positional", call("elu", 1.5), Arg((2, 3, 4), NZ))
for _mode in ("none", "tanh"):
    BOOK.add("gelu", f"approximate-{_mode}", call("gelu", approximate=_mode), Arg((3, 4)))
    BOOK.add("gelu", f"approximate-{_mode}-wide", lambda m, x, md=_mode: api(m, "gelu")(x * 2, approximate=md),
             Arg((2, 3, 4)))
BOOK.add("gelu", "tanh-0d", call("gelu", approximate="tanh"), Arg(()))
for _id, _kw in (("beta-2", {"beta": 2.0}), ("beta-0.5", {"beta": 0.5}),
                 ("threshold-1", {"threshold": 1.0}), ("beta-3-threshold-2", {"beta": 3.0, "threshold": 2.0})):
    BOOK.add("softplus", _id, call("softplus", **_kw), Arg((3, 4)))
BOOK.add("softplus", "positional", call("softplus", 2.0, 3.0), Arg((2, 3, 4)))
BOOK.add("softplus", "large", lambda m, x: api(m, "softplus")(x * 15), Arg((3, 4)))
for _id, _kw in (("bounds", {"min_val": -0.5, "max_val": 1.5}), ("int-bounds", {"min_val": -1, "max_val": 1}),
                 ("narrow", {"min_val": 0.2, "max_val": 0.4}), ("positional", None)):
    _f = call("hardtanh", -0.25, 0.75) if _kw is None else call("hardtanh", **_kw)
    BOOK.add("hardtanh", _id, _f, Arg((3, 4)))
BOOK.add("relu6", "wide", lambda m, x: api(m, "relu6")(x * 5), Arg((2, 3, 4)))
BOOK.add("relu", "F", call("relu"), Arg((2, 3, 4), NZ))
BOOK.add("relu", "inplace-false", call("relu", inplace=False), Arg((3, 4), NZ))
BOOK.add("silu", "wide", lambda m, x: api(m, "silu")(x * 8), Arg((3, 4)))

# activations inside a small network: gradients flow through two activations and a shared input
BOOK.add("composite", "activation-mlp",
         lambda m, x, w: api(m, "gelu")(api(m, "silu")(x @ w) + api(m, "softplus")(x @ w, beta=2.0)).sum(dim=0),
         Arg((3, 4)), Arg((4, 2)))
BOOK.add("composite", "elu-of-leaky", lambda m, x: api(m, "elu")(api(m, "leaky_relu")(x, 0.5) - 0.3, alpha=0.7),
         Arg((3, 4), NZ))
