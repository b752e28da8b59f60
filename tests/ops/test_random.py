"""PyTorch's random numbers: after ``torch.manual_seed(s)``, gradcli's rand, randn, randint,
randperm, normal, normal_, uniform_, random_, bernoulli and the *_like forms give PyTorch's CPU values, bit for
bit, over many seeds, sizes (below and above 16 elements, PyTorch's switch between its scalar and its
16-at-a-time normal kernels) and dtypes, and in sequences of calls (the generator's state, including the normal
number PyTorch keeps between calls). Without torch installed, the properties that do not need it still run.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradcli as G
from gradcli.engine.generator import Generator
from helpers import HANG_TIMEOUT, ROOT, python_and_gradcli_stdout
from torch_python import run_python

SEEDS = [0, 1, 7, 42, 1234, 2**31 - 1, 2**32 + 5, 2**63 + 11, -1, -(2**63)]
SIZES = [(), (1,), (2,), (3,), (15,), (16,), (17,), (31,), (32,), (33,), (4, 5), (2, 3, 8), (1000,)]
FLOATS = ["float32", "float64"]

# each entry: gradcli's call, torch's call (on the module object of each), both after manual_seed(seed)
CALLS = {
    "rand": (lambda m, shape, dt: m.rand(shape, dtype=getattr(m, dt))),
    "randn": (lambda m, shape, dt: m.randn(shape, dtype=getattr(m, dt))),
    "randint": (lambda m, shape, dt: m.randint(-5, 1000, shape)),
    "randint_wide": (lambda m, shape, dt: m.randint(0, 2**40, shape)),
    "randint_28": (lambda m, shape, dt: m.randint(3, 2**28 + 3, shape)),
    "normal_": (lambda m, shape, dt: m.zeros(shape, dtype=getattr(m, dt)).normal_(1.5, 2.5)),
    "uniform_": (lambda m, shape, dt: m.zeros(shape, dtype=getattr(m, dt)).uniform_(-2, 3)),
    "random_": (lambda m, shape, dt: m.zeros(shape, dtype=m.int64).random_(-3, 50)),
    "normal_sized": (lambda m, shape, dt: m.normal(-1.0, 0.5, size=shape)),
    "bernoulli": (lambda m, shape, dt: m.bernoulli(m.full(shape, 0.3, dtype=getattr(m, dt)))),
    "randn_like": (lambda m, shape, dt: m.randn_like(m.zeros(shape, dtype=getattr(m, dt)))),
    "rand_like": (lambda m, shape, dt: m.rand_like(m.zeros(shape, dtype=getattr(m, dt)))),
    "randint_like": (lambda m, shape, dt: m.randint_like(m.zeros(shape, dtype=getattr(m, dt)), 2, 9)),
    # in-place sampling
    "exponential_": (lambda m, shape, dt: m.zeros(shape, dtype=getattr(m, dt)).exponential_()),
    "exponential_lambd": (lambda m, shape, dt: m.zeros(shape, dtype=getattr(m, dt)).exponential_(2.5)),
}


def _values(t) -> np.ndarray:
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") and not isinstance(t, G.Tensor) else t.data)


def _same(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)  # bit for bit (NaN-free here)


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("dt", FLOATS)
def test_every_sampler_equals_pytorch_bit_for_bit(name, dt):
    torch = pytest.importorskip("torch")
    call = CALLS[name]
    for seed in SEEDS:
        for shape in SIZES:
            torch.manual_seed(seed)
            G.manual_seed(seed)
            want = call(torch, shape, dt).numpy()
            got = call(G, shape, dt).data
            _same(got, want)


@pytest.mark.parametrize("dt", FLOATS)
def test_a_draw_of_many_chunks_equals_pytorch_bit_for_bit(dt):
    """randn and normal_ of more values than one chunk of the generator's normal fill (drawn and transformed a
    chunk at a time), with a tail that is not a multiple of 16, and the draw after them."""
    torch = pytest.importorskip("torch")
    from gradcli.engine import generator

    n = 3 * generator._NORMAL_CHUNK + 37
    for seed in (0, 42):
        torch.manual_seed(seed)
        G.manual_seed(seed)
        for call in (CALLS["randn"], CALLS["normal_"], CALLS["randn"]):
            _same(call(G, (n,), dt).data, call(torch, (n,), dt).numpy())
        _same(G.randn(5).data, torch.randn(5).numpy())


def test_a_sequence_of_calls_keeps_pytorch_s_generator_state():
    """The state carries across calls and kinds: the words each call consumes, and the normal number PyTorch's
    scalar kernel keeps for the next call (an odd count of fewer than 16 normals leaves one)."""
    torch = pytest.importorskip("torch")

    def run(m):
        out = [m.randn(3), m.rand(2), m.randn(1), m.randn(5, dtype=m.float64), m.randint(0, 7, (4,)),
               m.randn(17), m.randperm(9), m.zeros(3).normal_(), m.randn(2), m.bernoulli(m.full((3,), 0.5)),
               m.rand(20, dtype=m.float64), m.randn(1, dtype=m.float64), m.randn(1),
               m.multinomial(m.tensor([0.2, 0.3, 0.5]), 2), m.zeros(3).exponential_(0.5), m.randn(1),
               m.multinomial(m.tensor([[0.2, 0.8], [0.6, 0.4]]), 3, True), m.rand(1)]
        return [o.numpy() if hasattr(o, "numpy") and not isinstance(o, G.Tensor) else o.data for o in out]

    for seed in (0, 3, 99):
        torch.manual_seed(seed)
        want = run(torch)
        G.manual_seed(seed)
        got = run(G)
        for g, w in zip(got, want):
            _same(g, w)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 16, 100, 1000])
@pytest.mark.parametrize("dtype", ["int64", "int32", "float32", "float64"])
def test_randperm_equals_pytorch(n, dtype):
    torch = pytest.importorskip("torch")
    for seed in (0, 5, 2**40):
        torch.manual_seed(seed)
        G.manual_seed(seed)
        _same(G.randperm(n, dtype=getattr(G, dtype)).data, torch.randperm(n, dtype=getattr(torch, dtype)).numpy())


def test_normal_forms_grad_fns_and_zero_gradients_as_pytorch():
    torch = pytest.importorskip("torch")
    for m in (torch, G):
        m.manual_seed(0)
    results = {}
    for name, m in (("torch", torch), ("gradcli", G)):
        m.manual_seed(4)
        mean = m.tensor([0.0, 1.0, 2.0], requires_grad=True)
        std = m.tensor([1.0, 0.5, 2.0], requires_grad=True)
        outs = [m.normal(mean, 2.0), m.normal(1.0, std), m.normal(mean, std)]
        total = sum(o.sum() for o in outs)
        total.backward()
        results[name] = ([o.detach().numpy() if m is torch else o.data for o in outs],
                         [type(o.grad_fn).__name__ if m is torch else o.grad_fn.name() for o in outs],
                         mean.grad.numpy() if m is torch else mean.grad.data,
                         std.grad.numpy() if m is torch else std.grad.data)
    (tv, tn, tm, ts), (gv, gn, gm, gs) = results["torch"], results["gradcli"]
    for a, b in zip(gv, tv):
        _same(a, b)
    assert gn == tn == ["NormalBackward1", "NormalBackward2", "NormalBackward3"]
    _same(gm, tm)
    _same(gs, ts)


@pytest.mark.parametrize("call, message", [
    (lambda: G.zeros(2).normal_(0, -1), "normal expects std >= 0.0, but found std -1"),
    (lambda: G.zeros(2).uniform_(3, 2), "uniform_ expects to return a [from, to) range, but found from=3 > to=2"),
    (lambda: G.randperm(-1), "Trying to create tensor with negative dimension -1: [-1]"),
    (lambda: G.normal(1.0, -1.0, (2,)), "normal expects std >= 0.0, but found std -1"),
    (lambda: G.bernoulli(G.tensor([1.5])), "Expected p_in >= 0 && p_in <= 1 to be true, but got false."),
    (lambda: G.randint_like(G.zeros(2), 5, 5), "random_ expects 'from' to be less than 'to', but got from=5 >= to=5"),
    (lambda: G.zeros(2).exponential_(0), "exponential_ expects lambda > 0.0, but found lambda=0"),
    (lambda: G.multinomial(G.tensor([1.0, 2.0]), 3), "cannot sample n_sample > prob_dist.size(-1) samples without "
     "replacement"),
    (lambda: G.multinomial(G.tensor([0.0, 0.0]), 2, True), "invalid multinomial distribution (sum of probabilities "
     "<= 0)"),
])
def test_errors_are_pytorch_s(call, message):
    with pytest.raises(RuntimeError) as e:
        call()
    assert message in str(e.value)


def test_manual_seed_takes_pytorch_s_range_and_conversions():
    G.manual_seed(-1)
    assert G.initial_seed() == 2**64 - 1
    G.manual_seed(1.5)  # int(1.5), as torch.manual_seed
    assert G.initial_seed() == 1
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        G.manual_seed(2**64)
    with pytest.raises(ValueError, match="invalid literal for int"):
        G.manual_seed("a")


def test_without_a_seed_numbers_are_random_as_in_pytorch():
    code = "import gradcli as G; print(G.initial_seed(), G.rand(4).tolist())"
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout for _ in range(3)}
    assert len(outs) == 3


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**64 - 1), n=st.integers(0, 64), low=st.integers(-10**6, 10**6),
       span=st.integers(1, 2**40))
def test_generator_properties(seed, n, low, span):
    """Without torch: reseeding repeats the stream; values lie in their ranges; float32 uniforms are multiples of
    2**-24 below 1; normal numbers are finite."""
    a, b = Generator(seed), Generator(seed)
    u = a.uniform((n,), np.float32)
    _same(u, b.uniform((n,), np.float32))
    assert ((u >= 0) & (u < 1)).all() and (u * 2**24 == np.round(u * 2**24)).all()
    r = a.random_from_to((n,), low, low + span, np.int64)
    _same(r, b.random_from_to((n,), low, low + span, np.int64))
    assert ((r >= low) & (r < low + span)).all()
    z = a.normal((n,), np.float32)
    _same(z, b.normal((n,), np.float32))
    assert np.isfinite(z).all()
    assert sorted(a.randperm(n, np.int64).tolist()) == list(range(n))


def test_a_seeded_program_prints_pytorch_s_numbers(tmp_path):
    """What a user does: a program seeded with torch.manual_seed, run with gradcli run, prints what PyTorch
    prints (the expected text is PyTorch's output of the same program, checked when torch is installed)."""
    program = tmp_path / "seeded.py"
    program.write_text(
        "import torch\n"
        "torch.manual_seed(0)\n"
        "w = torch.randn(3, 2, requires_grad=True)\n"
        "x = torch.rand(4, 3)\n"
        "idx = torch.randperm(4)\n"
        "loss = (x[idx] @ w).tanh().sum()\n"
        "loss.backward()\n"
        "print(w)\n"
        "print(idx)\n"
        "print(w.grad)\n"
        "print(torch.randint(0, 10, (5,)))\n"
        "print(torch.empty(17).normal_(0, 0.1)[:4] if hasattr(torch, 'empty') else None)\n"
        .replace("torch.empty(17)", "torch.zeros(17)").replace(" if hasattr(torch, 'empty') else None", ""))
    got = subprocess.run([sys.executable, "-m", "gradcli", "run", str(program)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert got.returncode == 0, got.stderr
    expected = (
        "tensor([[ 1.5410, -0.2934],\n        [-2.1788,  0.5684],\n        [-1.0845, -1.3986]], "
        "requires_grad=True)\n")
    assert got.stdout.startswith(expected)
    torch = pytest.importorskip("torch")
    want = run_python(program, timeout=HANG_TIMEOUT)
    assert want.returncode == 0, want.stderr
    assert got.stdout == want.stdout
    assert torch.__version__  # the oracle ran


def test_seed_option_means_manual_seed():
    """``gradcli grad --seed N`` is torch.manual_seed(N): the inputs are PyTorch's numbers."""
    r = subprocess.run([sys.executable, "-m", "gradcli", "grad", "(w * w).sum()", "-i", "w=randn(3)", "--seed",
                        "0", "--json"], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 0, r.stderr
    import json
    doc = json.loads(r.stdout)
    # the JSON holds the shortest decimal of each float32 (torch.manual_seed(0); torch.randn(3))
    np.testing.assert_array_equal(np.array(doc["inputs"]["w"]["value"], np.float32),
                                  np.array([1.5409960746765137, -0.293428897857666, -2.1787893772125244], np.float32))


# --------------------------------------------------------------------------------------- multinomial

MULTINOMIAL_SHAPES = [(1,), (3,), (5,), (16,), (17,), (33,), (1, 4), (4, 3), (3, 17), (2, 1000), (4000,)]


def _probs(shape, seed: int, dt: str):
    """Probabilities with zeros and ties (the first and last category equal), not normalized, in ``dt``."""
    p = np.random.default_rng(seed).random(shape)
    p[p < 0.2] = 0
    p[..., 0] = p[..., -1] = 0.5
    return p.astype(dt)


@pytest.mark.parametrize("replacement", [False, True])
@pytest.mark.parametrize("dt", FLOATS + ["float16"])
def test_multinomial_equals_pytorch_bit_for_bit(dt, replacement):
    """Both of PyTorch's paths (the Gumbel trick without replacement or for one sample, with topk's order of
    ties; the kernel's cumulative distribution and binary search with replacement), 1-d and 2-d, sample counts
    of 1, a few and all categories, over seeds; the generator's state afterwards too."""
    torch = pytest.importorskip("torch")
    for seed in (0, 1, 42, 2**40 + 3, -1):
        for shape in MULTINOMIAL_SHAPES:
            p = _probs(shape, abs(seed) % 1000, dt)
            for n in {1, 2, 3, shape[-1], 40}:
                if n > shape[-1] and not replacement:
                    continue
                torch.manual_seed(seed)
                G.manual_seed(seed)
                want = torch.multinomial(torch.from_numpy(p), n, replacement).numpy()
                got = G.multinomial(G.tensor(p), n, replacement)
                _same(got.data, want)
                assert not got.requires_grad
                _same(G.rand(2).data, torch.rand(2).numpy())


@pytest.mark.parametrize("probs, n, replacement", [
    ([0.5], 1, False), ([[[1.0]]], 1, False), ([1.0, 2.0], 0, False), ([1.0, 2.0], 3, False),
    ([1.0, -2.0], 1, True), ([1.0, -2.0], 2, True), ([1.0, float("nan")], 2, True), ([1.0, float("inf")], 2, True),
    ([1.0, float("nan")], 2, False), ([[1.0, 1.0], [1.0, -1.0]], 2, True), ([[1.0, 1.0], [0.0, 0.0]], 2, True),
    ([[1.0, 1.0], [0.0, 0.0]], 1, False), ([[0.0, 0.0], [1.0, -1.0]], 2, True), ([1, 2], 1, False),
    ([[]], 2, True), ([[]], 1, True), ([], 2, False),
])
def test_multinomial_results_and_errors_as_pytorch(probs, n, replacement):
    """PyTorch's message for each invalid call (the Gumbel path checks all elements first; the kernel row by
    row, element by element, with its own messages), and the numbers it drew before failing."""
    torch = pytest.importorskip("torch")
    out = {}
    for m in (torch, G):
        m.manual_seed(5)
        p = m.tensor(probs) if probs != [] else m.zeros(0, 2)
        try:
            r = m.multinomial(p, n, replacement)
            got = ("ok", r.tolist(), r.shape)
        except (RuntimeError, TypeError) as e:
            got = (type(e).__name__, str(e).splitlines()[0])
        out[m.__name__] = (got, m.rand(1).item())
    assert out["gradcli"] == out["torch"]


def test_multinomial_method_and_keywords():
    torch = pytest.importorskip("torch")
    for m in (torch, G):
        m.manual_seed(3)
    p = [[0.1, 0.0, 0.9], [0.3, 0.3, 0.4]]
    want = torch.tensor(p).multinomial(num_samples=4, replacement=True)
    got = G.tensor(p).multinomial(num_samples=4, replacement=True)
    _same(got.data, want.numpy())
    assert got.dtype == G.int64


def test_exponential_records_pytorch_s_grad_fn_and_zero_gradient():
    torch = pytest.importorskip("torch")
    names, grads = [], []
    for m in (torch, G):
        m.manual_seed(2)
        x = m.ones(4, requires_grad=True)
        y = (x * 2).exponential_(1.5)
        y.sum().backward()
        names.append(type(y.grad_fn).__name__ if m is torch else y.grad_fn.name())
        grads.append(x.grad.numpy() if m is torch else x.grad.data)
    assert names == ["ExponentialBackward0"] * 2
    _same(grads[1], grads[0])
    with pytest.raises(RuntimeError, match="dtype must be a floating point but you specified Long"):
        G.zeros(2, dtype=G.int64).exponential_()


def test_a_seeded_program_samples_categories_as_pytorch(tmp_path):
    """What a user does: ``gradcli run`` on a PyTorch program that draws categories prints PyTorch's output."""
    pytest.importorskip("torch")
    program = (
        "import torch\n"
        "torch.manual_seed(0)\n"
        "print(torch.multinomial(torch.tensor([0.1, 0.2, 0.7]), 5, replacement=True))\n"
        "print(torch.multinomial(torch.tensor([0.1, 0.2, 0.7]), 3))\n"
        "w = torch.tensor([[1.0, 0.0, 3.0, 2.0], [0.5, 0.5, 0.5, 0.5]])\n"
        "print(w.multinomial(2))\n"
        "print(torch.multinomial(w, 6, True))\n"
        "print(torch.multinomial(w, 1, True))\n"
        "print(torch.zeros(5).exponential_(2.0))\n"
        "print(torch.zeros(3, dtype=torch.float64).exponential_())\n"
        "try:\n"
        "    torch.multinomial(torch.tensor([1.0, -1.0]), 2, True)\n"
        "except RuntimeError as e:\n"
        "    print(e)\n"
        "print(torch.rand(2))\n")
    want, got = python_and_gradcli_stdout(tmp_path, "multinomial", program)
    assert got == want
    assert got.startswith("tensor([")


def test_run_seed_option_draws_pytorch_s_categories(tmp_path):
    """``gradcli run --seed 7`` is torch.manual_seed(7) before the program: its categories are PyTorch's."""
    torch = pytest.importorskip("torch")
    program = tmp_path / "draw.py"
    program.write_text("print(torch.multinomial(torch.tensor([0.1, 0.2, 0.7]), 5, replacement=True).tolist())\n"
                       "print(torch.tensor([1.0, 2.0, 3.0, 4.0]).multinomial(3).tolist())\n")
    got = subprocess.run([sys.executable, "-m", "gradcli", "run", "--seed", "7", str(program)], capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert got.returncode == 0, got.stderr
    torch.manual_seed(7)
    want = [torch.multinomial(torch.tensor([0.1, 0.2, 0.7]), 5, replacement=True).tolist(),
            torch.tensor([1.0, 2.0, 3.0, 4.0]).multinomial(3).tolist()]
    assert got.stdout == "".join(f"{w}\n" for w in want)
