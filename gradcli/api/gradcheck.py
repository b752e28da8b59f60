"""``torch.autograd.gradcheck`` and ``gradgradcheck``: a function's gradients against central finite differences.

:func:`gradcheck` builds, for every differentiable output and every input that requires grad, the numerical
Jacobian (central differences of step ``eps``, each input element perturbed in turn, as PyTorch's slow mode
does) and the analytical one (one backward per output element), and compares them with ``allclose(analytical,
numerical, rtol, atol)``. :func:`gradgradcheck` runs :func:`gradcheck` on the function's vector-Jacobian
product, so that the second derivatives are checked. Both return True, or raise PyTorch's ``GradcheckError``
(a RuntimeError) with its message ("Jacobian mismatch for output 0 with respect to input 0, ...") — or return
False with ``raise_exception=False``. Matches torch.autograd.gradcheck (slow mode, real inputs).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..engine import autograd
from ..engine.context import generator
from ..engine.printing import format_tensor
from ..engine.tensor import Tensor


class GradcheckError(RuntimeError):
    """PyTorch's ``torch.autograd.gradcheck.GradcheckError``."""


def _as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _differentiable_outputs(out) -> list:
    return [o for o in _as_tuple(out) if isinstance(o, Tensor) and o.requires_grad]


def _numerical(func, inputs: tuple, i: int, out_index: int, eps: float) -> np.ndarray:
    """d output[out_index] / d inputs[i] by central differences: shape (numel(input), numel(output))."""
    x = inputs[i]
    flat = x.data.reshape(-1)  # a view: perturbed in place, as PyTorch perturbs its input
    columns = []
    # (grad mode stays as it is: gradgradcheck's function differentiates inside)
    for k in range(flat.size):
        orig = flat[k]
        flat[k] = orig - eps
        lo = _as_tuple(func(*inputs))[out_index].data.astype(np.float64).reshape(-1).copy()
        flat[k] = orig + eps
        hi = _as_tuple(func(*inputs))[out_index].data.astype(np.float64).reshape(-1).copy()
        flat[k] = orig
        columns.append((hi - lo) / (2 * eps))
    return np.stack(columns) if columns else np.zeros((0, 0))


def _analytical(output: Tensor, wrt: list, n_in: list) -> list:
    """d output / d each of ``wrt``, by one backward per output element: shapes (numel(input), numel(out))."""
    n_out = output.data.size
    jac = [np.zeros((n, n_out)) for n in n_in]
    for j in range(n_out):
        basis = np.zeros(n_out, dtype=output.data.dtype)
        basis[j] = 1
        grads = autograd.grad([output], wrt, [Tensor(basis.reshape(output.data.shape))], retain_graph=True,
                              allow_unused=True)
        for k, g in enumerate(grads):
            if g is not None:
                jac[k][:, j] = g.data.astype(np.float64).reshape(-1)
    return jac


def _fmt(matrix: np.ndarray) -> str:
    return format_tensor(matrix, default_dtype=np.float32)  # float64: printed with its dtype, as PyTorch


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked=None) -> bool:
    """Check the gradients of ``func`` at ``inputs`` (a tensor or a tuple) against central differences.

    Returns:
        True when every Jacobian agrees (``allclose(analytical, numerical, rtol, atol)``).

    Raises:
        GradcheckError: PyTorch's "Jacobian mismatch for output i with respect to input j" message with both
            Jacobians (unless ``raise_exception=False``, which returns False instead).
        ValueError: PyTorch's message when no input requires grad.
    """
    inputs = _as_tuple(inputs)
    wrt = [(i, t) for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not wrt:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them "
                         "have requires_grad=True.")
    for i, t in wrt:
        if t.data.dtype != np.float64:
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating "
                          "point or complex. ", UserWarning, stacklevel=2)
    out = func(*inputs)
    outputs = _as_tuple(out)
    for o_index, o in enumerate(outputs):
        if not (isinstance(o, Tensor) and o.requires_grad):
            continue
        analytical = _analytical(o, [t for _, t in wrt], [t.data.size for _, t in wrt])
        for (i, t), a in zip(wrt, analytical):
            numerical = _numerical(func, inputs, i, o_index, eps)
            if numerical.size and not np.allclose(a, numerical, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise GradcheckError(f"Jacobian mismatch for output {o_index} with respect to input {i},\n"
                                     f"numerical:{_fmt(numerical)}\nanalytical:{_fmt(a)}\n")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
                  gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True, nondet_tol: float = 0.0,
                  check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False, masked: bool = False) -> bool:
    """Check the second derivatives of ``func``: :func:`gradcheck` of its vector-Jacobian product with
    ``grad_outputs`` (random values in [-1, 1) of each output's shape and dtype when not given, as PyTorch's).

    Raises:
        GradcheckError: as :func:`gradcheck`, for the first mismatch.
    """
    inputs = _as_tuple(inputs)
    outputs = _differentiable_outputs(func(*inputs))
    if grad_outputs is None:
        gen = generator()
        grad_outputs = tuple(Tensor(gen.uniform(tuple(o.data.shape), o.data.dtype, -1.0, 1.0), requires_grad=True)
                             for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)

    def vjp(*args):
        ins, gos = args[:n], args[n:]
        outs = _differentiable_outputs(func(*ins))
        wrt = [t for t in ins if isinstance(t, Tensor) and t.requires_grad]
        grads = autograd.grad(outs, wrt, list(gos), create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(vjp, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception)
