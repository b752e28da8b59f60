"""torch.poisson: Poisson samples drawn from the run context's PyTorch CPU generator, number for number as ATen
draws them after the same seed.

ATen's CPU kernel (aten/src/ATen/native/Distributions.cpp, ``_s_poisson_cpu`` and ``sample_poisson``) visits
the rates in order and draws, for each, uniforms in [0, 1) of 53 bits (one ``random64`` each): for a rate of
at least 10, Hoermann's transformed rejection (1993), two uniforms a try; for a rate in (0, 10), Knuth's
product of uniforms until it falls to ``exp(-rate)`` or below; 0 for a rate of 0. This module repeats that
loop element by element with the same libm functions (``math.sqrt``, ``log``, ``exp``, ``floor``), so the
samples are PyTorch's (``math.lgamma``, CPython's, stands for the C library's ``lgamma`` in the rejection test
of large rates: they agree to the last bits or nearly, which can only matter when a sample sits exactly on the
acceptance boundary). The derivative is PyTorch's: zero (derivatives.yaml ``poisson: self: zeros_like(self)``).
"""

from __future__ import annotations

import math

import numpy as np

from ..engine import context
from .core.declare import not_implemented_for, op, zeros_like_grad

_TWO_TO_MINUS_53 = 2.0 ** -53
_MASK_53 = np.uint64((1 << 53) - 1)


def _uniform(gen) -> float:
    """``at::uniform_real_distribution<double>(0, 1)``: the low 53 bits of one ``random64`` times 2**-53."""
    return float(gen.random64(1)[0] & _MASK_53) * _TWO_TO_MINUS_53


def _sample(rate: float, gen) -> int:
    """ATen's ``sample_poisson(rate, generator)``."""
    if rate >= 10:  # transformed rejection (Hoermann, 1993)
        slam = math.sqrt(rate)
        loglam = math.log(rate)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = _uniform(gen) - 0.5
            v = _uniform(gen)
            us = 0.5 - abs(u)
            k = math.floor((2 * a / us + b) * u + rate + 0.43)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if (math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)) <= \
                    (-rate + k * loglam - math.lgamma(k + 1.0)):
                return k
    if rate == 0:
        return 0
    enlam = math.exp(-rate)
    x, prod = 0, 1.0
    while True:
        prod *= _uniform(gen)
        if prod > enlam:
            x += 1
        else:
            return x


@op("poisson", grad_fn="PoissonBackward0", promote=None, note="d/dinput = 0 (samples)",
    formula="input: 0 (a sample)", jvp="elementwise")
def poisson(input, generator=None):
    """A Poisson sample of each rate of ``input`` (floating, non-negative), in ``input``'s dtype. Matches
    torch.poisson number for number after the same seed (from ``generator``, a ``torch.Generator``, or the run
    context's generator when None).

    Raises:
        RuntimeError: for a negative or nan rate (PyTorch's message); NotImplementedError for integer tensors.
        TypeError: for a ``generator`` that is not a torch.Generator.
    """
    if input.dtype.kind != "f":
        raise not_implemented_for("poisson_cpu", input.dtype)
    gen = context.generator_of(generator)
    rates = input.astype(np.float64).ravel()
    out = np.empty(rates.shape, dtype=np.float64)
    for i, rate in enumerate(rates.tolist()):
        if not rate >= 0:
            raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
        out[i] = _sample(rate, gen)
    return out.reshape(input.shape).astype(input.dtype)


@poisson.defvjp
def _(grad):
    # derivatives.yaml: self: zeros_like(self)
    return zeros_like_grad(grad)
