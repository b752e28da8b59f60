"""Creation functions: tensor, zeros, ones, full, eye, arange, linspace, rand, randn, randint and the *_like forms.

Signatures, dtype inference and errors are PyTorch's: sizes may be given as ``ones(2, 3)``, ``ones((2, 3))`` or
``ones(size=(2, 3))``; ``dtype`` defaults to the default float dtype (``tensor``, ``arange`` and ``full``
infer it from their values); ``requires_grad=True`` makes a leaf that requires grad. Random numbers come from a
numpy Generator seeded by :func:`manual_seed` (``--seed``): reproducible, but not PyTorch's stream.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes, limits
from ..tensor import Tensor
from ._core import check_requires_grad, register, to_tensor

_rng = np.random.default_rng()


def manual_seed(seed: int) -> None:
    """Seed the generator behind rand/randn/randint (torch.manual_seed)."""
    global _rng
    _rng = np.random.default_rng(int(seed))


def _leaf(data: np.ndarray, requires_grad: bool) -> Tensor:
    check_requires_grad(data, requires_grad)
    return Tensor(data, bool(requires_grad))


def _size_kw(name, size, kw) -> tuple:
    """The size of ``name(*size, **kw)``: positional, or ``size=`` (PyTorch accepts both); ``device`` is
    accepted ("cpu" is the only device)."""
    kw_size = kw.pop("size", None)
    kw.pop("device", None)
    if kw:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kw))}'")
    return _size(size, kw_size)


def _size(size, kw_size) -> tuple:
    if kw_size is not None:
        if size:
            raise TypeError("size given both positionally and as a keyword")
        size = (kw_size,)
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = s.item()
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            raise TypeError(f"size must be a sequence of ints, but got {type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
        out.append(int(s))
    limits.check_numel(out, "the new tensor")
    return tuple(out)


def _float_dtype(dtype) -> np.dtype:
    return dtypes.as_dtype(dtype).np if dtype is not None else dtypes.get_default_dtype().np


def tensor(data, dtype=None, device=None, requires_grad=False):
    """A new leaf tensor from a number, nested lists of numbers, a numpy array or a Tensor (copied).
    dtype inference as torch.tensor: bools → bool, integers → int64, any float → the default float dtype.

    Raises:
        TypeError: for non-numeric data; ValueError for ragged lists; RuntimeError if ``requires_grad`` is
            asked of a non-float tensor.
    """
    d = None if dtype is None else dtypes.as_dtype(dtype).np
    t = to_tensor(data.detach() if isinstance(data, Tensor) else data, d)
    return _leaf(np.array(t.data, copy=True), requires_grad)


def zeros(*size, dtype=None, requires_grad=False, **kw):
    """A tensor of zeros of shape ``size``. Matches torch.zeros."""
    return _leaf(np.zeros(_size_kw("zeros", size, kw), dtype=_float_dtype(dtype)), requires_grad)


def ones(*size, dtype=None, requires_grad=False, **kw):
    """A tensor of ones of shape ``size``. Matches torch.ones."""
    return _leaf(np.ones(_size_kw("ones", size, kw), dtype=_float_dtype(dtype)), requires_grad)


def full(size, fill_value, dtype=None, requires_grad=False):
    """A tensor of shape ``size`` filled with ``fill_value`` (dtype inferred from it). Matches torch.full."""
    d = dtypes.as_dtype(dtype).np if dtype is not None else dtypes.infer_dtype(fill_value)
    return _leaf(np.full(_size((size,), None), fill_value, dtype=d), requires_grad)


def eye(n, m=None, dtype=None, requires_grad=False):
    """The n×m identity matrix (m defaults to n). Matches torch.eye."""
    limits.check_numel((int(n), int(n) if m is None else int(m)), "eye()")
    return _leaf(np.eye(int(n), None if m is None else int(m), dtype=_float_dtype(dtype)), requires_grad)


def arange(start, end=None, step=1, dtype=None, requires_grad=False):
    """Values from ``start`` (default 0) up to ``end`` (exclusive) by ``step``; int64 unless an argument is a
    float (then the default float dtype). Matches torch.arange.

    Raises:
        RuntimeError: for a zero step or a step of the wrong sign (PyTorch's messages).
    """
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is not None:
        d = dtypes.as_dtype(dtype).np
    else:
        d = dtypes.infer_dtype([start, end, step])
    n = int(np.ceil((end - start) / step))
    limits.check_numel((n,), "arange()")
    return _leaf((start + np.arange(n, dtype=np.float64) * step).astype(d), requires_grad)


def linspace(start, end, steps, dtype=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive. Matches torch.linspace."""
    limits.check_numel((int(steps),), "linspace()")
    return _leaf(np.linspace(start, end, int(steps)).astype(_float_dtype(dtype)), requires_grad)


def rand(*size, dtype=None, requires_grad=False, generator=None, **kw):
    """Uniform samples in [0, 1) of shape ``size``. Like torch.rand (seeded by --seed, numpy's stream)."""
    return _leaf(_rng.random(_size_kw("rand", size, kw)).astype(_float_dtype(dtype)), requires_grad)


def randn(*size, dtype=None, requires_grad=False, generator=None, **kw):
    """Standard normal samples of shape ``size``. Like torch.randn (seeded by --seed, numpy's stream)."""
    return _leaf(_rng.standard_normal(_size_kw("randn", size, kw)).astype(_float_dtype(dtype)),
                 requires_grad)


def randint(low, high=None, size=None, dtype=None, requires_grad=False):
    """Integers uniform in [low, high) of shape ``size`` (int64). Like torch.randint(low=0, high, size)."""
    if size is None:
        low, high, size = 0, low, high
    d = dtypes.as_dtype(dtype).np if dtype is not None else np.dtype(np.int64)
    return _leaf(_rng.integers(low, high, _size((size,), None)).astype(d), requires_grad)


def _like(name, fill, doc):
    def like(input, dtype=None, requires_grad=False):
        d = dtypes.as_dtype(dtype).np if dtype is not None else input.data.dtype
        return _leaf(fill(input.data.shape, d), requires_grad)

    like.__name__ = like.__qualname__ = name
    like.__doc__ = doc
    return like


zeros_like = _like("zeros_like", lambda shape, d: np.zeros(shape, dtype=d),
                   "Zeros with the shape (and dtype) of ``input``. Matches torch.zeros_like.")
ones_like = _like("ones_like", lambda shape, d: np.ones(shape, dtype=d),
                  "Ones with the shape (and dtype) of ``input``. Matches torch.ones_like.")
rand_like = _like("rand_like", lambda shape, d: _rng.random(shape).astype(d),
                  "Uniform [0, 1) samples with the shape of ``input``. Like torch.rand_like.")
randn_like = _like("randn_like", lambda shape, d: _rng.standard_normal(shape).astype(d),
                   "Standard normal samples with the shape of ``input``. Like torch.randn_like.")


def full_like(input, fill_value, dtype=None, requires_grad=False):
    """``fill_value`` with the shape (and dtype) of ``input``. Matches torch.full_like."""
    d = dtypes.as_dtype(dtype).np if dtype is not None else input.data.dtype
    return _leaf(np.full(input.data.shape, fill_value, dtype=d), requires_grad)


for _fn in (tensor, zeros, ones, full, eye, arange, linspace, rand, randn, randint, zeros_like, ones_like,
            rand_like, randn_like, full_like):
    register(_fn.__name__, _fn, "creation")
register("manual_seed", manual_seed, "function")
