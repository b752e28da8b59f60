"""PyTorch's CPU random number generator, so that ``torch.manual_seed(s)`` gives PyTorch's numbers.

PyTorch's CPU generator (``at::CPUGeneratorImpl``, aten/src/ATen/CPUGeneratorImpl.cpp) is a 32-bit Mersenne
Twister (mt19937) seeded as ``std::mt19937`` is (``init_genrand`` with the low 32 bits of the seed). Its
distributions (aten/src/ATen/core/DistributionsHelper.h, TransformationHelper.h and the CPU kernels of
aten/src/ATen/native/cpu/DistributionTemplates.h) turn the twister's 32-bit words into numbers:

* ``random()`` is one 32-bit word; ``random64()`` two, the first one high: ``(w0 << 32) | w1``;
* uniform floats (``rand``, ``uniform_``): ``(w & (2**digits - 1)) * 2**-digits`` with the dtype's significand
  digits (24 for float32, one word each; 53 for float64, one ``random64`` each), then ``x * (to - from) + from``;
* integers in ``[low, high)`` (``randint``, ``random_``): ``w % (high - low) + low``, from ``random64`` for
  ranges of 2**28 and more (2**32 for float32) and from ``random`` below that;
* normal numbers (``randn``, ``normal_``): for 16 or more contiguous elements, all uniforms are drawn first and
  turned by Box-Muller 16 at a time (``normal_fill``: the first 8 of each 16 are the radii's, ``u1 = 1 - u``,
  the next 8 the angles'; a tail that is not a multiple of 16 redraws the last 16 uniforms); float32 does it with
  8-lane AVX2 code (``normal_fill_16_AVX2``: the cephes polynomials of ``avx_mathfun.h`` for log, sin and cos,
  reproduced here in float32 arithmetic); fewer than 16 elements take ``normal_distribution<double>`` one at a
  time, which makes two numbers per pair of uniforms and keeps the second for the next call (the generator's
  cached normal, cleared by ``manual_seed``).

The words come from numpy's MT19937 bit generator, seeded as PyTorch's (numpy's legacy ``RandomState`` seeding
is ``init_genrand`` too); everything after that is numpy array arithmetic, never a Python loop per element, except one: where numpy's float64
``log``/``log1p`` are not the C library's on this CPU (numpy's AVX-512 versions), float64 normals take libm's
functions through a numpy object loop (:func:`_libm_f64`), since PyTorch's scalar kernel calls ``std::log``.
"""

from __future__ import annotations

import os

import numpy as np

_U32 = np.uint64(0xFFFFFFFF)
_TWO_PI_F32 = np.float32(2.0 * np.pi)  # 2.0f * c10::pi<double>, rounded to float


def _mt19937(seed: int):
    """numpy's MT19937 bit generator in the state ``std::mt19937(seed & 0xffffffff)`` starts in."""
    from numpy.random import MT19937  # numpy.random costs start-up time: imported when a number is drawn

    bit_generator = MT19937()
    bit_generator._legacy_seeding(seed & 0xFFFFFFFF)
    return bit_generator


#: Values per chunk of :meth:`Generator._normal_fill` (a multiple of 16).
_NORMAL_CHUNK = 1 << 16


class Generator:
    """PyTorch's CPU generator: an mt19937 with PyTorch's transformations (see the module docstring).

    Args:
        seed: the initial seed (any integer; taken modulo 2**64 as ``torch.manual_seed`` does), or None for a
            seed from the operating system's entropy, as PyTorch's default generator has.
    """

    __slots__ = ("_seed", "_bits", "_next_normal")

    def __init__(self, seed: int | None = None):
        self.manual_seed(int.from_bytes(os.urandom(8), "little") if seed is None else seed)

    def manual_seed(self, seed: int) -> "Generator":
        """Reseed (``torch.Generator.manual_seed``); clears the cached normal number. Returns self.

        Args:
            seed: converted with ``int()`` as ``torch.manual_seed`` does (``1.5`` is 1); from -2**63 to 2**64 - 1,
                negative seeds wrapping around (-1 is 2**64 - 1).

        Raises:
            ValueError: for a seed ``int()`` cannot read, or out of that range (PyTorch's messages).
            TypeError: for a seed of another type.
        """
        seed = int(seed)
        if not -(1 << 63) <= seed < (1 << 64):
            raise ValueError("Overflow when unpacking long long")
        self._seed = seed % (1 << 64)
        self._bits = None  # made on the first draw
        self._next_normal = None
        return self

    def initial_seed(self) -> int:
        """The seed last set (``torch.initial_seed``), as an unsigned 64-bit integer."""
        return self._seed

    def seed(self) -> int:
        """Reseed from the operating system's entropy and return the new seed (``torch.seed``)."""
        s = int.from_bytes(os.urandom(8), "little") >> 1
        self.manual_seed(s)
        return s

    # ---------------------------------------------------------------------------------------------- state

    def get_state(self) -> np.ndarray:
        """The state as ``torch.Generator.get_state()`` writes it: 5056 bytes (uint8) of PyTorch's
        ``CPUGeneratorImplState`` (aten/src/ATen/CPUGeneratorImpl.cpp): the initial seed (uint64), ``left``
        and ``seeded`` (int32), ``next`` (uint64), the 624 twister words (each as uint64), ``normal_x``,
        ``normal_y``, ``normal_rho`` (float64), ``normal_is_valid`` (int32), then the float normal cache
        (float32 and a bool, never set on the CPU path) and padding. The cached normal is stored in
        ``normal_y``, as PyTorch stores it."""
        bits = self._bits if self._bits is not None else _mt19937(self._seed)
        st = bits.state["state"]
        pos = int(st["pos"])
        fresh = self._bits is None  # std::mt19937 just seeded: left 1, next 0
        nxt = 0 if fresh else pos
        left = 1 if (fresh or pos >= 624) else 625 - pos
        out = bytearray(5056)
        head = np.array([self._seed], np.uint64).tobytes() + np.array([left, 1], np.int32).tobytes() + \
            np.array([nxt], np.uint64).tobytes() + np.asarray(st["key"], np.uint64).tobytes()
        out[:len(head)] = head
        if self._next_normal is not None:
            out[5024:5032] = np.array([self._next_normal], np.float64).tobytes()  # normal_y
            out[5040:5044] = np.array([1], np.int32).tobytes()  # normal_is_valid
        return np.frombuffer(bytes(out), np.uint8).copy()

    def set_state(self, state: np.ndarray) -> None:
        """Restore a state written by :meth:`get_state` (``torch.Generator.set_state``; a valid cached normal
        is read back from ``normal_y``).

        Raises:
            RuntimeError: for a state that is not 5056 bytes long (PyTorch's message).
        """
        raw = np.asarray(state, np.uint8).tobytes()
        if len(raw) != 5056:
            raise RuntimeError("Expected either a THGeneratorState of size 5048 or a CPUGeneratorImplState of "
                               f"size 5056 but found the input RNG state size to be {len(raw)}")
        seed = int(np.frombuffer(raw[0:8], np.uint64)[0])
        left = int(np.frombuffer(raw[8:12], np.int32)[0])
        nxt = int(np.frombuffer(raw[16:24], np.uint64)[0])
        key = np.frombuffer(raw[24:5016], np.uint64).astype(np.uint32)
        normal_y = float(np.frombuffer(raw[5024:5032], np.float64)[0])
        valid = int(np.frombuffer(raw[5040:5044], np.int32)[0])
        bits = _mt19937(seed)
        bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": 624 if left <= 1 else nxt}}
        self._seed, self._bits = seed, bits
        self._next_normal = normal_y if valid else None

    # ---------------------------------------------------------------------------------------------- words

    def random(self, n: int) -> np.ndarray:
        """The next ``n`` 32-bit words (``random()``), as uint64."""
        if not n:  # no draw: a just-seeded twister stays untouched (get_state's ``next`` stays 0)
            return np.zeros(0, np.uint64)
        if self._bits is None:
            self._bits = _mt19937(self._seed)
        return self._bits.random_raw(n)

    def random64(self, n: int) -> np.ndarray:
        """The next ``n`` 64-bit words (``random64()``: two 32-bit words each, the first one high), as uint64."""
        w = self.random(2 * n)
        return (w[0::2] << np.uint64(32)) | w[1::2]

    # ------------------------------------------------------------------------------------- distributions

    def uniform(self, shape: tuple, dtype, low: float = 0.0, high: float = 1.0) -> np.ndarray:
        """Uniform numbers in ``[low, high)`` (``rand``, ``uniform_``; ``uniform_real_distribution``).

        Args:
            shape: the result's shape; dtype: a numpy float dtype (float16, float32, float64).
        Returns:
            an array of ``shape`` and ``dtype``.
        """
        d = np.dtype(dtype)
        n = int(np.prod(shape, dtype=np.int64))
        if d == np.float64:
            x = (self.random64(n) & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53
            if (low, high) != (0.0, 1.0):
                x = _fma64(x, np.float64(high) - np.float64(low), low)
        else:
            digits = np.finfo(d).nmant + 1  # 24 for float32, 11 for float16
            x = ((self.random(n) & np.uint64((1 << digits) - 1)).astype(np.float32)
                 * np.float32(2.0 ** -digits))  # dist_acctype<float> is float
            if (low, high) != (0.0, 1.0):
                lo, hi = np.float32(d.type(low)), np.float32(d.type(high))
                x = _fma32(x, hi - lo, lo)
        return x.astype(d, copy=False).reshape(shape)

    def random_from_to(self, shape: tuple, low: int, high: int, dtype) -> np.ndarray:
        """Integers in ``[low, high)`` (``randint``, ``random_(from, to)``; ``uniform_int_from_to_distribution``).

        Args:
            dtype: the result's numpy dtype (integers, bool, or floats holding whole numbers).
        """
        d = np.dtype(dtype)
        n = int(np.prod(shape, dtype=np.int64))
        span = high - low
        wide = span >= (1 << 32) if d in (np.float32, np.float16) else span >= (1 << 28)
        w = self.random64(n) if wide else self.random(n)
        v = (w % np.uint64(span)).astype(np.int64) + np.int64(low) if span < (1 << 63) else \
            ((w % np.uint64(span)) + np.uint64(low % (1 << 64))).view(np.int64)
        return v.astype(d).reshape(shape)

    def normal(self, shape: tuple, dtype, mean: float = 0.0, std: float = 1.0) -> np.ndarray:
        """Normal numbers (``randn``, ``normal_``; PyTorch's CPU ``normal_kernel``: see the module docstring).

        Args:
            shape: the result's shape (contiguous); dtype: a numpy float dtype.
        """
        d = np.dtype(dtype)
        n = int(np.prod(shape, dtype=np.int64))
        if n >= 16:
            if d == np.float32:
                out = self._normal_fill(n, np.float32, lambda u: _normal16_avx2(u, mean, std))
            else:
                wd = np.float64 if d == np.float64 else np.float32  # normal_fill<scalar_t> for half: in float
                out = self._normal_fill(n, d, lambda u: _normal16_scalar(u.astype(wd), mean, std))
        else:
            out = _fma64(self._normal_double(n), std, mean)  # transformation::normal, contracted
        return out.astype(d, copy=False).reshape(shape)

    def _normal_fill(self, n: int, dtype, transform) -> np.ndarray:
        # The uniforms are drawn and transformed a chunk at a time (the twister's words come out in the same order,
        # and each block of 16 is transformed on its own, so the numbers are the same): the transform's float64
        # temporaries then stay a few megabytes instead of many times the result's size.
        whole = n - n % 16
        out = np.empty(n, dtype=np.float64 if dtype == np.float64 else np.float32)
        for start in range(0, whole, _NORMAL_CHUNK):
            stop = min(start + _NORMAL_CHUNK, whole)
            out[start:stop] = transform(self.uniform((stop - start,), dtype)).reshape(-1)
        if n % 16:
            self.uniform((n % 16,), dtype)  # drawn (as one draw of n would) but not used
            # PyTorch recomputes the last 16 values from 16 new uniforms
            out[n - 16:] = transform(self.uniform((16,), dtype)).reshape(-1)
        return out

    def _normal_double(self, n: int) -> np.ndarray:
        """``n`` standard normal doubles from ``normal_distribution<double>`` (two per two uniforms, the second
        kept for the next call)."""
        out = np.empty(n, np.float64)
        i = 0
        if n and self._next_normal is not None:
            out[0], self._next_normal, i = self._next_normal, None, 1
        pairs = (n - i + 1) // 2
        if pairs:
            u = self.uniform((2 * pairs,), np.float64)
            u1, u2 = u[0::2], u[1::2]
            r = np.sqrt(-2.0 * _libm_f64('log1p')(-u2))
            theta = 2.0 * np.pi * u1
            cos, sin = r * np.cos(theta), r * np.sin(theta)
            both = np.empty(2 * pairs)
            both[0::2], both[1::2] = cos, sin
            # each pair gives cos then (cached) sin: the cached sin of a pair is the next value
            out[i:] = both[: n - i]
            if (n - i) % 2:
                self._next_normal = float(sin[-1])
        return out

    def bernoulli(self, p: np.ndarray, dtype) -> np.ndarray:
        """0/1 draws with probabilities ``p`` (``torch.bernoulli(p)``: one uniform per element, in p's float
        dtype's uniform: ``u < p``)."""
        p = np.asarray(p)
        u = self.uniform(p.shape, np.float64 if p.dtype == np.float64 else np.float32)
        return (u < p).astype(dtype)

    def exponential(self, shape: tuple, dtype, lambd: float = 1.0) -> np.ndarray:
        """Exponential numbers of rate ``lambd`` (``Tensor.exponential_`` on CPU): one float64 uniform ``u`` per
        element (``random64``, as ``rand(dtype=float64)``), ``-1 / lambd * log1p(-u)`` in float64 with libm's
        log1p, rounded to ``dtype`` (through float32 for float16, as ``static_cast<at::Half>(float)``). PyTorch's
        scalar kernel at every size on this build (checked against torch 2.13 up to thousands of elements)."""
        d = np.dtype(dtype)
        u = self.uniform(shape, np.float64).reshape(-1)
        x = (-1.0 / float(lambd)) * _libm_f64('log1p')(-u)
        if d == np.float16:
            x = x.astype(np.float32)
        return x.astype(d).reshape(shape)

    def multinomial(self, probs: np.ndarray, n_sample: int) -> np.ndarray:
        """``n_sample`` category indices per row of ``probs`` (rows x categories, valid: non-negative, finite,
        positive sums), drawn with replacement as MultinomialKernel.cpp's ``multinomial_with_replacement_apply``:
        each row's running sum in its dtype (float for float16), divided by the total, the last set to 1; then
        row by row, one float64 uniform per sample, and the first category whose cumulative value is not below
        it (the kernel's binary search). Returns int64 of shape (rows, n_sample).

        The binary search of every sample at once: sorting the cumulative values and the uniforms of each row
        together (a uniform before an equal cumulative value), the index is the count of cumulative values of its
        row that come before it."""
        rows, cats = probs.shape
        wd = np.float64 if probs.dtype == np.float64 else np.float32
        cum = np.cumsum(probs.astype(wd), axis=1)  # add.accumulate: sequential, as the kernel's loop
        cum = cum / cum[:, -1:]
        cum[:, -1] = 1
        u = self.uniform((rows * n_sample,), np.float64)
        values = np.concatenate([cum.reshape(-1).astype(np.float64), u])
        row = np.concatenate([np.repeat(np.arange(rows), cats), np.repeat(np.arange(rows), n_sample)])
        is_cum = np.concatenate([np.ones(rows * cats, np.int64), np.zeros(rows * n_sample, np.int64)])
        order = np.lexsort((is_cum, values, row))
        before = np.cumsum(is_cum[order]) - is_cum[order]  # cumulative values sorted before each entry
        count = np.empty_like(before)
        count[order] = before
        return (count[rows * cats:] - np.repeat(np.arange(rows), n_sample) * cats).reshape(rows, n_sample)

    def randperm(self, n: int, dtype) -> np.ndarray:
        """A random permutation of ``0 .. n-1`` (``torch.randperm`` on CPU: Fisher-Yates from the front, swapping
        element i with i + ``random() % (n - i)``)."""
        perm = np.arange(n, dtype=np.int64)
        if n > 1:
            w = (self.random64(n - 1) if n >= (1 << 24) else self.random(n - 1)) % np.arange(
                n, 1, -1, dtype=np.uint64)
            for i, z in enumerate(w.tolist()):  # the swaps depend on each other: sequential by nature
                j = i + z
                perm[i], perm[j] = perm[j], perm[i]
        return perm.astype(dtype)


_LIBM_F64: dict = {}


def _libm_f64(name: str):
    """The float64 function ``name`` (``log`` or ``log1p``) as the C library computes it, which PyTorch's scalar
    kernels call (``std::log``): numpy's ufunc where it gives libm's results on this CPU (checked once on 4,096
    points), else libm's own function applied by a numpy object loop (numpy's AVX-512 log and log1p, dispatched
    on CPUs that have AVX-512, are within an ulp or two of libm's but not equal, and PyTorch's float64 normals must
    be equal bit for bit). Returns a function of a float64 array."""
    fn = _LIBM_F64.get(name)
    if fn is None:
        import math

        ufunc, scalar = {"log": (np.log, math.log), "log1p": (np.log1p, math.log1p)}[name]
        probe = np.linspace(1e-6, 1.0 - 1e-6, 4096) * (-1.0 if name == "log1p" else 1.0)
        if (ufunc(probe) == np.array([scalar(v) for v in probe.tolist()])).all():
            fn = ufunc
        else:
            vectorized = np.frompyfunc(scalar, 1, 1)

            def fn(x, _vectorized=vectorized, _ufunc=ufunc, _low=-1.0 if name == "log1p" else 0.0):
                x = np.asarray(x, np.float64)
                with np.errstate(divide="ignore", invalid="ignore"):
                    out = _ufunc(x)  # -inf at the pole, nan below it: as libm, which Python's math refuses
                inside = x > _low
                out[inside] = _vectorized(x[inside]).astype(np.float64)
                return out
        _LIBM_F64[name] = fn
    return fn


def _fma32(a, b, c):
    """float32 ``a * b + c`` with one rounding (an FMA): the product of two float32 numbers is exact in float64,
    the sum is rounded to float64 and then to float32 (the double rounding differs from a true FMA only when the
    float64 sum falls exactly halfway between two float32 numbers, about one case in 2**29)."""
    return (np.asarray(a, np.float64) * np.asarray(b, np.float64) + np.asarray(c, np.float64)).astype(np.float32)


def _fma64(a, b, c) -> np.ndarray:
    """float64 ``a * b + c`` with one rounding, as the FMA that GCC contracts PyTorch's scalar kernels into
    (``x * std + mean``): the product's exact error by Dekker's splitting and the sum's by Knuth's TwoSum,
    added back (correctly rounded but in rare double-rounding cases)."""
    a, b, c = (np.asarray(v, np.float64) for v in (a, b, c))
    p = a * b
    split = 134217729.0  # 2**27 + 1
    ah = a * split
    ah = ah - (ah - a)
    bh = b * split
    bh = bh - (bh - b)
    al, bl = a - ah, b - bh
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    with np.errstate(invalid="ignore", over="ignore"):
        out = s + (t + err)
    return np.where(np.isfinite(out), out, p + c)


def _normal16_scalar(u: np.ndarray, mean: float, std: float) -> np.ndarray:
    """``normal_fill_16`` on blocks of 16 uniforms (rows): Box-Muller with libm's log/cos/sin in the dtype."""
    t = u.dtype.type
    u = u.reshape(-1, 16)
    u1, u2 = t(1) - u[:, :8], u[:, 8:]
    radius = np.sqrt(t(-2) * (_libm_f64('log') if t is np.float64 else np.log)(u1))
    theta = (np.float64(2.0 * np.pi) * u2.astype(np.float64)).astype(u.dtype) if t is np.float32 else \
        t(2.0 * np.pi) * u2
    s, m = t(std), t(mean)
    fma = _fma64 if t is np.float64 else _fma32
    return np.concatenate([fma(radius * np.cos(theta), s, m), fma(radius * np.sin(theta), s, m)], axis=1)


# ------------------------------------------------------------------ avx_mathfun.h's log and sincos, in float32

_F = np.float32
_SQRTHF = _F(0.707106781186547524)
_LOG_P = [_F(v) for v in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
                          1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1)]
_LOG_Q1, _LOG_Q2 = _F(-2.12194440e-4), _F(0.693359375)
_FOPI = _F(1.27323954473516)
_DP = (_F(-0.78515625), _F(-2.4187564849853515625e-4), _F(-3.77489497744594108e-8))
_SINCOF = (_F(-1.9515295891E-4), _F(8.3321608736E-3), _F(-1.6666654611E-1))
_COSCOF = (_F(2.443315711809948E-005), _F(-1.388731625493765E-003), _F(4.166664568298827E-002))


def _log256(x: np.ndarray) -> np.ndarray:
    """``log256_ps`` of avx_mathfun.h (cephes' logf polynomial) on positive normal float32 numbers, with the
    multiply-adds that GCC contracts into FMAs in PyTorch's AVX2 build (``-ffp-contract=fast``)."""
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(np.float32) + _F(1)
    m = ((bits & ~0x7F800000) | 0x3F000000).view(np.float32)  # mantissa in [0.5, 1)
    small = m < _SQRTHF
    x = (m - _F(1)) + np.where(small, m, _F(0))
    e = e - np.where(small, _F(1), _F(0))
    z = x * x
    y = np.full_like(x, _LOG_P[0])
    for p in _LOG_P[1:]:
        y = _fma32(y, x, p)
    y = _fma32(y * x, z, e * _LOG_Q1)
    y = y - z * _F(0.5)
    return _fma32(e, _LOG_Q2, x + y)


def _sincos256(x: np.ndarray):
    """``sincos256_ps`` of avx_mathfun.h (cephes' sinf/cosf) on non-negative float32 numbers, with the FMAs of
    PyTorch's AVX2 build (see :func:`_log256`)."""
    j = (x * _FOPI).astype(np.int32)
    j = (j + 1) & ~1
    y = j.astype(np.float32)
    sin_negate = (j & 4) != 0
    poly = (j & 2) == 0  # the sine polynomial for the sine (and the cosine one for the cosine)
    x = _fma32(y, _DP[2], _fma32(y, _DP[1], _fma32(y, _DP[0], x)))  # x - y * pi/4 in three parts
    cos_negate = ((~(j - 2)) & 4) != 0
    z = x * x
    c = _fma32(_fma32(_COSCOF[0], z, _COSCOF[1]), z, _COSCOF[2]) * z
    c = _fma32(c, z, -(z * _F(0.5))) + _F(1)
    s = _fma32(_fma32(_fma32(_SINCOF[0], z, _SINCOF[1]), z, _SINCOF[2]) * z, x, x)
    sin = np.where(poly, s, c)
    cos = np.where(poly, c, s)
    return np.where(sin_negate, -sin, sin), np.where(cos_negate, -cos, cos)


def _normal16_avx2(u: np.ndarray, mean: float, std: float) -> np.ndarray:
    """``normal_fill_16_AVX2`` on blocks of 16 float32 uniforms (rows)."""
    u = u.reshape(-1, 16)
    u1, u2 = _F(1) - u[:, :8], u[:, 8:]
    with np.errstate(all="ignore"):
        radius = np.sqrt(_F(-2) * _log256(np.maximum(u1, np.finfo(np.float32).tiny)))
        sin, cos = _sincos256(_TWO_PI_F32 * u2)
    n1, n2 = radius * cos, radius * sin
    return np.concatenate([_fma32(n1, _F(std), _F(mean)), _fma32(n2, _F(std), _F(mean))], axis=1)
