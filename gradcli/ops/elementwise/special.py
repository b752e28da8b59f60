"""Special functions and the remaining elementwise math of torch and torch.special: erfc, erfinv, erfcx,
lgamma, digamma, polygamma, mvlgamma, the modified Bessel functions i0/i0e/i1/i1e, ndtr, ndtri, log_ndtr, logit,
expit, sinc, entr, xlogy, xlog1py, the inverse hyperbolic functions, hypot, copysign, fmax/fmin, nan_to_num,
lerp, addcmul/addcdiv, the logical ops, gcd/lcm, heaviside.

Each op is declared once with its derivative rule, written as PyTorch's tools/autograd/derivatives.yaml writes it
(the formula is quoted beside each rule), and its forward-mode rule derived from it where derivatives.yaml says
``auto_element_wise``. The values of the transcendental functions come from SciPy's ``scipy.special`` (the same
Cephes algorithms PyTorch's CPU kernels use), computed in float64 and rounded to the input's dtype; SciPy is
imported on first use only. ``torch.special`` names (``special.expit``, ``special.psi``, ...) are registered as
``"special.<name>"`` (the namespace is :mod:`gradcli.api.special`).
"""

from __future__ import annotations

import math

import numpy as np

from ...engine import dtypes
from ...engine.lazy import lazy
from ...engine.tensor import Tensor, to_tensor
from ..core.declare import REGISTRY, composite, not_implemented_for, op, tensor_method, zeros_like_grad
from .comparison import isfinite, isnan, where
from .unary import cos, erf, exp, log, pow_scalar, reciprocal, sign, sin

_scipy = lazy("gradcli.ops.elementwise._scipy_special")  # SciPy, loaded when a special function first runs


def _sc():
    """scipy.special."""
    return _scipy.functions

_loss = lazy("gradcli.ops.nn.loss")  # aten's mul.Scalar (MulBackward1), which special_ndtr ends with

_SQRT_PI = 1.7724538509055159  # sqrt(M_PI)
_TWO_OVER_SQRT_PI = 1.1283791670955126  # M_2_SQRTPI
_SQRT_2PI = 2.5066282746310002  # std::sqrt(2 * M_PI)
_PI = math.pi
_SQRT1_2 = 0.7071067811865476  # M_SQRT1_2


def _float64(fn):
    """``fn`` (a function of a float64 array, e.g. one of scipy.special's) computed in float64 and rounded to
    the input's floating dtype."""
    def forward(input):
        return np.asarray(fn(input.astype(np.float64, copy=False))).astype(input.dtype, copy=False)
    return forward


def _elementwise(name: str, grad_fn: str, forward, vjp, *, note: str, doc: str, domain=None, method=True,
                 aliases=()):
    """Declare a one-input elementwise op (integers give the default float dtype) and its derivative rule."""
    forward.__name__ = forward.__qualname__ = name.replace(".", "_")
    forward.__doc__ = doc
    return op(name, grad_fn=grad_fn, note=note, promote="float", method=method, aliases=aliases,
              domain=domain, jvp="elementwise")(forward).defvjp(vjp)


def _float_kernel(name):
    def check(input):
        if input.dtype.kind == "b":
            raise not_implemented_for(name, input.dtype)
    return check


# ------------------------------------------------------------------------------- error function family

erfc = _elementwise(
    "erfc", "ErfcBackward0", _float64(lambda x: _sc().erfc(x)),
    # derivatives.yaml: -2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad
    lambda grad, input: -_TWO_OVER_SQRT_PI * exp(-pow_scalar(input, 2)) * grad,
    note="d/dx = -2 / sqrt(pi) * exp(-x^2)", doc="The complementary error function ``1 - erf(input)``. Matches "
    "torch.erfc (torch.special.erfc).")

erfinv = _elementwise(
    "erfinv", "ErfinvBackward0", _float64(lambda x: _sc().erfinv(x)),
    # derivatives.yaml: 0.5 * sqrt(M_PI) * exp(self.erfinv().pow(2)) * grad (self saved, not the result)
    lambda grad, input: 0.5 * _SQRT_PI * exp(pow_scalar(erfinv(input), 2)) * grad,
    note="d/dx = sqrt(pi) / 2 * exp(erfinv(x)^2)",
    doc="The inverse error function on (-1, 1) (±inf at ±1, nan outside). Matches torch.erfinv.")

erfcx = _elementwise(
    "special.erfcx", "SpecialErfcxBackward0", _float64(lambda x: _sc().erfcx(x)),
    # derivatives.yaml: (2.0 * self * result - 2.0 / sqrt(M_PI)) * grad
    lambda grad, input, result: (2.0 * input * result - _TWO_OVER_SQRT_PI) * grad,
    note="d/dx = 2 * x * erfcx(x) - 2 / sqrt(pi)", method=False,
    doc="The scaled complementary error function ``exp(x^2) * erfc(x)``. Matches torch.special.erfcx.")


# ----------------------------------------------------------------------------------- gamma family

def _polygamma_forward(n, input):
    dtype = input.dtype
    x = input.astype(np.float64, copy=False)
    out = _sc().digamma(x) if n == 0 else _sc().polygamma(n, x)
    return np.asarray(out).astype(dtype, copy=False)


@op("_polygamma", jvp="elementwise", grad_fn="PolygammaBackward0", promote="float", public=False,
    note="d/dx = polygamma(n + 1, x)")
def _polygamma(input, n):
    """``polygamma(n, input)``, the n-th derivative of digamma (torch.polygamma, the tensor second)."""
    return _polygamma_forward(n, input)


@_polygamma.defvjp
def _(grad, input, n):
    # derivatives.yaml: grad * polygamma(n + 1, self)
    return grad * _polygamma(input, n + 1)


@composite("polygamma", grad_fn="PolygammaBackward0", note="d/dx = polygamma(n + 1, x)")
def polygamma(n, input):
    """The n-th derivative of the digamma function (``n >= 0``, an int). Matches torch.polygamma and
    torch.special.polygamma; ``Tensor.polygamma(n)`` takes the tensor first.

    Raises:
        RuntimeError: for a negative ``n`` (PyTorch's message).
    """
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _polygamma(input, n)


@tensor_method("polygamma")
def _tensor_polygamma(self, n):
    """``self.polygamma(n)``: torch.Tensor.polygamma (the tensor first)."""
    return polygamma(n, self)


digamma = _elementwise(
    "digamma", "DigammaBackward0", lambda input: _polygamma_forward(0, input),
    # derivatives.yaml: grad * polygamma(1, self)
    lambda grad, input: grad * _polygamma(input, 1),
    note="d/dx = polygamma(1, x)", doc="The logarithmic derivative of the gamma function (``-inf`` at 0, nan at "
    "the negative integers). Matches torch.digamma (torch.special.digamma, special.psi).")

lgamma = _elementwise(
    "lgamma", "LgammaBackward0", _float64(lambda x: _sc().gammaln(x)),
    # derivatives.yaml: grad * digamma(self)
    lambda grad, input: grad * digamma(input),
    note="d/dx = digamma(x)", doc="The log of the absolute value of the gamma function. Matches torch.lgamma "
    "(torch.special.gammaln).")


@op("mvlgamma", jvp="elementwise", grad_fn="MvlgammaBackward0", promote="float", method=True,
    note="d/dx = sum over i < p of digamma(x - i / 2)")
def mvlgamma(input, p):
    """The multivariate log-gamma function of dimension ``p``: ``p (p - 1) / 4 log(pi) + sum_{i<p} lgamma(x -
    i / 2)``. Matches torch.mvlgamma (torch.special.multigammaln).

    Raises:
        RuntimeError: where an element is not greater than ``(p - 1) / 2`` (PyTorch's message).
    """
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if not bool(np.all(input > (p - 1) / 2)):
        raise RuntimeError("All elements must be greater than (p-1)/2")
    x = input.astype(np.float64, copy=False)
    out = sum(_sc().gammaln(x - i / 2) for i in range(p)) + p * (p - 1) / 4 * math.log(_PI)
    return np.asarray(out).astype(input.dtype, copy=False)


@mvlgamma.defvjp
def _(grad, input, p):
    # derivatives.yaml mvlgamma_backward: grad * (self.unsqueeze(-1) - arange(p) / 2).digamma().sum(-1)
    total = digamma(input)
    for i in range(1, p):
        total = total + digamma(input - i / 2)
    return grad * total


# ------------------------------------------------------------------------------------ Bessel functions

def _i1_forward(input):
    return _float64(lambda x: _sc().i1(x))(input)


@op("special.i1", jvp="elementwise", grad_fn="SpecialI1Backward0", promote="float",
    note="d/dx = i0(x) - i1(x) / x (1/2 at 0)")
def i1(input):
    """The modified Bessel function of the first kind of order 1. Matches torch.special.i1."""
    return _i1_forward(input)


@op("i0", jvp="elementwise", grad_fn="I0Backward0", promote="float", method=True, note="d/dx = i1(x)")
def _i0(input):
    """The modified Bessel function of the first kind of order 0. Matches torch.i0 (torch.special.i0)."""
    return _float64(lambda x: _sc().i0(x))(input)


i0 = _i0


@_i0.defvjp
def _(grad, input):
    # derivatives.yaml: grad * at::special_i1(self)
    return grad * i1(input)


@i1.defvjp
def _(grad, input, result):
    # derivatives.yaml i1_backward: at::where(self == 0, 0.5, i0(self) - result * self.reciprocal()) * grad
    return where(input == 0, 0.5, _i0(input) - result * reciprocal(input)) * grad


@op("special.i1e", jvp="elementwise", grad_fn="SpecialI1EBackward0", promote="float",
    note="d/dx = i0e(x) - i1e(x) * (sign(x) + 1 / x) (1/2 at 0)")
def i1e(input):
    """The exponentially scaled modified Bessel function of order 1, ``exp(-|x|) i1(x)``. Matches
    torch.special.i1e."""
    return _float64(lambda x: _sc().i1e(x))(input)


@op("special.i0e", jvp="elementwise", grad_fn="SpecialI0EBackward0", promote="float", note="d/dx = i1e(x) - sign(x) * i0e(x)")
def i0e(input):
    """The exponentially scaled modified Bessel function of order 0, ``exp(-|x|) i0(x)``. Matches
    torch.special.i0e."""
    return _float64(lambda x: _sc().i0e(x))(input)


@i0e.defvjp
def _(grad, input, result):
    # derivatives.yaml: grad * (at::special_i1e(self) - self.sgn() * result)
    return grad * (i1e(input) - sign(input) * result)


@i1e.defvjp
def _(grad, input, result):
    # derivatives.yaml i1e_backward: where(self == 0, 0.5, i0e(self) - result * (self.sgn() + self.reciprocal()))
    return where(input == 0, 0.5, i0e(input) - result * (sign(input) + reciprocal(input))) * grad


# ------------------------------------------------------------------------------ normal distribution

@composite("special.ndtr", grad_fn="MulBackward1", note="d/dx = exp(-x^2 / 2) / sqrt(2 pi)")
def ndtr(input):
    """The standard normal cumulative distribution function, ``(1 + erf(x / sqrt(2))) / 2`` (computed so, as
    PyTorch's special_ndtr is, hence its grad_fn MulBackward1). Matches torch.special.ndtr."""
    x = input if isinstance(input, Tensor) else to_tensor(input)
    if x.dtype.name not in ("float16", "float32", "float64"):
        x = x.to(dtypes.get_default_dtype())
    return _loss._mul_scalar(1 + erf(x * _SQRT1_2), 0.5)


ndtri = _elementwise(
    "special.ndtri", "SpecialNdtriBackward0", _float64(lambda x: _sc().ndtri(x)),
    # derivatives.yaml: grad * std::sqrt(2 * M_PI) * (result.square() / 2).exp()
    lambda grad, result: grad * _SQRT_2PI * exp(pow_scalar(result, 2) / 2),
    note="d/dp = sqrt(2 pi) * exp(ndtri(p)^2 / 2)", method=False,
    doc="The inverse of the standard normal CDF on (0, 1). Matches torch.special.ndtri.")

log_ndtr = _elementwise(
    "special.log_ndtr", "SpecialLogNdtrBackward0", _float64(lambda x: _sc().log_ndtr(x)),
    # derivatives.yaml: grad / std::sqrt(2 * M_PI) * (result + self.pow(2) / 2).neg().exp()
    lambda grad, input, result: grad / _SQRT_2PI * exp(-(result + pow_scalar(input, 2) / 2)),
    note="d/dx = exp(-x^2 / 2) / (sqrt(2 pi) * ndtr(x))", method=False,
    doc="The log of the standard normal CDF, accurate in both tails. Matches torch.special.log_ndtr.")


# -------------------------------------------------------------------------------- logit, sinc, entr

@op("logit", jvp="elementwise", grad_fn="LogitBackward0", promote="float", method=True,
    note="d/dx = 1 / (x (1 - x)) on [eps, 1 - eps], 0 outside (nan outside [0, 1] without eps)")
def logit(input, eps=None):
    """``log(x / (1 - x))``, with ``x`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given. Matches torch.logit
    (torch.special.logit)."""
    x = input
    if eps is not None:
        x = np.clip(x, x.dtype.type(eps), x.dtype.type(1 - eps))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x / (1 - x)).astype(input.dtype, copy=False)


@logit.defvjp
def _(grad, input, eps):
    # derivatives.yaml logit_backward: eps None: where(x < 0 | x > 1, nan, grad / (x * (1 - x)));
    # else where(x < lo | x > hi, 0, grad / (x * (1 - x)))
    inside = grad / (input * (1 - input))
    if eps is None:
        return where((input < 0) | (input > 1), float("nan"), inside)
    return where((input < eps) | (input > 1 - eps), 0.0, inside)


def _sinc(input):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sinc(input).astype(input.dtype, copy=False)


sinc = _elementwise(
    "sinc", "SincBackward0", _sinc,
    # derivatives.yaml sinc_backward: ((M_PI * self * (M_PI * self).cos() - (M_PI * self).sin())
    #   / (M_PI * self * self)).masked_fill_(self == 0, 0) * grad
    lambda grad, input: where(input == 0, 0.0, (_PI * input * cos(_PI * input) - sin(_PI * input))
                              / (_PI * input * input) * grad),
    note="d/dx = (cos(pi x) pi x - sin(pi x)) / (pi x^2), 0 at 0",
    doc="The normalized sinc function ``sin(pi x) / (pi x)`` (1 at 0). Matches torch.sinc (torch.special.sinc).")


def _entr(input):
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(input > 0, -input * np.log(np.where(input > 0, input, 1)), np.where(input == 0, 0, -np.inf))
    return np.where(np.isnan(input), input, out).astype(input.dtype, copy=False)


entr = _elementwise(
    "special.entr", "SpecialEntrBackward0", _entr,
    # derivatives.yaml: grad * (-(1 + self.log()))
    lambda grad, input: grad * -(1 + log(input)),
    note="d/dx = -(1 + log(x))", method=False,
    doc="``-x log(x)`` for x > 0, 0 at 0, -inf for x < 0. Matches torch.special.entr.")


# -------------------------------------------------------------------------------- xlogy, xlog1py

@op("xlogy", jvp="elementwise", grad_fn="XlogyBackward0", inputs=2, promote="float", method=True,
    note="d/dinput = log(other) (0 where input = 0 and other <= 0), d/dother = input / other")
def xlogy(input, other):
    """``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is nan). Matches torch.xlogy
    (torch.special.xlogy)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(input == 0, 0, input * np.log(other))
    return np.where(np.isnan(other), other, out).astype(np.result_type(input, other), copy=False)


@xlogy.defvjp
def _(grad, input, other, needs_input_grad):
    # derivatives.yaml: self: at::xlogy(grad, other).masked_fill((self == 0.) & (other <= 0.), 0.)
    #                   other: grad * self / other
    return (where((input == 0) & (other <= 0), 0.0, xlogy(grad, other)) if needs_input_grad[0] else None,
            grad * input / other if needs_input_grad[1] else None)


@op("special.xlog1py", jvp="elementwise", grad_fn="SpecialXlog1PyBackward0", inputs=2, promote="float",
    note="d/dinput = log1p(other) (0 where input = 0 and other <= -1), d/dother = input / (other + 1)")
def xlog1py(input, other):
    """``input * log1p(other)``, 0 where ``input`` is 0 (unless ``other`` is nan). Matches
    torch.special.xlog1py."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(input == 0, 0, input * np.log1p(other))
    return np.where(np.isnan(other), other, out).astype(np.result_type(input, other), copy=False)


@xlog1py.defvjp
def _(grad, input, other, needs_input_grad):
    # derivatives.yaml: self: at::special_xlog1py(grad, other).masked_fill((self == 0.) & (other <= -1.), 0.)
    #                   other: grad * self / (other + 1)
    return (where((input == 0) & (other <= -1), 0.0, xlog1py(grad, other)) if needs_input_grad[0] else None,
            grad * input / (other + 1) if needs_input_grad[1] else None)


# ---------------------------------------------------------------------- inverse hyperbolic functions

def _numpy(ufunc):
    def forward(input):
        with np.errstate(divide="ignore", invalid="ignore"):
            return ufunc(input)
    return forward


asinh = _elementwise(
    "asinh", "AsinhBackward0", _numpy(np.arcsinh),
    # derivatives.yaml: grad * (self.pow(2) + 1).rsqrt()
    lambda grad, input: grad * reciprocal((pow_scalar(input, 2) + 1) ** 0.5),
    note="d/dx = 1 / sqrt(x^2 + 1)", aliases=("arcsinh",),
    doc="Inverse hyperbolic sine. Matches torch.asinh (alias arcsinh).")
acosh = _elementwise(
    "acosh", "AcoshBackward0", _numpy(np.arccosh),
    # derivatives.yaml: grad * (self.pow(2) - 1).rsqrt()
    lambda grad, input: grad * reciprocal((pow_scalar(input, 2) - 1) ** 0.5),
    note="d/dx = 1 / sqrt(x^2 - 1)", aliases=("arccosh",),
    doc="Inverse hyperbolic cosine (nan below 1). Matches torch.acosh (alias arccosh).")
atanh = _elementwise(
    "atanh", "AtanhBackward0", _numpy(np.arctanh),
    # derivatives.yaml: grad * 1 / (1 - self.pow(2))
    lambda grad, input: grad * 1 / (1 - pow_scalar(input, 2)),
    note="d/dx = 1 / (1 - x^2)", aliases=("arctanh",),
    doc="Inverse hyperbolic tangent (±inf at ±1, nan outside). Matches torch.atanh (alias arctanh).")


# ---------------------------------------------------------------------------- binary elementwise ops

@op("hypot", jvp="elementwise", grad_fn="HypotBackward0", inputs=2, promote="float", method=True,
    note="d/dinput = input / result, d/dother = other / result")
def hypot(input, other):
    """``sqrt(input^2 + other^2)`` without overflow. Matches torch.hypot."""
    return np.hypot(input, other)


@hypot.defvjp
def _(grad, input, other, result):
    # derivatives.yaml: self: grad * self / result; other: grad * other / result
    return grad * input / result, grad * other / result


@op("copysign", jvp="elementwise", grad_fn="CopysignBackward0", inputs=2, promote="float", method=True,
    note="d/dinput = result / input (0 where input = 0), d/dother = 0")
def copysign(input, other):
    """``|input|`` with the sign of ``other`` (signed zeros count). Matches torch.copysign."""
    return np.copysign(input, other)


@copysign.defvjp
def _(grad, input, result):
    # derivatives.yaml copysign_tensor_self_backward: ratio = result / self, 0 where self == 0; other: zeros
    return grad * where(input == 0, 0.0, result / input), zeros_like_grad(grad)


@op("fmax", jvp="elementwise", grad_fn="FmaxBackward0", inputs=2, promote="same", method=True,
    note="d/dinput = 1 where input >= other or other is nan, d/dother = the rest")
def fmax(input, other):
    """The elementwise maximum ignoring nan (nan only where both are nan). Matches torch.fmax."""
    return np.fmax(input, other)


@fmax.defvjp
def _(grad, input, other):
    # derivatives.yaml: self: grad.masked_fill((self >= other).logical_or_(other.isnan()).logical_not_(), 0)
    #                   other: grad.masked_fill((self >= other).logical_or_(other.isnan()), 0)
    pick = (input >= other) | isnan(other)
    return where(pick, grad, 0.0), where(pick, 0.0, grad)


@op("fmin", jvp="elementwise", grad_fn="FminBackward0", inputs=2, promote="same", method=True,
    note="d/dinput = 1 where input <= other or other is nan, d/dother = the rest")
def fmin(input, other):
    """The elementwise minimum ignoring nan (nan only where both are nan). Matches torch.fmin."""
    return np.fmin(input, other)


@fmin.defvjp
def _(grad, input, other):
    # derivatives.yaml: self: grad.masked_fill((self <= other).logical_or_(other.isnan()).logical_not_(), 0)
    pick = (input <= other) | isnan(other)
    return where(pick, grad, 0.0), where(pick, 0.0, grad)


@op("nan_to_num", jvp="elementwise", grad_fn="NanToNumBackward0", promote="same", method=True,
    note="d/dx = 1 where x is finite, else 0")
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """nan, +inf and -inf replaced by ``nan`` (default 0), ``posinf`` and ``neginf`` (default the dtype's
    largest and lowest finite values). Matches torch.nan_to_num."""
    if input.dtype.kind != "f":
        return input.copy()
    return np.nan_to_num(input, nan=nan, posinf=posinf, neginf=neginf)


@nan_to_num.defvjp
def _(grad, input):
    # derivatives.yaml: grad * at::isfinite(self)
    return where(isfinite(input), grad, 0.0)


@op("lerp", jvp="elementwise", grad_fn="LerpBackward0", inputs=2, promote="same", public=False,
    note="d/dinput = 1 - weight, d/dend = weight")
def _lerp_scalar(input, end, weight):
    """``input + weight * (end - input)`` for a number ``weight`` (torch.lerp, Scalar overload)."""
    return (input + weight * (end - input)).astype(np.result_type(input, end), copy=False)


@_lerp_scalar.defvjp
def _(grad, weight):
    # derivatives.yaml: self: grad * (1 - weight.toDouble()); end: grad * weight
    return grad * (1 - weight), grad * weight


@op("lerp", jvp="elementwise", grad_fn="LerpBackward1", inputs=3, promote="same", public=False,
    note="d/dinput = 1 - weight, d/dend = weight, d/dweight = end - input")
def _lerp_tensor(input, end, weight):
    """``input + weight * (end - input)`` for a tensor ``weight`` (torch.lerp, Tensor overload)."""
    return (input + weight * (end - input)).astype(np.result_type(input, end, weight), copy=False)


@_lerp_tensor.defvjp
def _(grad, input, end, weight):
    # derivatives.yaml: self: grad * (1 - weight); end: grad * weight; weight: grad * (end - self)
    return grad * (1 - weight), grad * weight, grad * (end - input)


@composite("lerp", grad_fn="LerpBackward0 | LerpBackward1 (tensor weight)", method=True,
           note="d/dinput = 1 - weight, d/dend = weight, d/dweight = end - input")
def lerp(input, end, weight):
    """``input + weight * (end - input)``, with broadcasting; ``weight`` a number or a tensor. Matches
    torch.lerp."""
    if isinstance(weight, Tensor):
        return _lerp_tensor(input, end, weight)
    return _lerp_scalar(input, end, weight)


@op("addcmul", jvp="elementwise", grad_fn="AddcmulBackward0", inputs=3, promote="same", method=True,
    note="d/dinput = 1, d/dtensor1 = value * tensor2, d/dtensor2 = value * tensor1")
def addcmul(input, tensor1, tensor2, value=1):
    """``input + value * tensor1 * tensor2``. Matches torch.addcmul."""
    dtype = np.result_type(input, tensor1, tensor2)
    return (input + dtype.type(value) * (tensor1 * tensor2)).astype(dtype, copy=False)


@addcmul.defvjp
def _(grad, tensor1, tensor2, value):
    # derivatives.yaml: self: grad; tensor1: grad * (tensor2 * value); tensor2: grad * (tensor1 * value)
    return grad, grad * (tensor2 * value), grad * (tensor1 * value)


@op("addcdiv", jvp="elementwise", grad_fn="AddcdivBackward0", inputs=3, promote="same", method=True,
    note="d/dinput = 1, d/dtensor1 = value / tensor2, d/dtensor2 = -value * tensor1 / tensor2^2")
def addcdiv(input, tensor1, tensor2, value=1):
    """``input + value * tensor1 / tensor2``. Matches torch.addcdiv.

    Raises:
        RuntimeError: for integer tensor1 and tensor2 (PyTorch's message).
    """
    if tensor1.dtype.kind in "iub" and tensor2.dtype.kind in "iub":
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future release addcdiv "
                           "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can "
                           "be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
                           "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
                           "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
                           "for all dtypes.")
    dtype = np.result_type(input, tensor1, tensor2)
    return (input + dtype.type(value) * (tensor1 / tensor2)).astype(dtype, copy=False)


@addcdiv.defvjp
def _(grad, tensor1, tensor2, value):
    # derivatives.yaml: self: grad; tensor1: grad * (value / tensor2);
    #                   tensor2: -grad * (value * tensor1 / (tensor2 * tensor2))
    return grad, grad * (value / tensor2), -grad * (value * tensor1 / (tensor2 * tensor2))


# ------------------------------------------------------------------------------ not differentiable

def _logical(name, ufunc, doc):
    def forward(input, other):
        return ufunc(input.astype(bool), other.astype(bool))
    forward.__name__ = forward.__qualname__ = name
    forward.__doc__ = doc
    return op(name, grad_fn=None, inputs=2, promote=None, differentiable=False, method=True,
              note="not differentiable (bool output)")(forward)


logical_and = _logical("logical_and", np.logical_and, "Elementwise logical AND of the truth of each element "
                       "(nonzero is true); a bool tensor. Matches torch.logical_and.")
logical_or = _logical("logical_or", np.logical_or, "Elementwise logical OR; a bool tensor. Matches "
                      "torch.logical_or.")
logical_xor = _logical("logical_xor", np.logical_xor, "Elementwise logical XOR; a bool tensor. Matches "
                       "torch.logical_xor.")


@op("logical_not", grad_fn=None, promote=None, differentiable=False, method=True,
    note="not differentiable (bool output)")
def logical_not(input):
    """Elementwise logical NOT (zero is false); a bool tensor. Matches torch.logical_not."""
    return np.logical_not(input)


def _integer_only(name, ufunc, doc):
    def forward(input, other):
        if input.dtype.kind not in "iu" or other.dtype.kind not in "iu":
            dtype = input.dtype if input.dtype.kind not in "iu" else other.dtype
            raise not_implemented_for(f"{name}_cpu", dtype)
        return ufunc(input, other)
    forward.__name__ = forward.__qualname__ = name
    forward.__doc__ = doc
    return op(name, grad_fn=None, inputs=2, promote="same", differentiable=False, method=True,
              note="not differentiable (integer op)")(forward)


gcd = _integer_only("gcd", np.gcd, "The greatest common divisor of integer tensors. Matches torch.gcd.")
lcm = _integer_only("lcm", np.lcm, "The least common multiple of integer tensors. Matches torch.lcm.")


@op("heaviside", grad_fn="HeavisideBackward0", inputs=2, promote="same", differentiable=False, method=True,
    note="not differentiable (PyTorch: heaviside is not implemented for autograd)")
def heaviside(input, values):
    """0 for negative, ``values`` at 0, 1 for positive elements. Matches torch.heaviside.

    Raises:
        RuntimeError: when the dtypes differ (PyTorch's message).
    """
    if input.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    return np.heaviside(input, values).astype(input.dtype, copy=False)


# -------------------------------------------------------------------- torch.special's other names

#: torch.special's names for functions the table has under another name (torch.special.expit is sigmoid).
SPECIAL_ALIASES = {
    "expit": "sigmoid", "exp2": "exp2", "expm1": "expm1", "log1p": "log1p", "erf": "erf", "erfc": "erfc",
    "erfinv": "erfinv", "gammaln": "lgamma", "digamma": "digamma", "psi": "digamma", "polygamma": "polygamma",
    "multigammaln": "mvlgamma", "i0": "i0", "logit": "logit", "sinc": "sinc", "round": "round",
    "softmax": "softmax", "log_softmax": "log_softmax", "logsumexp": "logsumexp", "xlogy": "xlogy",
}


def special_namespace() -> dict:
    """torch.special's names that gradcli has, each with its function: the table's ``"special.<name>"``
    entries and the names of :data:`SPECIAL_ALIASES` (the same function as the table's other name, as in
    PyTorch, where ``torch.special.expit`` is ``torch.sigmoid``'s kernel). Call it once the table is declared."""
    names = {k[len("special."):]: v for k, v in REGISTRY.items() if k.startswith("special.")}
    for name, target in SPECIAL_ALIASES.items():
        if target in REGISTRY:
            names.setdefault(name, REGISTRY[target])
    return names
