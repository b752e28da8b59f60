"""The tutorials' numbers (shared/seeds), through the library and through the example programs."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import gradcli as G
from gradcli.frontends.cli import app

from helpers import ROOT
EXAMPLES = sorted((ROOT / "examples").glob("*.gc"))


def test_dot_gradient_is_4x():
    x = G.arange(4.0)
    x.requires_grad_(True)
    assert x.grad is None
    y = 2 * G.dot(x, x)
    assert str(y) == "tensor(28., grad_fn=<MulBackward0>)"
    y.backward()
    assert str(x.grad) == "tensor([ 0.,  4.,  8., 12.])"
    assert str(x.grad == 4 * x) == "tensor([True, True, True, True])"
    x.grad.zero_()
    x.sum().backward()
    assert str(x.grad) == "tensor([1., 1., 1., 1.])"


def test_eye_accumulation_4_2_then_8_4_then_zeroed():
    inp = G.eye(5, requires_grad=True)
    out = (inp + 1).pow(2)
    assert out.grad_fn.name() == "PowBackward0"
    eye = np.eye(5, dtype=np.float32)
    out.backward(G.ones_like(inp), retain_graph=True)
    np.testing.assert_array_equal(inp.grad.data, 2 + 2 * eye)
    out.backward(G.ones_like(inp), retain_graph=True)
    np.testing.assert_array_equal(inp.grad.data, 4 + 4 * eye)
    inp.grad.zero_()
    out.backward(G.ones_like(inp), retain_graph=True)
    np.testing.assert_array_equal(inp.grad.data, 2 + 2 * eye)


def test_add_mul_mean_gives_4_5():
    x = G.ones(2, 2, requires_grad=True)
    y = x + 2
    assert y.grad_fn.name() == "AddBackward0"
    z = y * y * 3
    out = z.mean()
    assert (str(z), str(out)) == ("tensor([[27., 27.],\n        [27., 27.]], grad_fn=<MulBackward0>)",
                                  "tensor(27., grad_fn=<MeanBackward0>)")
    out.backward()
    assert str(x.grad) == "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])"


def test_vjp_and_backward_errors():
    x = G.randn(3, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()
    y.backward(G.tensor([0.1, 1.0, 0.0001], dtype=G.float))
    assert str(x.grad) == "tensor([2.0000e-01, 2.0000e+00, 2.0000e-04])"
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
        y.backward(G.tensor([1, 1.0, 1], dtype=G.float))
    with pytest.raises(AttributeError, match="'Tensor' object has no attribute 'zero_grad'"):
        y.zero_grad()


def test_quadratic_on_a_one_element_tensor():
    x = G.rand(1, requires_grad=True)
    y = x * x + 2 * x + 1
    assert y.grad_fn.name() == "AddBackward0"
    y.backward()
    np.testing.assert_allclose(x.grad.data, 2 * x.data + 2, rtol=1e-6)


def test_no_grad_detach_enable_grad():
    x, w, b = G.ones(5), G.rand(5, 3, requires_grad=True), G.rand(3, requires_grad=True)
    assert (G.matmul(x, w) + b).requires_grad
    with G.no_grad():
        assert not (G.matmul(x, w) + b).requires_grad
        with G.enable_grad():
            assert (x @ w + b).requires_grad
    z = G.matmul(x, w) + b
    assert not z.detach().requires_grad
    assert z.grad_fn.name() == "AddBackward0"


def test_detach_stops_gradient():
    x = G.arange(4.0)
    x.requires_grad_(True)
    y = x * x
    u = y.detach()
    z = u * x
    z.sum().backward()
    assert (x.grad == u).all() if hasattr(x.grad, "all") else np.array_equal(x.grad.data, u.data)


def _example_command(path: Path) -> list[str]:
    first = path.read_text().splitlines()[0]
    m = re.match(r"# gradcli (.*)$", first)
    assert m, f"{path.name}: first line must be the command"
    args = shlex.split(m.group(1))
    return ["@" + str(ROOT / a[1:]) if a.startswith("@examples/") else a for a in args]


EXPECTED = {
    ROOT / "examples" / "dot.gc": (28.0, {"x": [0.0, 4.0, 8.0, 12.0]}),
    ROOT / "examples" / "mean.gc": (27.0, {"x": [[4.5, 4.5], [4.5, 4.5]]}),
    ROOT / "examples" / "vjp.gc": ([0.2, -4.0, 6.0], {"x": [0.2, 2.0, 0.0002]}),
    ROOT / "examples" / "control_flow.gc": (1600.0, {"a": 16.0}),
    ROOT / "examples" / "jacobian_product.gc": (None, {"inp": (4 + 4 * np.eye(5)).tolist()}),
    ROOT / "examples" / "one_layer_net.gc": (None, None),
}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_runs_as_documented(path):
    assert path in EXPECTED, f"{path.name} has no expected result in this test"
    args = _example_command(path)
    assert args[0] == "grad"
    r = CliRunner().invoke(app, args + ["--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    output, grads = EXPECTED[path]
    if output is not None:
        assert doc["output"]["value"] == output
    if grads is not None:
        assert {k: v["value"] for k, v in doc["grads"].items()} == grads
