"""Activation functions (torch.nn.functional): relu, relu6, leaky_relu, elu, selu, gelu, silu, softplus, hardtanh.

Forwards follow PyTorch's CPU kernels (aten/src/ATen/native/cpu/Activation.cpp), derivatives its
derivatives.yaml, including the conventions at the kinks: relu's gradient is 0 at 0 (threshold_backward),
leaky_relu's is ``negative_slope`` at 0, elu's is ``alpha * scale`` at 0, hardtanh's is 0 at both bounds.
elu, gelu and softplus record PyTorch's ``*BackwardBackward0`` nodes with their own derivatives
(elu_double_backward, gelu_double_backward, softplus_double_backward), which differ from the naive ones exactly
at the kink (elu at 0), at the threshold (softplus) and where PyTorch's formula gives nan; the other second
derivatives come from composing the first-derivative rules.

Like PyTorch, the activations other than relu, relu6 and hardtanh have no integer kernels: an integer tensor raises
NotImplementedError with PyTorch's message. ``inplace=True`` writes the result into ``input`` when it does not
require grad (PyTorch's in-place semantics); on a tensor that requires grad it raises PyTorch's error for a leaf
and NotImplementedError otherwise (gradcli does not rebase graphs in place).
"""

from __future__ import annotations

import numpy as np

from ...engine import autograd
from ...engine.tensor import Tensor
from ..core.declare import composite, not_implemented_for, op, zeros_like_grad
from .arithmetic import pow
from .comparison import where
from ..shape.inplace import apply  # the checks, the write into the buffer and the version counter of every in-place op
from .unary import cosh, erf, exp, sigmoid, tanh

_SQRT1_2 = 0.7071067811865476  # M_SQRT1_2
_GELU_PDF = 0.3989422804014327  # M_2_SQRTPI * M_SQRT1_2 * 0.5 = 1 / sqrt(2 pi)
_GELU_TANH_BETA = 0.7978845608028654  # M_SQRT2 * M_2_SQRTPI * 0.5 = sqrt(2 / pi)
_GELU_TANH_KAPPA = 0.044715
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946

_RELU_NOTE = "d/dx = 1 where x > 0, else 0 (0 at 0)"
_HARDTANH_NOTE = "d/dx = 1 where min_val < x < max_val, else 0 (0 at the bounds)"
_LEAKY_RELU_NOTE = "d/dx = 1 where x > 0, else negative_slope (negative_slope at 0)"
_SILU_NOTE = "d/dx = sigmoid(x) * (1 + x * (1 - sigmoid(x)))"


def _float_only(input: np.ndarray, kernel: str) -> None:
    if input.dtype.kind != "f":
        raise not_implemented_for(kernel, input.dtype)


def _inplace(input, out, inplace: bool):
    """``out``, or with ``inplace=True`` ``input`` overwritten by it (torch's ``F.<name>(x, inplace=True)``)."""
    if not inplace or not isinstance(input, Tensor):
        return out
    if input.requires_grad and autograd.is_grad_enabled():
        if input.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        raise NotImplementedError("in-place activations (inplace=True) on a tensor that requires grad are not "
                                  "supported by gradcli; use inplace=False")
    return apply(input, lambda _: out)


# ------------------------------------------------------------------------------------------------- relu


@op("relu", grad_fn="ReluBackward0", promote=None, public=False, note=_RELU_NOTE,
    formula="input: grad where result > 0, else 0 (0 at input = 0)", kinks="relu", jvp="elementwise")
def _relu(input):
    """``max(input, 0)`` (nan stays nan); integers stay integers (torch.relu)."""
    if input.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    return np.maximum(input, input.dtype.type(0))


@_relu.defvjp
def _(grad, result):
    # threshold_backward(grad, result, 0): zero where result <= 0, so at 0 too
    return _threshold_backward(grad, result, 0)


# The backward kernels of relu, hardtanh and leaky_relu as ops of their own, as in PyTorch: with create_graph the
# gradient is recorded as their node, which takes the input (or result) too, so it requires grad when that does
# (derivatives.yaml: grad_output: the same backward of grad; self: zeros_like(grad)).


def _mask_backward_vjp(backward):
    def vjp(grad, input, *params, needs_input_grad):
        gg = backward(grad, input, *params) if needs_input_grad[0] else None
        return gg, (zeros_like_grad(grad) if needs_input_grad[1] else None)
    return vjp


@op("threshold_backward", grad_fn="ThresholdBackwardBackward0", inputs=2, promote=None, public=False,
    note="relu's backward: grad_output where self > threshold, else 0; no derivative with respect to self",
    formula="grad_output: threshold_backward(grad, self, threshold); self: 0", jvp="elementwise")
def _threshold_backward(grad_output, input, threshold):
    """threshold_backward: 0 where ``input <= threshold`` (so at the threshold), else ``grad_output``."""
    return np.where(input <= threshold, grad_output.dtype.type(0), grad_output)


@_threshold_backward.defvjp
def _(grad, input, threshold, needs_input_grad):
    return _mask_backward_vjp(_threshold_backward)(grad, input, threshold, needs_input_grad=needs_input_grad)


@op("hardtanh_backward", grad_fn="HardtanhBackwardBackward0", inputs=2, promote=None, public=False,
    note="hardtanh's backward: grad_output where min_val < self < max_val, else 0; no derivative with respect "
         "to self", formula="grad_output: hardtanh_backward(grad, self, min_val, max_val); self: 0",
    jvp="elementwise")
def _hardtanh_backward(grad_output, input, min_val, max_val):
    """hardtanh_backward: 0 where ``input <= min_val`` or ``input >= max_val`` (so at both bounds), else
    ``grad_output``."""
    return np.where((input <= min_val) | (input >= max_val), grad_output.dtype.type(0), grad_output)


@_hardtanh_backward.defvjp
def _(grad, input, min_val, max_val, needs_input_grad):
    return _mask_backward_vjp(_hardtanh_backward)(grad, input, min_val, max_val, needs_input_grad=needs_input_grad)


@op("leaky_relu_backward", grad_fn="LeakyReluBackwardBackward0", inputs=2, promote=None, public=False,
    note="leaky_relu's backward: grad_output where self > 0, else grad_output * negative_slope; no derivative "
         "with respect to self", formula="grad_output: leaky_relu_backward(grad, self, negative_slope); self: 0",
    jvp="elementwise")
def _leaky_relu_backward(grad_output, input, negative_slope):
    """leaky_relu_backward: ``grad_output`` where ``input > 0``, else ``grad_output * negative_slope`` (so
    ``negative_slope`` at 0)."""
    return np.where(input > 0, grad_output, grad_output * grad_output.dtype.type(negative_slope))


@_leaky_relu_backward.defvjp
def _(grad, input, negative_slope, needs_input_grad):
    return _mask_backward_vjp(_leaky_relu_backward)(grad, input, negative_slope, needs_input_grad=needs_input_grad)


@_relu.defsymbolic
def _(s, input):
    return s.elementwise(s.Relu, input)


@composite("relu", grad_fn="ReluBackward0", note=_RELU_NOTE, method=True)
def relu(input, inplace=False):
    """``max(input, 0)`` elementwise; integer tensors stay integer. Matches torch.nn.functional.relu and
    torch.relu: the gradient at 0 is 0.

    Raises:
        RuntimeError: for bool tensors (PyTorch's message).
    """
    return _inplace(input, _relu(input), inplace)


# ---------------------------------------------------------------------------------- hardtanh and relu6


@op("hardtanh", grad_fn="HardtanhBackward0", promote=None, public=False, note=_HARDTANH_NOTE,
    formula="input: grad where min_val < input < max_val, else 0 (0 at the bounds)", kinks="hardtanh",
    jvp="elementwise")
def _hardtanh(input, min_val, max_val):
    """``input`` clamped to [min_val, max_val] in its own dtype (torch.nn.functional.hardtanh)."""
    if input.dtype.kind == "b":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if input.dtype.kind == "f":
        lo, hi = input.dtype.type(min_val), input.dtype.type(max_val)
    else:  # PyTorch converts the bounds to the integer type (truncation)
        lo, hi = int(min_val), int(max_val)
    return np.minimum(np.maximum(input, lo), hi).astype(input.dtype, copy=False)


@_hardtanh.defvjp
def _(grad, input, min_val, max_val):
    # hardtanh_backward: zero where input <= min_val or input >= max_val, so at both bounds
    return _hardtanh_backward(grad, input, min_val, max_val)


@composite("hardtanh", grad_fn="HardtanhBackward0", note=_HARDTANH_NOTE)
def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``input`` clamped to ``[min_val, max_val]``, keeping its dtype. Matches torch.nn.functional.hardtanh;
    unlike clamp, its gradient is 0 at the bounds.

    Raises:
        ValueError: if ``min_val > max_val`` (PyTorch's message); RuntimeError for bool tensors.
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _inplace(input, _hardtanh(input, min_val, max_val), inplace)


@composite("relu6", grad_fn="HardtanhBackward0", note="d/dx = 1 where 0 < x < 6, else 0")
def relu6(input, inplace=False):
    """``min(max(input, 0), 6)``, computed as hardtanh(input, 0, 6) (grad_fn HardtanhBackward0). Matches
    torch.nn.functional.relu6: the gradient is 0 at 0 and at 6."""
    return _inplace(input, _hardtanh(input, 0, 6), inplace)  # PyTorch passes the Scalars 0 and 6 (ints)


# ----------------------------------------------------------------------------------------- leaky_relu


@op("leaky_relu", grad_fn="LeakyReluBackward0", promote=None, public=False, note=_LEAKY_RELU_NOTE,
    formula="input: grad where input > 0, else negative_slope * grad", kinks="leaky_relu", jvp="elementwise")
def _leaky_relu(input, negative_slope):
    """``input`` where positive, else ``input * negative_slope`` (torch.nn.functional.leaky_relu)."""
    _float_only(input, "leaky_relu_cpu")
    return np.where(input > 0, input, input * input.dtype.type(negative_slope))


@_leaky_relu.defvjp
def _(grad, input, negative_slope):
    # leaky_relu_backward: grad where input > 0, else grad * negative_slope (so negative_slope at 0)
    return _leaky_relu_backward(grad, input, negative_slope)


@composite("leaky_relu", grad_fn="LeakyReluBackward0", note=_LEAKY_RELU_NOTE)
def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``x`` for ``x > 0``, else ``negative_slope * x``. Matches torch.nn.functional.leaky_relu: the gradient at
    0 is ``negative_slope``.

    Raises:
        NotImplementedError: for integer and bool tensors (PyTorch's message).
    """
    if isinstance(negative_slope, Tensor):
        negative_slope = negative_slope.item()
    return _inplace(input, _leaky_relu(input, negative_slope), inplace)


# ------------------------------------------------------------------------------------------ elu and selu


@op("elu", grad_fn="EluBackward0", promote=None, public=False, note="d/dx = scale where x > 0, else "
    "input_scale * alpha * scale * exp(input_scale * x)",
    formula="input: grad * scale where input > 0, else grad * scale * alpha * exp(input) (elu: scale = 1; selu: "
            "PyTorch's scale and alpha)", kinks="elu", jvp="elementwise")
def _elu(input, alpha, scale, input_scale):
    """``scale * x`` for ``x > 0``, else ``alpha * scale * (exp(input_scale * x) - 1)`` (torch's elu kernel)."""
    _float_only(input, "elu_cpu")
    t = input.dtype.type
    return np.where(input > 0, input * t(scale), np.expm1(input * t(input_scale)) * t(alpha * scale))


@_elu.defvjp
def _(grad, input, alpha, scale, input_scale):
    return _elu_backward(grad, input, alpha, scale, input_scale)


@op("elu_backward", grad_fn="EluBackwardBackward0", inputs=2, promote=None, public=False,
    note="PyTorch's elu_double_backward", formula="the derivative of elu's backward (second order)",
    jvp="elementwise")
def _elu_backward(grad_output, input, alpha, scale, input_scale):
    """elu_backward (is_result=False): ``grad_output * scale`` for ``x > 0``, else
    ``grad_output * input_scale * alpha * scale * exp(input_scale * x)`` (so ``alpha * scale`` at 0)."""
    t = input.dtype.type
    negative = grad_output * t(input_scale * alpha * scale) * np.exp(input * t(input_scale))
    return np.where(input <= 0, negative, grad_output * t(scale))


@_elu_backward.defvjp
def _(grad, grad_output, input, alpha, scale, input_scale, needs_input_grad):
    # derivatives.yaml elu_backward: grad_output: elu_backward(grad, ...); self: elu_double_backward, which is
    # elu_backward(grad * grad_output * input_scale, ...) times (input < 0): zero at 0, unlike elu_backward.
    gg = _elu_backward(grad, input, alpha, scale, input_scale) if needs_input_grad[0] else None
    gi = None
    if needs_input_grad[1]:
        gi = _elu_backward(grad * grad_output * input_scale, input, alpha, scale, input_scale) * (input < 0)
    return gg, gi


@composite("elu", grad_fn="EluBackward0", note="d/dx = 1 where x > 0, else alpha * exp(x) (alpha at 0)")
def elu(input, alpha=1.0, inplace=False):
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``. Matches torch.nn.functional.elu: the gradient at 0
    is ``alpha``.

    Raises:
        NotImplementedError: for integer and bool tensors (PyTorch's message).
    """
    return _inplace(input, _elu(input, alpha, 1.0, 1.0), inplace)


@composite("selu", grad_fn="EluBackward0", note="d/dx = scale where x > 0, else scale * alpha * exp(x)")
def selu(input, inplace=False):
    """``scale * elu(x, alpha)`` with alpha = 1.6732632423543772848170429916717 and scale =
    1.0507009873554804934193349852946 (Klambauer et al., 2017). Matches torch.nn.functional.selu (grad_fn
    EluBackward0).

    Raises:
        NotImplementedError: for integer and bool tensors (PyTorch's message).
    """
    return _inplace(input, _elu(input, _SELU_ALPHA, _SELU_SCALE, 1.0), inplace)


# -------------------------------------------------------------------------------------------------- gelu


_GELU_MODES = ("none", "tanh")


@op("gelu", grad_fn="GeluBackward0", promote=None,
    note="d/dx = Phi(x) + x * phi(x) (approximate='none'); the tanh formula's derivative for approximate='tanh'",
    formula="input: grad * (Phi(input) + input * phi(input)) (Phi, phi: the normal CDF and density; the tanh "
            "approximation's derivative with approximate='tanh')", jvp="elementwise")
def gelu(input, approximate="none"):
    """Gaussian error linear unit ``x * Phi(x)`` with Phi the standard normal CDF, ``0.5 * x * (1 + erf(x /
    sqrt(2)))``; with ``approximate='tanh'``, ``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))``
    (Hendrycks and Gimpel, 2016). Matches torch.nn.functional.gelu.

    Raises:
        RuntimeError: for another ``approximate`` (PyTorch's message).
        NotImplementedError: for integer and bool tensors.
    """
    if approximate not in _GELU_MODES:
        raise RuntimeError("approximate argument must be either none or tanh.")
    _float_only(input, "GeluKernelImpl")
    t = input.dtype.type
    if approximate == "tanh":
        inner = t(_GELU_TANH_BETA) * (input + t(_GELU_TANH_KAPPA) * input * input * input)
        return t(0.5) * input * (t(1) + np.tanh(inner))
    return input * t(0.5) * (t(1) + erf(input * t(_SQRT1_2)))


@gelu.defvjp
def _(grad, input, approximate):
    return _gelu_backward(grad, input, approximate)


@op("gelu_backward", grad_fn="GeluBackwardBackward0", inputs=2, promote=None, public=False,
    note="PyTorch's gelu_double_backward", formula="the derivative of gelu's backward (second order)",
    jvp="elementwise")
def _gelu_backward(grad_output, input, approximate):
    """gelu_backward (GeluKernel.cpp): ``grad_output * (Phi(x) + x * phi(x))``, or the derivative of the tanh
    formula, ``grad_output * (0.5 * (1 + tanh(u)) + 0.5 * x * (1 - tanh(u)^2) * beta * (1 + 3 * kappa * x^2))``."""
    t = input.dtype.type
    if approximate == "tanh":
        x_sq = input * input
        tanh_inner = np.tanh(t(_GELU_TANH_BETA) * (input + t(_GELU_TANH_KAPPA) * x_sq * input))
        left_derivative = t(0.5) * (t(1) + tanh_inner)
        right_derivative = t(0.5) * input * (t(1) - tanh_inner * tanh_inner) * t(_GELU_TANH_BETA) * (
            t(1) + t(3 * _GELU_TANH_KAPPA) * x_sq)
        return grad_output * (left_derivative + right_derivative)
    cdf = t(0.5) * (t(1) + erf(input * t(_SQRT1_2)))
    pdf = t(_GELU_PDF) * np.exp(input * input * t(-0.5))
    return grad_output * (cdf + input * pdf)


@_gelu_backward.defvjp
def _(grad, grad_output, input, approximate, needs_input_grad):
    # derivatives.yaml gelu_backward: grad_output: gelu_backward(grad, self); self: gelu_double_backward
    # (FunctionsManual.cpp), written with ops of the table so that it differentiates again.
    gg = _gelu_backward(grad, input, approximate) if needs_input_grad[0] else None
    if not needs_input_grad[1]:
        return gg, None
    if approximate == "tanh":
        inner = _GELU_TANH_BETA * (input + _GELU_TANH_KAPPA * pow(input, 3))
        tanh_inner = tanh(inner)
        sech_inner = 1 / cosh(inner)
        f = 0.5 * input
        g = 1 - tanh_inner * tanh_inner
        h = _GELU_TANH_BETA * (1 + 3 * _GELU_TANH_KAPPA * input * input)
        f_prime_gh = 0.5 * g * h
        g_prime_fh = f * h * ((2 * sech_inner) * (-sech_inner * tanh_inner) * h)
        h_prime_fg = f * g * (6 * _GELU_TANH_KAPPA * input * _GELU_TANH_BETA)
        return gg, grad * grad_output * (f_prime_gh + f_prime_gh + g_prime_fh + h_prime_fg)
    input_sq = input * input
    pdf = _GELU_PDF * exp(-0.5 * input_sq)
    return gg, grad * grad_output * (2 * pdf - input_sq * pdf)


# -------------------------------------------------------------------------------------------------- silu


@op("silu", grad_fn="SiluBackward0", promote=None, public=False, note=_SILU_NOTE,
    formula="input: grad * sigmoid(input) * (1 + input * (1 - sigmoid(input)))", jvp="elementwise")
def _silu(input):
    """``x * sigmoid(x)`` computed as ``x / (1 + exp(-x))`` (torch's silu kernel)."""
    _float_only(input, "silu_cpu")
    return input / (input.dtype.type(1) + np.exp(-input))


@_silu.defvjp
def _(grad, input):
    # silu_backward: grad * sigmoid(x) * (1 + x * (1 - sigmoid(x)))
    s = sigmoid(input)
    return grad * s * (1 + input * (1 - s))


@composite("silu", grad_fn="SiluBackward0", note=_SILU_NOTE)
def silu(input, inplace=False):
    """Sigmoid linear unit (swish) ``x * sigmoid(x)``. Matches torch.nn.functional.silu.

    Raises:
        NotImplementedError: for integer and bool tensors (PyTorch's message).
    """
    return _inplace(input, _silu(input), inplace)


# ---------------------------------------------------------------------------------------------- softplus


@op("softplus", grad_fn="SoftplusBackward0", promote=None,
    note="d/dx = sigmoid(beta * x), or 1 where beta * x > threshold (the linear region)",
    formula="input: grad * sigmoid(beta * input), grad where beta * input > threshold", jvp="elementwise")
def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold`` (for numerical
    stability). Matches torch.nn.functional.softplus.

    Raises:
        NotImplementedError: for integer and bool tensors (PyTorch's message).
    """
    _float_only(input, "softplus_cpu")
    t = input.dtype.type
    x = input * t(beta)
    with np.errstate(over="ignore"):
        return np.where(x > threshold, input, np.log1p(np.exp(x)) / t(beta))


@softplus.defvjp
def _(grad, input, beta, threshold):
    return _softplus_backward(grad, input, beta, threshold)


@softplus.defsymbolic
def _(s, input, beta=1.0, threshold=20.0):
    b = s.elem(beta)
    return s.elementwise(lambda t: s.Softplus(b * t) / b, input)


@op("softplus_backward", grad_fn="SoftplusBackwardBackward0", inputs=2, promote=None, public=False,
    note="PyTorch's softplus_double_backward", formula="the derivative of softplus's backward (second order)",
    jvp="elementwise")
def _softplus_backward(grad_output, input, beta, threshold):
    """softplus_backward: ``grad_output`` where ``beta * x > threshold``, else ``grad_output * z / (z + 1)`` with
    ``z = exp(beta * x)``."""
    t = input.dtype.type
    x = input * t(beta)
    with np.errstate(over="ignore", invalid="ignore"):
        z = np.exp(x)
        return np.where(x > threshold, grad_output, grad_output * z / (z + t(1)))


@_softplus_backward.defvjp
def _(grad, grad_output, input, beta, threshold, needs_input_grad):
    # derivatives.yaml softplus_backward: grad_output: softplus_backward(grad, ...); self:
    # softplus_double_backward(grad * grad_output, ...) = sigmoid_backward(g, sigmoid(x)) * (x < threshold) * beta
    # with x = beta * input: zero from the threshold on, so at the threshold too.
    gg = _softplus_backward(grad, input, beta, threshold) if needs_input_grad[0] else None
    gi = None
    if needs_input_grad[1]:
        x = input * beta
        s = sigmoid(x)
        gi = grad * grad_output * (1 - s) * s * (x < threshold) * beta
    return gg, gi


# ----------------------------------------------------------------------------------------- forward mode
# derivatives.yaml gives every activation (and its *_backward, of grad_output and self) an elementwise
# ``result:`` formula (auto_element_wise, or e.g. leaky_relu_backward(self_t, self_p, negative_slope, false)):
# the tangent is the VJP rule applied to the tangent.
