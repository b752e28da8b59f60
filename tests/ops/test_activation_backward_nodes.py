"""The gradients of relu, relu6, hardtanh and leaky_relu with create_graph, and hardsigmoid's second derivative,
as a user's program prints them (``gradcli run`` against Python with torch): PyTorch records the backward kernel
(threshold_backward, hardtanh_backward, leaky_relu_backward) as a node that takes the input too, so the gradient
requires grad, its grad_fn is ``*BackwardBackward0`` with PyTorch's saved attributes, and its own derivative
with respect to the input is zeros (derivatives.yaml: ``self: zeros_like(grad)``); hardsigmoid_backward has no
derivative, and a second derivative through it raises PyTorch's error."""

from __future__ import annotations

from helpers import python_and_gradcli_stdout

PROGRAM = """\
import torch
import torch.nn.functional as F

relu_saved = lambda n: (n._saved_self, n._saved_threshold)
hardtanh_saved = lambda n: (n._saved_self, n._saved_min_val, n._saved_max_val)
leaky_saved = lambda n: (n._saved_self, n._saved_negative_slope)
cases = [("relu", torch.relu, relu_saved), ("relu6", F.relu6, hardtanh_saved), ("hardtanh", F.hardtanh, hardtanh_saved),
         ("hardtanh_bounds", lambda v: F.hardtanh(v, -0.5, 0.5), hardtanh_saved),
         ("leaky_relu", F.leaky_relu, leaky_saved), ("leaky_relu_slope", lambda v: F.leaky_relu(v, 0.2), leaky_saved),
         ("hardsigmoid", F.hardsigmoid, lambda n: ())]
for name, f, saved in cases:
    s = torch.tensor([0.7, -0.3, 0.0, 6.0, -3.0, 0.5], dtype=torch.float64, requires_grad=True)
    g, = torch.autograd.grad(f(s).sum(), s, create_graph=True)
    print(name, g, g.requires_grad, g.grad_fn.name())
    print(saved(g.grad_fn))
    print(torch.func.grad(lambda v: f(v).sum())(s).requires_grad)
    try:
        print(torch.autograd.grad((g * s).sum(), s, allow_unused=True))
    except RuntimeError as e:
        print("RuntimeError:", e)
x = torch.tensor([[0.5, -1.0, 2.0, 0.3]], dtype=torch.float64, requires_grad=True)
g, = torch.autograd.grad(F.relu(x * 2).sum(), x, create_graph=True)
node = g.grad_fn
while node is not None:
    print(node.name(), [None if n is None else n.name() for n, _ in node.next_functions])
    node = next((n for n, _ in node.next_functions if n is not None and n.name() != "torch::autograd::AccumulateGrad"), None)
"""


def test_activation_gradients_with_create_graph_print_what_pytorch_prints(tmp_path):
    want, got = python_and_gradcli_stdout(tmp_path, "activation_backward", PROGRAM)
    assert got == want


POOL_PROGRAM = """\
import torch
import torch.nn.functional as F

x = torch.tensor([[[0.5, -0.9, 1.8, -1.9, 0.2], [1.2, 1.6, 0.4, 0.9, -0.7]]], dtype=torch.float64,
                 requires_grad=True)
cases = [("avg_pool1d", lambda t: F.avg_pool1d(t, 3, 1, 1)),
         ("avg_pool2d", lambda t: F.avg_pool2d(t.unsqueeze(0), 2, 1, ceil_mode=True)),
         ("avg_pool3d", lambda t: F.avg_pool3d(t.unsqueeze(0).unsqueeze(0), (1, 2, 2), 1))]
for name, f in cases:
    g, = torch.autograd.grad(f(x).sum(), x, create_graph=True)
    print(name, g.tolist(), g.requires_grad)
    print(torch.autograd.grad((g * x).sum(), x, allow_unused=True))
    gg, = torch.autograd.grad((f(x) ** 2).sum(), x, create_graph=True)
    print(torch.autograd.grad(gg.sum(), x))
"""


def test_average_pool_gradients_with_create_graph_print_what_pytorch_prints(tmp_path):
    # avg_pool*_backward takes the input (for its shape): the gradient requires grad, its derivative in the
    # input is zeros, and a loss that is not linear in the pool still has its second derivative
    want, got = python_and_gradcli_stdout(tmp_path, "avg_pool_backward", POOL_PROGRAM)
    assert got == want
