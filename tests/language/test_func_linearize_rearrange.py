"""torch.func.linearize and torch.func.rearrange (gradcli/api/func.py, gradcli/api/einops.py) and how a notebook
shows a torch function (vmap's documented example), compared with PyTorch; and through `gradcli run`."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli as G
from gradcli.api import func as gfunc
from helpers import python_and_gradcli_stdout

PATTERNS = [
    ("b h w c -> b h w c", {}), ("b h w c -> (b h) w c", {}), ("b h w c -> h (b w) c", {}),
    ("b h w c -> b c h w", {}), ("b h w c -> b (c h w)", {}),
    ("b (h1 h) (w1 w) c -> (b h1 w1) h w c", {"h1": 2, "w1": 2}),
    ("b (h h1) (w w1) c -> b h w (c h1 w1)", {"h1": 2, "w1": 2}),
    ("... c -> c ...", {}), ("b ... c -> (b ...) c", {}), ("b h w c -> b h w c 1", {}), ("b h w c -> b h w () c", {}),
    ("b h w c -> (c b) (w h)", {}),
]


@pytest.mark.parametrize("pattern,lengths", PATTERNS)
def test_rearrange_values_and_gradients_are_pytorchs(pattern, lengths, torch):
    a = np.random.default_rng(0).standard_normal((4, 6, 8, 3))
    out = []
    for m, rearrange in ((G, gfunc.rearrange), (torch, torch.func.rearrange)):
        x = m.tensor(a, requires_grad=True)
        y = rearrange(x, pattern, **lengths)
        w = m.tensor(np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)))
        (y * w).sum().backward()
        out.append((tuple(y.shape), np.array(y.tolist()), np.array(x.grad.tolist())))
    assert out[0][0] == out[1][0]
    np.testing.assert_array_equal(out[0][1], out[1][1])
    np.testing.assert_array_equal(out[0][2], out[1][2])


def test_rearrange_of_a_list_stacks_it(torch):
    g = gfunc.rearrange([G.ones(2, 3), G.zeros(2, 3)], "n a b -> a (n b)")
    t = torch.func.rearrange([torch.ones(2, 3), torch.zeros(2, 3)], "n a b -> a (n b)")
    assert g.tolist() == t.tolist()


@pytest.mark.parametrize("pattern,lengths", [
    ("b h w c", {}), ("b h w c -> b h w", {}), ("b h h c -> b h c", {}), ("b (h (w)) c -> b h w c", {}),
    ("b h w c -> b h w c", {"x": 2}), ("b h w c -> b h w c", {"h": 2.0}), ("b h w c -> b 2 h w c", {}),
    ("b h w -> b h w", {}), ("b h w c d -> b h w c d", {}), ("b h w c -> ... b h w c", {}),
    ("b h w c -> b h w c.", {}), ("b h w _c -> b h w _c", {}), ("b h w c! -> b h w c", {})])
def test_rearrange_errors_are_pytorchs(pattern, lengths, torch):
    with pytest.raises(Exception) as want:
        torch.func.rearrange(torch.zeros(2, 4, 6, 3), pattern, **lengths)
    with pytest.raises(Exception) as got:
        gfunc.rearrange(G.zeros(2, 4, 6, 3), pattern, **lengths)
    assert type(got.value) is type(want.value)
    assert str(got.value) == str(want.value)


def test_linearize_gives_the_jvp_at_the_primals(torch):
    a = np.random.default_rng(1).standard_normal((3, 2))
    t1 = np.random.default_rng(2).standard_normal((3, 2))
    out = []
    for m, lin in ((G, gfunc.linearize), (torch, torch.func.linearize)):
        value, jvp_fn = lin(lambda x, y: (x.sin() * y, x.sum()), m.tensor(a), m.tensor(2 * a))
        tans = jvp_fn(m.tensor(t1), m.tensor(t1 * 3))
        errors = []
        for bad in ((m.ones(2, 2), m.ones(3, 2)), (m.ones(3, 2, dtype=m.float64), m.ones(3, 2))):
            try:
                jvp_fn(*bad)
            except RuntimeError as e:
                errors.append(str(e))
        out.append(([np.array(v.tolist()) for v in value], [np.array(v.tolist()) for v in tans], errors))
    for k in (0, 1):
        for g, t in zip(out[0][k], out[1][k]):
            np.testing.assert_allclose(g, t, rtol=1e-6)
    assert out[0][2] == out[1][2]


PROGRAM = """
import torch
from torch.func import linearize, rearrange
output, jvp_fn = linearize(lambda x: x.sin(), torch.zeros(3, 3))
print(output, jvp_fn(torch.ones(3, 3)))
images = torch.arange(2 * 4 * 6 * 3.0).reshape(2, 4, 6, 3)
print(rearrange(images, "b (h1 h) (w1 w) c -> (b h1 w1) h w c", h1=2, w1=2).shape)
print(rearrange(images, "b h w c -> b (c h w)")[1, :5])
"""


def test_a_program_prints_what_pytorch_prints(tmp_path):
    want, got = python_and_gradcli_stdout(tmp_path, "func_linearize_rearrange", PROGRAM)
    assert got == want


def _ipython_function_text(fn) -> str:
    # IPython.lib.pretty's _function_pprint (IPython is not a test dependency): "<function MODULE.QUALNAME>",
    # the module left out for builtins
    name = fn.__qualname__
    if fn.__module__ and fn.__module__ not in ("__builtin__", "builtins", "exceptions"):
        name = f"{fn.__module__}.{name}"
    return f"<function {name}>"


def test_a_notebook_shows_a_torch_function_as_ipython_shows_pytorchs(torch):
    from gradcli.app import run_program

    pretty = _ipython_function_text

    out = []
    req = run_program.RunRequest(source="import torch\n# %%\ntorch.dot\n# %%\ntorch.matmul\n", filename="<nb>",
                                 notebook=True, seed=0)
    run_program.run_program(req, write=out.append, warn=lambda text: None, report=lambda err: out.append(str(err)))
    assert "".join(out) == pretty(torch.dot) + "\n" + pretty(torch.matmul) + "\n"
