"""Random sampling beyond rand/randn/randint: randperm, randint_like, normal, bernoulli, multinomial, the in-place
samplers ``normal_``, ``uniform_``, ``random_`` and ``exponential_``, and the generator's seed functions
(``initial_seed``, ``seed``).

Every number comes from the run context's PyTorch CPU generator (:mod:`gradcli.engine.generator`), in PyTorch's order
and with PyTorch's transformations, so a program seeded with ``torch.manual_seed`` prints PyTorch's numbers.
Gradients are PyTorch's (tools/autograd/derivatives.yaml): the samples do not depend differentiably on the
parameters (``normal``'s mean and std, ``bernoulli``'s probabilities), so their gradients are zeros, and an
in-place sampler on a tensor with history records ``NormalBackward0``/``UniformBackward0``/``RandomBackward0``
with a zero gradient.
"""

from __future__ import annotations

import functools

import numpy as np

from ..engine import context, dtypes
from ..engine.tensor import Tensor
from .core.declare import composite, op, tensor_method
from .creation import _float_dtype, _leaf, _like_input, _size
from .shape.inplace import _zeros_like, apply
from .reduction.order import _topk_indices

_generator = context.generator


def _drawing(f):
    """``f`` taking a keyword ``generator=``: its numbers come from that ``torch.Generator`` (the run's when None,
    :func:`gradcli.engine.context.drawing_from`)."""
    @functools.wraps(f)
    def drawing(*args, generator=None, **kw):
        with context.drawing_from(generator):
            return f(*args, **kw)
    return drawing


def _zero_grads(grad, n):
    z = _zeros_like(grad)
    return z if n == 1 else (z,) * n


# ---------------------------------------------------------------------------------------------- functions


@composite("initial_seed", kind="function")
def initial_seed() -> int:
    """The seed of the active run context's generator (torch.initial_seed): the last ``manual_seed``, or the
    seed drawn from the operating system."""
    return _generator().initial_seed()


@composite("seed", kind="function")
def seed() -> int:
    """Reseed the active run context's generator from the operating system and return the seed (torch.seed)."""
    return _generator().seed()


@composite("randperm", kind="creation")
def randperm(n, dtype=None, requires_grad=False, generator=None, device=None, layout=None, pin_memory=False):
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype``). Matches torch.randperm number for number
    after the same seed (PyTorch's CPU Fisher-Yates, :meth:`gradcli.engine.generator.Generator.randperm`).

    Raises:
        RuntimeError: for a negative ``n`` (PyTorch's message); TypeError for an ``n`` that is not an integer.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    d = dtypes.as_dtype(dtype).np if dtype is not None else np.dtype(np.int64)
    with context.drawing_from(generator):
        return _leaf(_generator().randperm(n, d), requires_grad)


@composite("randint_like", kind="creation")
@_drawing
def randint_like(input, low=0, high=None, dtype=None, requires_grad=False, device=None, *, generator=None):
    """Integers uniform in [low, high) with the shape (and dtype, unless ``dtype``) of ``input``:
    ``randint_like(input, high)`` or ``randint_like(input, low, high)``. Matches torch.randint_like.

    Raises:
        RuntimeError: if low >= high (PyTorch's message).
    """
    a = _like_input("randint_like", input)
    if high is None:
        low, high = 0, low
    low, high = int(low), int(high)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    d = dtypes.as_dtype(dtype).np if dtype is not None else a.dtype
    return _leaf(_generator().random_from_to(a.shape, low, high, d), requires_grad)


def _check_std(std) -> None:
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")


def _num(v) -> str:
    v = float(v)
    return str(int(v)) if v.is_integer() else repr(v)


def _check_std_values(std: np.ndarray) -> None:
    if (std < 0).any():
        raise RuntimeError("normal expects all elements of std >= 0.0")


@op("_normal_tensor_float", grad_fn="NormalBackward1", promote=None, note="d/dmean = 0",
    formula="mean: 0 (a sample; PyTorch does not reparameterize)", jvp="elementwise")
def _normal_tensor_float(mean, std):
    """Samples of N(mean, std) with ``mean``'s shape and dtype (torch.normal(Tensor mean, float std))."""
    return (_generator().normal(mean.shape, mean.dtype) * mean.dtype.type(std) + mean).astype(mean.dtype)


@_normal_tensor_float.defvjp
def _(grad):
    return _zeros_like(grad)


@op("_normal_float_tensor", grad_fn="NormalBackward2", promote=None, note="d/dstd = 0",
    formula="std: 0 (a sample; PyTorch does not reparameterize)", jvp="elementwise")
def _normal_float_tensor(std, mean):
    """Samples of N(mean, std) with ``std``'s shape and dtype (torch.normal(float mean, Tensor std))."""
    _check_std_values(std)
    return (_generator().normal(std.shape, std.dtype) * std + std.dtype.type(mean)).astype(std.dtype)


@_normal_float_tensor.defvjp
def _(grad):
    return _zeros_like(grad)


@op("_normal_tensor_tensor", grad_fn="NormalBackward3", inputs=2, note="d/dmean = 0, d/dstd = 0",
    formula="mean: 0; std: 0 (a sample)", jvp="elementwise")
def _normal_tensor_tensor(mean, std):
    """Samples of N(mean, std), shapes broadcast (torch.normal(Tensor mean, Tensor std))."""
    _check_std_values(std)
    shape = np.broadcast_shapes(mean.shape, std.shape)
    d = np.result_type(mean, std)
    return (_generator().normal(shape, d) * std + mean).astype(d)


@_normal_tensor_tensor.defvjp
def _(grad):
    return _zero_grads(grad, 2)


@composite("normal", grad_fn="NormalBackward1", note="d/dmean = 0, d/dstd = 0 (samples, not reparameterized)")
@_drawing
def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, requires_grad=False, device=None):
    """Normal samples, in PyTorch's four forms: ``normal(mean: Tensor, std: Tensor)`` (broadcast),
    ``normal(mean: Tensor, std: float = 1)``, ``normal(mean: float, std: Tensor)`` (grad_fn NormalBackward1/2/3,
    zero gradients as PyTorch's derivatives.yaml), and ``normal(mean: float, std: float, size)`` (a leaf).
    The numbers are PyTorch's after the same seed: standard normal samples, times std, plus mean.

    Raises:
        RuntimeError: for a negative std (PyTorch's message).
        TypeError: for ``normal(float, float)`` without a size.
    """
    # (std's values are checked by the ops, which see them: under vmap the batching rule decides first, and
    # randomness="error" refuses before any argument check, as PyTorch's)
    if isinstance(mean, Tensor) and isinstance(std, Tensor):
        return _normal_tensor_tensor(mean, std)
    if isinstance(mean, Tensor):
        _check_std(std)
        return _normal_tensor_float(mean, float(std))
    if isinstance(std, Tensor):
        return _normal_float_tensor(std, float(mean))
    if size is None:
        raise TypeError("normal() received an invalid combination of arguments - got (float, float), but "
                        "expected a size: normal(float mean, float std, tuple of ints size)")
    _check_std(std)
    shape = _size("normal", (tuple(size),) if isinstance(size, (tuple, list)) else (size,))
    d = _float_dtype(dtype)
    values = _generator().normal(shape, d, float(mean), float(std))
    return _leaf(values, requires_grad)


@op("bernoulli", grad_fn="BernoulliBackward0", promote=None, method=True, note="d/dinput = 0 (samples)",
    formula="input: 0 (a sample)", jvp="elementwise")
def bernoulli(input, p=None, generator=None):
    """0/1 samples, 1 with probability ``input`` (or ``p`` when given), in ``input``'s dtype. Matches
    torch.bernoulli number for number after the same seed (one uniform per element: 1 when it is below p).

    Raises:
        RuntimeError: for probabilities outside [0, 1] (PyTorch's message).
    """
    probs = input if p is None else np.full(input.shape, p, dtype=np.float64)
    if np.any((probs < 0) | (probs > 1)):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                           "message be improved?  If so, please report an enhancement request to PyTorch.)")
    with context.drawing_from(generator):
        return _generator().bernoulli(probs, input.dtype)


@bernoulli.defvjp
def _(grad):
    return _zeros_like(grad)


# ---------------------------------------------------------------------------------------- in-place samplers


@op("_normal_fill", grad_fn="NormalBackward0", promote=None, note="d/dself = 0",
    formula="input: 0 (its values are overwritten by samples)", jvp="elementwise")
def _normal_fill(input, mean, std):
    """``input``'s shape and dtype filled with normal samples (what ``normal_`` writes)."""
    return _generator().normal(input.shape, input.dtype, mean, std)


@_normal_fill.defvjp
def _(grad):
    return _zeros_like(grad)


@op("_uniform_fill", grad_fn="UniformBackward0", promote=None, note="d/dself = 0",
    formula="input: 0 (its values are overwritten by samples)", jvp="elementwise")
def _uniform_fill(input, low, high):
    """``input``'s shape and dtype filled with uniform samples in [low, high) (what ``uniform_`` writes)."""
    return _generator().uniform(input.shape, input.dtype, low, high)


@_uniform_fill.defvjp
def _(grad):
    return _zeros_like(grad)


@op("_random_fill", grad_fn="RandomBackward1", promote=None, note="d/dself = 0",
    formula="input: 0 (its values are overwritten by samples)", jvp="elementwise")
def _random_fill(input, low, high):
    """``input``'s shape and dtype filled with integers in [low, high) (what ``random_`` writes)."""
    return _generator().random_from_to(input.shape, low, high, input.dtype)


@_random_fill.defvjp
def _(grad):
    return _zeros_like(grad)


def _float_self(name: str, self: Tensor) -> None:
    if self.data.dtype.kind != "f":
        kernel = {"normal_": "normal_kernel_cpu", "uniform_": "check_uniform_bounds"}[name]
        names = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                 "bool": "Bool"}
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{names[self.data.dtype.name]}'")


@tensor_method("normal_")
@_drawing
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with normal samples N(mean, std) in place; returns self. Matches torch.Tensor.normal_ number for
    number after the same seed (grad_fn NormalBackward0 when recorded).

    Raises:
        RuntimeError: for a negative std (PyTorch's message), and see :func:`gradcli.ops.shape.inplace.apply`.
        NotImplementedError: on an integer or bool tensor (PyTorch's message).
    """
    _check_std(std)
    _float_self("normal_", self)
    return apply(self, lambda s: _normal_fill(s, float(mean), float(std)), cast=None)


@tensor_method("uniform_")
@_drawing
def uniform_(self, *args, generator=None, **kw):
    """Fill with uniform samples in [from, to) (default [0, 1)) in place: ``uniform_(from, to)``; returns self.
    Matches torch.Tensor.uniform_ number for number after the same seed (grad_fn UniformBackward0 when recorded).

    Raises:
        RuntimeError: if from > to (PyTorch's message), and see :func:`gradcli.ops.shape.inplace.apply`.
        NotImplementedError: on an integer or bool tensor (PyTorch's message).
    """
    low, high = _from_to("uniform_", args, kw, (0.0, 1.0))
    if low > high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_num(low)} > "
                           f"to={_num(high)}")
    _float_self("uniform_", self)
    return apply(self, lambda s: _uniform_fill(s, float(low), float(high)), cast=None)


@tensor_method("random_")
@_drawing
def random_(self, *args, generator=None, **kw):
    """Fill with integers in place: ``random_(to)`` gives [0, to), ``random_(from, to)`` [from, to); returns
    self. Matches torch.Tensor.random_ with bounds, number for number after the same seed.

    Raises:
        RuntimeError: if from >= to (PyTorch's message); TypeError without bounds (gradcli needs them).
    """
    if not args and "to" not in kw:
        raise TypeError("random_() without bounds is not supported by gradcli: give random_(to) or "
                        "random_(from, to)")
    if len(args) == 1 and not kw:
        low, high = 0, args[0]
    else:
        low, high = _from_to("random_", args, kw, (0, None))
    low, high = int(low), int(high)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    return apply(self, lambda s: _random_fill(s, low, high), cast=None)


@op("_bernoulli_fill", grad_fn="BernoulliBackward2", promote=None, note="d/dself = 0",
    formula="input: 0 (its values are overwritten by samples)", jvp="elementwise")
def _bernoulli_fill(input, p):
    """``input``'s shape and dtype filled with 0/1 draws of probability ``p`` (a float: float64 uniforms, as
    PyTorch's ``bernoulli_(float p)``)."""
    return _generator().bernoulli(np.full(input.shape, p, np.float64), input.dtype)


@_bernoulli_fill.defvjp
def _(grad):
    return _zeros_like(grad)


@op("_bernoulli_fill_tensor", grad_fn="BernoulliBackward1", promote=None, note="d/dself = 0",
    formula="input: 0 (its values are overwritten by samples)", jvp="elementwise")
def _bernoulli_fill_tensor(input, probs):
    """``input``'s shape and dtype filled with 0/1 draws of probabilities ``probs`` (a numpy array of its
    shape: uniforms in ``probs``'s dtype, as PyTorch's ``bernoulli_(Tensor p)``)."""
    return _generator().bernoulli(probs, input.dtype)


@_bernoulli_fill_tensor.defvjp
def _(grad):
    return _zeros_like(grad)


@tensor_method("bernoulli_")
@_drawing
def bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 0/1 samples in place, 1 with probability ``p`` (a float, or a tensor broadcast to self's
    shape); returns self. Matches torch.Tensor.bernoulli_ number for number after the same seed (a float p
    draws float64 uniforms; a tensor p uniforms of its dtype). A tensor p gets no gradient (PyTorch's is 0).

    Raises:
        RuntimeError: for probabilities outside [0, 1] (PyTorch's messages), a p that does not broadcast to
            self's shape, and see :func:`gradcli.ops.shape.inplace.apply`.
    """
    if isinstance(p, Tensor):
        probs = p.data
        if probs.dtype.kind != "f":
            probs = probs.astype(np.float32)
        try:
            probs = np.broadcast_to(probs, self.shape)
        except ValueError:
            raise RuntimeError(f"The size of tensor a ({p.shape[-1] if p.data.ndim else 1}) must match the "
                               f"size of tensor b ({self.shape[-1]}) at non-singleton dimension "
                               f"{self.data.ndim - 1}") from None
        if np.any((probs < 0) | (probs > 1)):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
                               "message be improved?  If so, please report an enhancement request to PyTorch.)")
        return apply(self, lambda s: _bernoulli_fill_tensor(s, probs), cast=None)
    p = float(p)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")
    return apply(self, lambda s: _bernoulli_fill(s, p), cast=None)


def _from_to(name: str, args: tuple, kw: dict, defaults: tuple):
    """``from`` and ``to`` given by position or keyword (``from`` is a Python keyword: ``**{"from": 1}``)."""
    if len(args) > 2:
        raise TypeError(f"{name}() takes at most 2 positional arguments ({len(args)} given)")
    values = dict(zip(("from", "to"), defaults))
    values.update(zip(("from", "to"), args))
    for k, v in kw.items():
        if k not in ("from", "to"):
            raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
        values[k] = v
    return values["from"], values["to"]


# ------------------------------------------------------------------------------ exponential_ and multinomial


@op("_exponential_fill", grad_fn="ExponentialBackward0", promote=None, note="d/dself = 0",
    formula="input: 0 (its values are overwritten by samples)", jvp="elementwise")
def _exponential_fill(input, lambd):
    """``input``'s shape and dtype filled with exponential samples of rate ``lambd`` (what ``exponential_``
    writes)."""
    return _generator().exponential(input.shape, input.dtype, lambd)


@_exponential_fill.defvjp
def _(grad):
    return _zeros_like(grad)


_LONG_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


@tensor_method("exponential_")
@_drawing
def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with samples of the exponential distribution of rate ``lambd`` in place; returns self. Matches
    torch.Tensor.exponential_ number for number after the same seed (``-1 / lambd * log1p(-u)`` of float64
    uniforms; grad_fn ExponentialBackward0 when recorded).

    Raises:
        RuntimeError: for ``lambd <= 0`` or an integer/bool tensor (PyTorch's messages), and see
            :func:`gradcli.ops.shape.inplace.apply`.
    """
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
    if self.data.dtype.kind != "f":
        raise RuntimeError("Exponential distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {_LONG_NAMES[self.data.dtype.name]}")
    return apply(self, lambda s: _exponential_fill(s, float(lambd)), cast=None)


_FLOAT32_MAX_CONSECUTIVE_INT = 1 << 24


@composite("multinomial", grad_fn="none (integers)", note="not differentiable (int64 category indices)",
           method=True, differentiable=False)
@_drawing
def multinomial(input, num_samples, replacement=False, *, generator=None):
    """``num_samples`` category indices drawn from each row of the (unnormalized) probabilities ``input``
    (shape (C,) or (R, C), floating point): int64 of shape (num_samples,) or (R, num_samples). Matches
    torch.multinomial number for number after the same seed, following aten/src/ATen/native/Distributions.cpp:
    without replacement, or for one sample, the Gumbel trick ``q = input / exponential_(1)``, then ``argmax`` (one
    sample) or ``topk(q, num_samples).indices`` (PyTorch's order of ties); with replacement and more samples,
    MultinomialKernel.cpp's cumulative distribution and binary search (:meth:`gradcli.engine.generator.Generator.multinomial`).

    Raises:
        RuntimeError: PyTorch's messages for an input that is not 1-d or 2-d, not floating point, with negative,
            infinite or NaN probabilities, a row of zero sum, ``num_samples <= 0``, or ``num_samples`` above the
            number of categories without replacement.
        TypeError: for ``num_samples`` that is not an int.
    """
    if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)):
        raise TypeError("multinomial(): argument 'num_samples' (position 2) must be int, not "
                        f"{type(num_samples).__name__}")
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    # (the arguments' checks are the op's: under vmap its rule decides first, as PyTorch's)
    return _multinomial(input, int(num_samples), bool(replacement))


@op("multinomial", grad_fn=None, promote=None, differentiable=False, public=False, note="not differentiable")
def _multinomial(p, n, replacement):
    """``n`` category indices drawn from each row of ``p``, after PyTorch's checks (see :func:`multinomial`)."""
    if p.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if p.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_LONG_NAMES[p.dtype.name]}")
    if n <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    cats = p.shape[-1]
    if not replacement and n > cats:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if cats > _FLOAT32_MAX_CONSECUTIVE_INT:
        raise RuntimeError("number of categories cannot exceed 2^24")
    shape = (n,) if p.ndim == 1 else (p.shape[0], n)
    if 0 in shape:
        return np.zeros(shape, np.int64)
    rows = p.reshape(p.shape[0] if p.ndim == 2 else 1, cats)
    if not replacement or n == 1:
        return _multinomial_gumbel(p, rows, n)
    _check_rows_as_the_kernel(rows, n)
    return _generator().multinomial(rows, n).reshape(shape)


def _multinomial_gumbel(p: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    """Distributions.cpp's fast path: ``argmax``/``topk`` of ``p / q`` with ``q ~ Exp(1)`` in ``p``'s dtype."""
    if rows.size == 0:  # (self.max() < inf) & (self.min() >= 0), on no elements
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity.")
    with np.errstate(invalid="ignore"):
        valid = rows.max() < np.inf and rows.min() >= 0
    if not valid:
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (rows == 0).all(axis=1).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    with np.errstate(divide="ignore", invalid="ignore"):
        q = (p / _generator().exponential(p.shape, p.dtype, 1.0)).astype(p.dtype)
    if n == 1:
        return np.argmax(q, axis=-1)[..., None].astype(np.int64)
    return np.asarray(_topk_indices(q, n, -1, True, True), np.int64)


def _check_rows_as_the_kernel(rows: np.ndarray, n: int) -> None:
    """MultinomialKernel.cpp's checks, row by row and element by element (a NaN fails ``val >= 0``), drawing
    the uniforms of the rows sampled before the first failing one, as the kernel does."""
    wd = np.float64 if rows.dtype == np.float64 else np.float32
    with np.errstate(invalid="ignore", over="ignore"):
        negative = ~(rows >= 0)
        infinite = ~negative & ~np.isfinite(rows)
        bad = negative | infinite
        zero_sum = ~bad.any(axis=1) & ~(rows.astype(wd).sum(axis=1, dtype=wd) > 0)
    failing = np.flatnonzero(bad.any(axis=1) | zero_sum)
    if failing.size:
        r = int(failing[0])
        _generator().uniform((r * n,), np.float64)
        if zero_sum[r]:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        j = int(np.argmax(bad[r]))
        if negative[r, j]:
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")


# ----------------------------------------------------------------------------------------- forward mode
# derivatives.yaml: normal, bernoulli and the in-place fills are auto_element_wise of zero derivatives: their
# tangents are zeros.
