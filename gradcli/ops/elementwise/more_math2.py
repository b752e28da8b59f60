"""More of torch's elementwise math: deg2rad, rad2deg, nextafter, and the incomplete gamma functions and Hurwitz's
zeta function (torch.igamma/igammac, torch.special.gammainc/gammaincc, torch.special.zeta).

Each op is declared once with its derivative rule as PyTorch's tools/autograd/derivatives.yaml writes it (quoted
beside each rule). Where derivatives.yaml says ``not_implemented`` (igamma's and igammac's derivative with respect
to ``input``, zeta's with respect to ``x``), the backward raises PyTorch's NotImplementedError for that input, and,
as derivatives.yaml gives these no ``result:`` formula, their forward-mode rule raises PyTorch's "Trying to use
forward AD with igamma that does not support it" error (with ATen's names: igamma, igammac, special_zeta). The values of the special functions come from SciPy's ``scipy.special`` (Cephes, as PyTorch's CPU
kernels), computed in float64 and rounded to the result's dtype; SciPy is imported on first use only.
"""

from __future__ import annotations

import math

import numpy as np

from ...engine.lazy import lazy
from ...engine.tensor import Tensor
from ..core.declare import composite, not_implemented_for, op, zeros_like_grad
from ..core.forward import fw_not_implemented
from .comparison import where
from .special import lgamma
from .unary import exp, log

_scipy = lazy("gradcli.ops.elementwise._scipy_special")  # SciPy, loaded when a special function first runs

_DEG_TO_RAD = math.pi / 180.0  # M_PI / 180, as ATen's deg2rad
_RAD_TO_DEG = 180.0 / math.pi  # 180 / M_PI, as ATen's rad2deg


def _floating(kernel: str, *arrays) -> None:
    """PyTorch's dispatch error for a float-only kernel given integers or bools."""
    for a in arrays:
        if a.dtype.kind != "f":
            raise not_implemented_for(kernel, a.dtype)


def _no_derivative(what: str) -> NotImplementedError:
    """PyTorch's error for a derivative that derivatives.yaml marks ``not_implemented``."""
    return NotImplementedError(f"the derivative for '{what}' is not implemented.")


# ------------------------------------------------------------------------------------- deg2rad, rad2deg

@op("deg2rad", grad_fn="Deg2RadBackward0", promote="float", method=True, jvp="elementwise",
    note="d/dx = pi / 180", formula="input: grad * pi / 180")
def deg2rad(input):
    """Degrees to radians, ``input * (pi / 180)``: integers and bools give the default float dtype. Matches
    torch.deg2rad (ATen multiplies by the scalar ``M_PI / 180`` in the tensor's dtype)."""
    return input * input.dtype.type(_DEG_TO_RAD)


@deg2rad.defvjp
def _(grad):
    # derivatives.yaml: self: deg2rad_backward(grad) (= grad * (M_PI / 180))
    return grad * _DEG_TO_RAD


@op("rad2deg", grad_fn="Rad2DegBackward0", promote="float", method=True, jvp="elementwise",
    note="d/dx = 180 / pi", formula="input: grad * 180 / pi")
def rad2deg(input):
    """Radians to degrees, ``input * (180 / pi)``: integers and bools give the default float dtype. Matches
    torch.rad2deg."""
    return input * input.dtype.type(_RAD_TO_DEG)


@rad2deg.defvjp
def _(grad):
    # derivatives.yaml: self: rad2deg_backward(grad) (= grad * (180 / M_PI))
    return grad * _RAD_TO_DEG


# ------------------------------------------------------------------------------------------- nextafter

@op("nextafter", grad_fn="NextafterBackward0", inputs=2, promote="same", method=True, jvp="elementwise",
    note="d/dinput = 1 where input != other, else 0; d/dother = 0 (PyTorch's rule)",
    formula="input: grad where input != other, else 0; other: zeros_like(grad)")
def nextafter(input, other):
    """The next floating-point value after ``input`` towards ``other`` (``other`` where they are equal),
    elementwise with broadcasting. Matches torch.nextafter, whose derivative passes ``grad`` to ``input`` where
    ``input != other`` (there the result moves with ``input``; where they are equal the result is ``other``)
    and gives ``other`` zeros, as PyTorch's (measured: torch 2.13).

    Raises:
        NotImplementedError: for integer or bool tensors (PyTorch's message).
    """
    _floating("nextafter_cpu", input, other)
    return np.nextafter(input, other)


@nextafter.defvjp
def _(grad, input, other):
    return where(input == other, 0.0, grad), zeros_like_grad(grad)


# ---------------------------------------------------------------------------- incomplete gamma functions

def _igamma_values(kernel: str, upper: bool, input, other):
    _floating(kernel, input, other)
    dtype = np.result_type(input, other)
    sc = _scipy.functions
    function = sc.gammaincc if upper else sc.gammainc
    out = function(input.astype(np.float64, copy=False), other.astype(np.float64, copy=False))
    return np.asarray(out).astype(dtype, copy=False)


def _igamma_density(input, other):
    """``exp((a - 1) log(x) - x - lgamma(a))``, the derivative of the regularized lower incomplete gamma
    function with respect to ``x`` (derivatives.yaml's formula)."""
    return exp((input - 1) * log(other) - other - lgamma(input))


@op("igamma", grad_fn="IgammaBackward0", inputs=2, promote="same", method=True,
    note="d/dother = exp((input - 1) * log(other) - other - lgamma(input)); none for input",
    formula="input: not implemented; other: grad * exp((input - 1) * log(other) - other - lgamma(input))")
def igamma(input, other):
    """The regularized lower incomplete gamma function P(input, other), elementwise with broadcasting (floating
    tensors only). Matches torch.igamma (torch.special.gammainc); its derivative exists with respect to ``other``
    only, as PyTorch's, and it has no forward mode (PyTorch's error).

    Raises:
        NotImplementedError: for integer tensors, and in backward for the derivative with respect to ``input``
            (PyTorch's messages).
    """
    return _igamma_values("igamma_cpu", False, input, other)


@igamma.defvjp
def _(grad, input, other, needs_input_grad):
    # derivatives.yaml: self: not_implemented("igamma: input")
    #                   other: grad * exp((self - 1) * log(other) - other - lgamma(self))
    if needs_input_grad[0]:
        raise _no_derivative("igamma: input")
    return None, grad * _igamma_density(input, other)


@igamma.defjvp
def _(input_t, other_t):
    # derivatives.yaml gives igamma no result: formula
    raise NotImplementedError(fw_not_implemented("igamma"))


@op("igammac", grad_fn="IgammacBackward0", inputs=2, promote="same", method=True,
    note="d/dother = -exp((input - 1) * log(other) - other - lgamma(input)); none for input",
    formula="input: not implemented; other: -grad * exp((input - 1) * log(other) - other - lgamma(input))")
def igammac(input, other):
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P(input, other), elementwise with
    broadcasting (floating tensors only). Matches torch.igammac (torch.special.gammaincc); its derivative exists
    with respect to ``other`` only, and it has no forward mode (PyTorch's error).

    Raises:
        NotImplementedError: for integer tensors, and in backward for the derivative with respect to ``input``
            (PyTorch's messages).
    """
    return _igamma_values("igammac_cpu", True, input, other)


@igammac.defvjp
def _(grad, input, other, needs_input_grad):
    # derivatives.yaml: self: not_implemented("igammac: input")
    #                   other: -grad * exp((self - 1) * log(other) - other - lgamma(self))
    if needs_input_grad[0]:
        raise _no_derivative("igammac: input")
    return None, -grad * _igamma_density(input, other)


@igammac.defjvp
def _(input_t, other_t):
    # derivatives.yaml gives igammac no result: formula
    raise NotImplementedError(fw_not_implemented("igammac"))


@composite("special.gammainc", grad_fn="IgammaBackward0",
           note="d/dother = exp((input - 1) * log(other) - other - lgamma(input)); none for input")
def gammainc(input, other):
    """torch.special.gammainc: :func:`igamma` (the regularized lower incomplete gamma function), elementwise with
    broadcasting. Matches torch.special.gammainc (grad_fn IgammaBackward0)."""
    return igamma(input, other)


@composite("special.gammaincc", grad_fn="IgammacBackward0",
           note="d/dother = -exp((input - 1) * log(other) - other - lgamma(input)); none for input")
def gammaincc(input, other):
    """torch.special.gammaincc: :func:`igammac` (the regularized upper incomplete gamma function), elementwise
    with broadcasting. Matches torch.special.gammaincc (grad_fn IgammacBackward0)."""
    return igammac(input, other)


# ------------------------------------------------------------------------------------------------ zeta

def _zeta_forward(input, other):
    """Hurwitz's zeta function of float arrays (the promoted float dtype)."""
    dtype = np.result_type(input, other)
    out = _scipy.functions.zeta(input.astype(np.float64, copy=False), other.astype(np.float64, copy=False))
    return np.asarray(out).astype(dtype, copy=False)


_ZETA_NOTE = "d/dother = -x * zeta(x + 1, other); none for x"
_ZETA_FORMULA = "input: not implemented; other: -grad * input * zeta(input + 1, other)"
_zeta_tensors = op("special_zeta", grad_fn="SpecialZetaBackward0", inputs=2, promote="float", public=False,
                   note=_ZETA_NOTE, formula=_ZETA_FORMULA)(_zeta_forward)
_zeta_number_x = op("special_zeta", grad_fn="SpecialZetaBackward1", inputs=2, promote="float", public=False,
                    note=_ZETA_NOTE, formula=_ZETA_FORMULA)(_zeta_forward)
_zeta_number_other = op("special_zeta", grad_fn="SpecialZetaBackward2", inputs=2, promote="float",
                        public=False, note=_ZETA_NOTE, formula="input: not implemented")(_zeta_forward)


def _zeta_vjp(grad, input, other, needs_input_grad):
    # derivatives.yaml special_zeta: self: not_implemented("zeta")
    #                                other: grad * -self * special_zeta(self + 1., other)
    if needs_input_grad[0]:
        raise _no_derivative("zeta")
    return None, (grad * -input * _zeta_tensors(input + 1.0, other) if needs_input_grad[1] else None)


def _zeta_jvp(input_t, other_t):
    # derivatives.yaml gives special_zeta no result: formula
    raise NotImplementedError(fw_not_implemented("special_zeta"))


for _op in (_zeta_tensors, _zeta_number_x, _zeta_number_other):
    _op.defvjp(_zeta_vjp)
    _op.defjvp(_zeta_jvp)


@composite("special.zeta", grad_fn="SpecialZetaBackward0 (tensors) | SpecialZetaBackward1 (number x) | "
           "SpecialZetaBackward2 (number other)", note=_ZETA_NOTE)
def zeta(input, other):
    """Hurwitz's zeta function ``sum_k (k + other) ** -input`` elementwise with broadcasting (``input`` is x,
    ``other`` is q; either may be a Python number): integers give the default float dtype. Matches
    torch.special.zeta (grad_fn SpecialZetaBackward0, or 1 for a number x, 2 for a number q); its derivative
    exists with respect to ``other`` only, as PyTorch's.

    Raises:
        TypeError: when neither argument is a tensor (PyTorch's message).
        NotImplementedError: in backward, for the derivative with respect to ``input``.
    """
    x_tensor = isinstance(input, (Tensor, np.ndarray))
    q_tensor = isinstance(other, (Tensor, np.ndarray))
    if x_tensor and q_tensor:
        return _zeta_tensors(input, other)
    if q_tensor:
        return _zeta_number_x(_as_number(input, "self"), other)
    if x_tensor:
        return _zeta_number_other(input, _as_number(other, "other"))
    raise TypeError(f"special_zeta(): argument 'self' (position 1) must be Tensor, not {type(input).__name__}")


def _as_number(v, name: str):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"special_zeta(): argument '{name}' must be Number, not {type(v).__name__}")
    return v
