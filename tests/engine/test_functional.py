"""``torch.autograd.functional`` (reverse mode): jacobian, hessian, vjp, jvp, hvp, vhp equal
PyTorch's values, shapes, nesting and messages, through ``gradcli run`` as a user writes them and through the
library API on a set of functions and shapes."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import gradcli as G
from gradcli.api import autograd_functional as GF
from helpers import HANG_TIMEOUT, ROOT
from torch_python import run_python

PROGRAM = '''\
import torch
from torch.autograd.functional import jacobian, hessian, vjp, jvp, hvp, vhp

def f(x, y):
    return x.sin() * y, (x * y).sum()

x = torch.tensor([1., 2.])
y = torch.tensor([3., 4.])
print(jacobian(f, (x, y)))
print(jacobian(lambda a: a.exp() * 2, x))
print(hessian(lambda a: (a ** 3).sum() + a[0] * a[1], x))
print(hessian(lambda a, b: (a * b).sum() ** 2, (x, y)))
print(vjp(lambda a: a * a, x, torch.tensor([1., 0.5])))
print(jvp(lambda a: a.exp() * 2, x, torch.tensor([1., 0.])))
print(hvp(lambda a: (a ** 4).sum(), x, torch.tensor([1., 1.])))
print(vhp(lambda a: (a ** 4).sum(), x, torch.tensor([1., 1.])))
A = torch.tensor([[1., 2.], [3., 4.]])
print(torch.autograd.functional.jacobian(lambda v: (A @ v).tanh(), torch.tensor([0.5, -0.5])))
print(jacobian(lambda v: v.sum(), torch.tensor([0.5, -0.5]), create_graph=True))
try:
    jacobian(lambda a, b: a * 2, (x, y), strict=True)
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    hessian(lambda a: a * 2, x)
except RuntimeError as e:
    print("RuntimeError:", e)
'''

EXPECTED_START = """\
((tensor([[ 1.6209, -0.0000],
        [ 0.0000, -1.6646]]), tensor([[0.8415, 0.0000],
        [0.0000, 0.9093]])), (tensor([3., 4.]), tensor([1., 2.])))
"""


def test_a_program_prints_what_pytorch_prints(tmp_path):
    path = tmp_path / "functional.py"
    path.write_text(PROGRAM)
    got = subprocess.run([sys.executable, "-m", "gradcli", "run", str(path)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert got.returncode == 0, got.stderr
    assert got.stdout.startswith(EXPECTED_START)
    assert "RuntimeError: Output 0 of the user-provided function is independent of input 1. This is not allowed " \
           "in strict mode." in got.stdout
    torch = pytest.importorskip("torch")
    want = run_python(path, timeout=HANG_TIMEOUT)
    assert want.returncode == 0, want.stderr
    assert got.stdout == want.stdout, torch.__version__


FUNCS = {  # name: (function of the library m, input shapes)
    "elementwise": (lambda m: (lambda a: (a.sin() * a.exp()).tanh()), [(3,)]),
    "matmul": (lambda m: (lambda a, b: (a @ b).sigmoid()), [(2, 3), (3, 4)]),
    "reduce": (lambda m: (lambda a: (a ** 2).sum(1)), [(3, 2)]),
    "two_outputs": (lambda m: (lambda a, b: (a * b, (a - b).abs().sum())), [(4,), (4,)]),
    "scalar": (lambda m: (lambda a: (a ** 3).sum() + a.prod()), [(2, 2)]),
}


def _inputs(m, shapes, dtype):
    rng = np.random.default_rng(sum(map(len, shapes)))
    return [m.tensor(rng.uniform(0.2, 1.5, s).astype(dtype)) for s in shapes]


def _flat(x):
    if isinstance(x, tuple):
        return [y for e in x for y in _flat(e)]
    return [x.detach().numpy() if hasattr(x, "detach") and not isinstance(x, G.Tensor) else x.data]


@pytest.mark.parametrize("name", sorted(FUNCS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_jacobian_and_vjp_equal_pytorch(name, dtype):
    torch = pytest.importorskip("torch")
    make, shapes = FUNCS[name]
    gi, ti = _inputs(G, shapes, dtype), [torch.from_numpy(a.data.copy()) for a in _inputs(G, shapes, dtype)]
    g_in = tuple(gi) if len(gi) > 1 else gi[0]
    t_in = tuple(ti) if len(ti) > 1 else ti[0]
    got = GF.jacobian(make(G), g_in)
    want = torch.autograd.functional.jacobian(make(torch), t_in)
    for a, b in zip(_flat(got), _flat(want), strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    out_t = make(torch)(*ti)
    v_t = tuple(torch.ones_like(o) for o in out_t) if isinstance(out_t, tuple) else torch.ones_like(out_t)
    v_g = tuple(G.tensor(v.numpy()) for v in v_t) if isinstance(v_t, tuple) else G.tensor(v_t.numpy())
    for a, b in zip(_flat(GF.vjp(make(G), g_in, v_g)), _flat(torch.autograd.functional.vjp(make(torch), t_in, v_t)),
                    strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_hessian_hvp_and_create_graph_equal_pytorch():
    torch = pytest.importorskip("torch")
    make, shapes = FUNCS["scalar"]
    g, t = _inputs(G, shapes, np.float64)[0], torch.from_numpy(_inputs(G, shapes, np.float64)[0].data.copy())
    np.testing.assert_allclose(GF.hessian(make(G), g).data,
                               torch.autograd.functional.hessian(make(torch), t).numpy(), rtol=1e-10)
    v = np.arange(4.0).reshape(2, 2)
    for gf, tf in ((GF.hvp, torch.autograd.functional.hvp), (GF.vhp, torch.autograd.functional.vhp)):
        (go, gr), (to, tr) = gf(make(G), g, G.tensor(v)), tf(make(torch), t, torch.tensor(v))
        np.testing.assert_allclose(gr.data, tr.numpy(), rtol=1e-10)
        np.testing.assert_allclose(go.data, to.numpy(), rtol=1e-12)
    # create_graph: the Jacobian can be differentiated again (third derivatives of sum(x^3) are 6)
    x = G.tensor([0.5, 1.5], requires_grad=True)
    h = GF.hessian(lambda a: (a ** 3).sum(), x, create_graph=True)
    assert h.requires_grad
    h.sum().backward()
    np.testing.assert_allclose(x.grad.data, [6.0, 6.0])


def test_checks_and_messages():
    with pytest.raises(TypeError, match="The inputs given to jacobian must be either a Tensor or a tuple of "
                                        "Tensors but the given inputs has type <class 'int'>."):
        GF.jacobian(lambda a: a, 3)
    with pytest.raises(TypeError, match="The outputs of the user-provided function given to jacobian must be "
                                        "either a Tensor or a tuple of Tensors"):
        GF.jacobian(lambda a: 3, G.tensor([1.0]))
    with pytest.raises(RuntimeError, match="The Tensor returned by the function given to hessian should contain a "
                                           "single element"):
        GF.hessian(lambda a: a * 2, G.tensor([1.0, 2.0]))
    with pytest.raises(NotImplementedError, match='only implemented for `vectorize=True`'):
        GF.jacobian(lambda a: a, G.tensor([1.0]), strategy="forward-mode")
    np.testing.assert_array_equal(GF.jacobian(lambda a, b: a * 2, (G.tensor([1.0]), G.tensor([2.0])))[1].data,
                                  [[0.0]])  # independent input: zeros unless strict
