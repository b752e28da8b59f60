"""PyTorch's names where gradcli printed its own: a custom ``torch.autograd.Function``'s grad_fn
(``<torch.autograd.function.MyExpBackward object at 0x...>``), the grad_fn of softmax's and log_softmax's
gradient taken with ``create_graph=True`` (``SoftmaxBackwardDataBackward0``, ``LogSoftmaxBackwardDataBackward0``,
ops of their own whose derivatives are checked here against finite differences and PyTorch), and the classes of
``torch.nn`` and ``torch.optim`` (``<class 'torch.nn.modules.batchnorm.BatchNorm1d'>``). Programs run through
``gradcli run`` and, where torch is installed, under Python and PyTorch (addresses masked)."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli as G
from gradcli.api import gradcheck as gc
from gradcli.language import namespaces, nn_bridge

from test_pytorch_types import check_like_torch, run_program


# ------------------------------------------------------------------------------ classes of torch.nn, torch.optim
def _exposed_classes() -> list[str]:
    """Every class a program reaches in torch.nn, torch.optim and torch.optim.lr_scheduler, by its dotted
    name in the program (``nn.Linear``, ``torch.optim.SGD``), plus ``torch.Tensor``."""
    mods = namespaces.modules()
    out = ["torch.Tensor"]
    for prefix, space in (("nn", "torch.nn"), ("torch.optim", "torch.optim"),
                          ("torch.optim.lr_scheduler", "torch.optim.lr_scheduler")):
        out += [f"{prefix}.{n}" for n, v in sorted(mods[space].members.items()) if nn_bridge.is_torch_class(v)]
    return out


CLASSES = _exposed_classes()


def test_the_exposed_classes_are_found():
    assert {"nn.Linear", "nn.BatchNorm1d", "nn.Parameter", "nn.Module", "torch.optim.SGD",
            "torch.optim.lr_scheduler.StepLR"} <= set(CLASSES)
    assert len(CLASSES) > 60


@pytest.mark.parametrize("dotted", CLASSES)
def test_each_class_is_pytorchs_repr(dotted):
    """``repr(cls)`` of gradcli's class (what ``print(nn.X)`` shows) is torch's ``repr`` of the same class."""
    torch = pytest.importorskip("torch")
    mods = namespaces.modules()
    owner, _, name = dotted.rpartition(".")
    space = {"nn": "torch.nn"}.get(owner, owner)
    ours = namespaces.TENSOR_CLASS if dotted == "torch.Tensor" else mods[space].members[name]
    theirs = torch
    for part in ("torch.nn" if owner == "nn" else owner).split(".")[1:] + [name]:
        theirs = getattr(theirs, part)
    assert repr(ours) == repr(theirs)


def test_a_program_printing_every_class_prints_what_pytorch_prints(tmp_path):
    """The user's ``print(nn.BatchNorm1d)`` (was ``<class 'gradcli.api.nn.layers.BatchNorm1d'>``), for every class,
    and ``type()`` of instances."""
    text = ("import torch\nimport torch.nn as nn\nimport torch.optim.lr_scheduler\n"
            + "".join(f"print({c})\n" for c in CLASSES)
            + "m = nn.Sequential(nn.Linear(2, 2), nn.ReLU())\nopt = torch.optim.Adam(m.parameters())\n"
              "print(type(m), type(m[0]), type(m[1]), type(opt), type(torch.optim.lr_scheduler.ExponentialLR(opt, 0.5)))\n")
    out = check_like_torch(tmp_path, text)
    assert "<class 'torch.nn.modules.batchnorm.BatchNorm1d'>\n" in out
    assert "<class 'torch.optim.sgd.SGD'>\n" in out and "<class 'torch.nn.parameter.Parameter'>\n" in out


# -------------------------------------------------------------------------- a custom Function's grad_fn
CUSTOM = """\
import torch
class MyExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y
    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * y
x = torch.ones(2, requires_grad=True)
y = MyExp.apply(x)
print(y.grad_fn)
print(y.grad_fn.name(), y, [y.grad_fn], repr(y.grad_fn) == str(y.grad_fn))
print(y.sum().grad_fn.next_functions)
print(type(y.grad_fn), type(y.sum().grad_fn), MyExp)
"""


def test_custom_function_grad_fn_is_pytorchs(tmp_path):
    """``print(y.grad_fn)`` was ``<MyExpBackward object at 0x...>``; PyTorch's class lives in
    torch.autograd.function. ``name()`` and the tensor's ``grad_fn=<MyExpBackward>`` stay short, as PyTorch's."""
    out = check_like_torch(tmp_path, CUSTOM)
    assert out.startswith("<torch.autograd.function.MyExpBackward object at 0x")
    assert "MyExpBackward tensor([2.7183, 2.7183], grad_fn=<MyExpBackward>)" in out


# ------------------------------------------------------------------ softmax's gradient with create_graph
SOFTMAX = """\
import torch
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = x.softmax(0)
g, = torch.autograd.grad(y[0], x, create_graph=True)
print(g)
for f in (lambda t: t.softmax(0), lambda t: t.log_softmax(0), lambda t: torch.nn.functional.log_softmax(t.view(1, 3) * 2, 1)):
    y = f(x)
    g, = torch.autograd.grad(y.flatten()[0], x, create_graph=True)
    print(g, g.grad_fn.next_functions)
    h, = torch.autograd.grad(g[1], x, create_graph=True)
    print(h)
    k, = torch.autograd.grad((h * torch.tensor([1., -2., 0.5])).sum(), x)
    print(k)
"""


def test_softmax_double_backward_is_pytorchs_op(tmp_path):
    """The user's program: ``grad_fn=<MulBackward0>`` before, PyTorch's ``SoftmaxBackwardDataBackward0`` (and
    ``LogSoftmaxBackwardDataBackward0``) now, whose inputs are the gradient (no node) and softmax's output;
    second and third derivatives as PyTorch's."""
    out = check_like_torch(tmp_path, SOFTMAX)
    assert out.startswith("tensor([ 0.0819, -0.0220, -0.0599], grad_fn=<SoftmaxBackwardDataBackward0>)\n")
    assert ("grad_fn=<LogSoftmaxBackwardDataBackward0>) ((None, 0), (<LogSoftmaxBackward0 object at 0x"
            in out)


def _vjp_fn(name: str, dim: int):
    """(x, v) -> the gradient of ``<name>(x, dim)`` along v, with its graph: softmax's backward op applied to
    (v, softmax(x)), differentiable in both."""
    def f(x, v):
        y = getattr(G, name)(x, dim)
        g, = G.autograd.grad(y, x, v, create_graph=True)
        return g

    return f


CASES = [(name, shape, dim) for name in ("softmax", "log_softmax")
         for shape, dim in (((4,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 3, 2), -1), ((), 0), ((3, 1), 1))]


@pytest.mark.parametrize("name,shape,dim", CASES)
def test_backward_data_ops_gradcheck(name, shape, dim):
    """The backward op's own derivatives (softmax's second derivative) and their derivatives (the third) agree
    with central differences in float64, in reverse and forward mode."""
    rng = np.random.default_rng(0)
    x = G.tensor(rng.uniform(-2, 2, shape), dtype=G.float64, requires_grad=True)
    v = G.tensor(rng.uniform(-1, 1, shape), dtype=G.float64, requires_grad=True)
    f = _vjp_fn(name, dim)
    assert gc.gradcheck(f, (x, v), check_forward_ad=True)
    assert gc.gradgradcheck(f, (x, v))


@pytest.mark.parametrize("name,shape,dim", CASES)
def test_backward_data_ops_match_torch(name, shape, dim):
    """The gradient of softmax's backward op with respect to x and v, and one more derivative, equal PyTorch's
    (float64), and so do the grad_fn names along the way."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    xs, vs, ws = (rng.uniform(-2, 2, shape) for _ in range(3))
    results = []
    for m in (G, torch):
        x = m.tensor(xs, dtype=m.float64, requires_grad=True)
        v = m.tensor(vs, dtype=m.float64, requires_grad=True)
        y = getattr(m, name)(x, dim)
        g, = m.autograd.grad(y, x, v, create_graph=True)
        gx, gv = m.autograd.grad((g * m.tensor(ws, dtype=m.float64)).sum(), (x, v), create_graph=True)
        third, = m.autograd.grad((gx * gx).sum() + (gv * gx).sum(), x)
        results.append((g.grad_fn.name(), gx.grad_fn is not None, [t.detach().numpy() for t in (g, gx, gv, third)]))
    (n0, r0, a0), (n1, r1, a1) = results
    assert (n0, r0) == (n1, r1)
    for a, b in zip(a0, a1):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_softmax_double_backward_in_the_check_of_grad(tmp_path):
    """``gradcli run`` of a program that gradchecks softmax's gradient itself (torch.autograd.gradcheck in the
    language) passes, as it does under PyTorch."""
    text = ("import torch\nx = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)\n"
            "f = lambda t: torch.autograd.grad(t.log_softmax(1)[:, 0].sum(), t, create_graph=True)[0]\n"
            "print(torch.autograd.gradcheck(f, (x,)), torch.autograd.gradgradcheck(f, (x,)))\n")
    code, out, err = run_program(tmp_path, text)
    assert (code, out, err) == (0, "True True\n", "")


JACREV = """\
import torch
x = torch.tensor([[0.5, -1.0, 2.0, 0.0], [1.0, 0.25, -0.5, 3.0], [-2.0, 1.5, 0.75, -0.25]], dtype=torch.float64)
for d in (0, 1, -1, -2):
    print(torch.func.jacrev(lambda t: torch.softmax(t, d))(x).sum(0))
    print(torch.func.jacrev(lambda t: torch.log_softmax(t, d))(x).sum(0))
"""


def test_jacrev_of_softmax_along_every_dim(tmp_path):
    """jacrev carries a batch of cotangents through softmax's backward op at once: the reduced dim is counted
    from the end of its arrays (a positive dim summed over the wrong axis before)."""
    check_like_torch(tmp_path, JACREV)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -3])
def test_jacrev_and_hessian_match_torch(name, dim):
    torch = pytest.importorskip("torch")
    from gradcli.api import func as GF

    x = np.random.default_rng(2).uniform(-1, 1, (2, 3, 2))
    a = GF.jacrev(lambda t: getattr(G, name)(t, dim))(G.tensor(x))
    b = torch.func.jacrev(lambda t: getattr(torch, name)(t, dim))(torch.tensor(x))
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)
    a = GF.hessian(lambda t: (getattr(G, name)(t, dim) * G.tensor(x)).sum())(G.tensor(x))
    b = torch.func.hessian(lambda t: (getattr(torch, name)(t, dim) * torch.tensor(x)).sum())(torch.tensor(x))
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)
