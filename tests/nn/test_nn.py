"""torch.nn and torch.optim against PyTorch: parameter initialisation after the same seed, module
outputs and gradients, optimizer trajectories (float32, compared exactly where gradcli computes as torch's
kernels do), schedulers, clip_grad_norm_, hooks, and program tests through ``gradcli run``."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradcli as G
from gradcli.api import nn as gnn
from gradcli.api import optim as gopt
from helpers import HANG_TIMEOUT, assert_printed_alike
from torch_python import run_python

torch = pytest.importorskip("torch")


def same(a, b, exact=True):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert a.shape == b.shape
    if exact:
        np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("seed", [0, 7])
def test_linear_and_embedding_init_match_torch(seed):
    G.manual_seed(seed)
    torch.manual_seed(seed)
    for make in (lambda m: m.Linear(5, 3), lambda m: m.Linear(4, 2, bias=False), lambda m: m.Embedding(6, 3)):
        g, t = make(gnn), make(torch.nn)
        for (gn, gp), (tn, tp) in zip(g.named_parameters(), t.named_parameters()):
            assert gn == tn
            same(gp, tp)


def test_sequential_forward_backward_and_repr():
    torch.manual_seed(1)
    G.manual_seed(1)
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2), torch.nn.LeakyReLU(0.2))
    g = gnn.Sequential(gnn.Linear(3, 4), gnn.Tanh(), gnn.Linear(4, 2), gnn.LeakyReLU(0.2))
    assert repr(g) == repr(t)
    x = np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3)
    to, go = t(torch.tensor(x)), g(G.tensor(x))
    same(go, to, exact=False)
    to.sum().backward()
    go.sum().backward()
    for gp, tp in zip(g.parameters(), t.parameters()):
        same(gp.grad, tp.grad, exact=False)
    assert [n for n, _ in g.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert list(g.state_dict()) == list(t.state_dict())


def test_batchnorm_train_eval_matches_torch():
    x = np.array([[1.0, 2.0, 0.0], [3.0, -2.0, 1.0], [5.0, 0.0, 2.0], [7.0, 4.0, 5.0]], dtype=np.float32)
    t, g = torch.nn.BatchNorm1d(3), gnn.BatchNorm1d(3)
    tx, gx = torch.tensor(x, requires_grad=True), G.tensor(x, requires_grad=True)
    ty, gy = t(tx), g(gx)
    same(gy, ty, exact=False)
    assert gy.grad_fn.name() == "NativeBatchNormBackward0"
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    (ty * torch.tensor(w)).sum().backward()
    (gy * G.tensor(w)).sum().backward()
    same(gx.grad, tx.grad, exact=False)
    same(g.weight.grad, t.weight.grad, exact=False)
    same(g.running_var, t.running_var, exact=False)
    t.eval()
    g.eval()
    same(g(G.tensor(x)), t(torch.tensor(x)), exact=False)
    assert repr(g) == repr(t)


def _train(T, nn, optim, make_opt, steps=60):
    with T.no_grad():
        m = nn.Linear(3, 2)
        m.weight.copy_(T.tensor([[0.3, -0.2, 0.5], [0.1, 0.4, -0.6]]))
        m.bias.copy_(T.tensor([0.05, -0.05]))
    opt = make_opt(optim, m.parameters())
    x = T.tensor([[1.0, 2.0, -1.0], [0.5, -0.5, 2.0], [-1.5, 0.25, 0.75]])
    y = T.tensor([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    for _ in range(steps):
        opt.zero_grad()
        loss = ((m(x) - y) ** 2).sum()
        loss.backward()
        opt.step()
    return m.weight.detach().numpy().copy(), m.bias.detach().numpy().copy()


OPTIMIZERS = {
    "sgd": lambda o, p: o.SGD(p, lr=0.01),
    "sgd_momentum_wd": lambda o, p: o.SGD(p, lr=0.01, momentum=0.9, weight_decay=0.01),
    "sgd_nesterov": lambda o, p: o.SGD(p, lr=0.01, momentum=0.8, nesterov=True),
    "adam": lambda o, p: o.Adam(p, lr=0.05),
    "adam_amsgrad_wd": lambda o, p: o.Adam(p, lr=0.05, weight_decay=0.1, amsgrad=True),
    "adamw": lambda o, p: o.AdamW(p, lr=0.05),
    "rmsprop": lambda o, p: o.RMSprop(p, lr=0.01),
    "rmsprop_momentum_centered": lambda o, p: o.RMSprop(p, lr=0.01, momentum=0.5, centered=True),
    "adagrad": lambda o, p: o.Adagrad(p, lr=0.1),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_trajectories_match_torch(name):
    tw, tb = _train(torch, torch.nn, torch.optim, OPTIMIZERS[name])
    gw, gb = _train(G, gnn, gopt, OPTIMIZERS[name])
    np.testing.assert_allclose(gw, tw, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gb, tb, rtol=1e-5, atol=1e-6)


def test_adam_single_steps_on_given_gradients():
    """The update alone, on the same gradients: gradcli's Adam follows torch's to the last bit or so (an
    occasional one-ulp difference remains, hence rtol 3e-7)."""
    rng = np.random.default_rng(0)
    start = rng.standard_normal(7).astype(np.float32)
    tp, gp = torch.tensor(start, requires_grad=True), G.tensor(start, requires_grad=True)
    to, go = torch.optim.Adam([tp], lr=0.05), gopt.Adam([gp], lr=0.05)
    for _ in range(50):
        g = rng.standard_normal(7).astype(np.float32)
        tp.grad, gp.grad = torch.tensor(g), G.tensor(g)
        to.step()
        go.step()
        np.testing.assert_allclose(gp.detach().numpy(), tp.detach().numpy(), rtol=3e-7, atol=1e-8)


def test_step_lr_and_exponential_lr():
    for sched in ("StepLR", "ExponentialLR"):
        kw = {"step_size": 2, "gamma": 0.5} if sched == "StepLR" else {"gamma": 0.9}
        tw, gw = torch.tensor([1.0], requires_grad=True), G.tensor([1.0], requires_grad=True)
        to, go = torch.optim.SGD([tw], lr=0.1), gopt.SGD([gw], lr=0.1)
        ts = getattr(torch.optim.lr_scheduler, sched)(to, **kw)
        gs = getattr(gopt.lr_scheduler, sched)(go, **kw)
        for _ in range(5):
            to.step()
            go.step()
            ts.step()
            gs.step()
            assert ts.get_last_lr() == gs.get_last_lr()
            assert to.param_groups[0]["lr"] == go.param_groups[0]["lr"]


def test_clip_grad_norm_matches_torch():
    g = np.array([[3.0, -4.0], [1.0, 2.0]], dtype=np.float32)
    tp, gp = torch.tensor(g, requires_grad=True), G.tensor(g, requires_grad=True)
    tp.grad, gp.grad = torch.tensor(g), G.tensor(g)
    tn = torch.nn.utils.clip_grad_norm_([tp], 1.0)
    gn = gnn.utils.clip_grad_norm_([gp], 1.0)
    same(gn, tn, exact=False)
    same(gp.grad, tp.grad, exact=False)


def test_parameter_repr_and_isinstance():
    p = gnn.Parameter(G.tensor([1.0, 2.0]))
    assert repr(p) == repr(torch.nn.Parameter(torch.tensor([1.0, 2.0])))
    assert isinstance(p, gnn.Parameter) and not isinstance(p.detach(), gnn.Parameter)


def test_ops_sort_embedding_index_add_match_torch():
    x = np.array([[0.3, -1.2, 2.5], [1.0, 0.0, -0.5]], dtype=np.float32)
    tx, gx = torch.tensor(x, requires_grad=True), G.tensor(x, requires_grad=True)
    tv, ti = tx.sort(dim=1, descending=True)
    gv, gi = gx.sort(dim=1, descending=True)
    same(gv, tv)
    same(gi, ti)
    assert gv.grad_fn.name() == tv.grad_fn.name()
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    (tv * torch.tensor(w)).sum().backward()
    (gv * G.tensor(w)).sum().backward()
    same(gx.grad, tx.grad)
    tw, gw = torch.tensor(x.T.copy(), requires_grad=True), G.tensor(x.T.copy(), requires_grad=True)
    idx = [2, 0, 2]
    te = torch.nn.functional.embedding(torch.tensor(idx), tw, padding_idx=0)
    ge = G.embedding(G.tensor(idx), gw, padding_idx=0)
    same(ge, te)
    assert ge.grad_fn.name() == "EmbeddingBackward0"
    te.sum().backward()
    ge.sum().backward()
    same(gw.grad, tw.grad)
    z = np.zeros((4, 2), dtype=np.float32)
    ta = torch.tensor(z).index_add_(0, torch.tensor([1, 3, 1]), torch.tensor(x.T.copy()))
    ga = G.tensor(z).index_add_(0, G.tensor([1, 3, 1]), G.tensor(x.T.copy()))
    same(ga, ta)


PROGRAM = '''
import torch
import torch.nn as nn

class Block(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = nn.Linear(n, n)
        self.scale = 2.0

    def forward(self, x):
        return torch.relu(self.fc(x)) * self.scale

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(3), Block(3)])
        self.head = nn.Linear(3, 1)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x)

torch.manual_seed(0)
net = Net()
print(net)
print(sum(p.numel() for p in net.parameters()))
opt = torch.optim.Adam(net.parameters(), lr=0.01)
x = torch.ones(2, 3)
for _ in range(3):
    opt.zero_grad()
    loss = net(x).pow(2).mean()
    loss.backward()
    opt.step()
print(f"{loss.item():.4f}")
print(isinstance(net.blocks[0], nn.Module), [n for n, _ in net.named_children()])
'''


def test_program_module_classes_through_gradcli_run(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    ours = subprocess.run([sys.executable, "-m", "gradcli", "run", str(path)], capture_output=True, text=True,
                          timeout=HANG_TIMEOUT)
    theirs = run_python(path, timeout=HANG_TIMEOUT)
    assert theirs.returncode == 0, theirs.stderr
    assert ours.returncode == 0, ours.stderr
    assert_printed_alike(ours.stdout, theirs.stdout)  # a float32 loss after Linear layers and Adam steps


def test_program_cannot_reach_module_internals(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "prog.py"
    path.write_text("import torch\nm = torch.nn.Linear(2, 2)\nprint(len(m._forward_hooks))\nprint(m.__dict__)\n")
    r = subprocess.run([sys.executable, "-m", "gradcli", "run", str(path)], capture_output=True, text=True)
    assert "names starting with '__'" in r.stderr  # refused before the run
    path.write_text("import torch\nm = torch.nn.Linear(2, 2)\nprint(len(m._forward_hooks))\nm._parameters['x'] = 1\n")
    r = subprocess.run([sys.executable, "-m", "gradcli", "run", str(path)], capture_output=True, text=True)
    assert r.stdout == "0\n"  # a read-only snapshot
    assert "TypeError" in r.stderr
