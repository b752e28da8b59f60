"""Programs that met a wrong number or a missing error under a transform, run as a user runs them
(``gradcli run``, the CLI's jacobian/hessian) and compared with PyTorch's output.

Each program prints its results rounded to 8 decimals (``.round(decimals=8) + 0.0``: the last bits of a
float64 LAPACK result, and the sign of a zero, differ between LAPACK builds) and is compared with
``helpers.assert_printed_alike``. The op × transform matrix (tests/ops/test_transform_matrix.py) covers every op of
the table; these are the user-level cases: the softmax family's Jacobians and Hessians along a dim that is not
the last one, forward mode and torch.func.hessian of the factorizations of symmetric matrices (cholesky, eigh,
eigvalsh), diag_embed with other dims, PyTorch's errors where it has no derivative (cdist's forward mode
and second derivative, the second derivative of hardsigmoid in forward mode), strict mode's messages, forward AD
through an in-place product of a view with itself, the order in which saved tensors are packed and unpacked,
linspace's values and optimizer steps to the last bit.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import gradcli as G
from gradcli.api import autograd_functional, func

from helpers import HANG_TIMEOUT, assert_printed_alike, python_and_gradcli_stdout

PRELUDE = """import torch
import torch.nn.functional as F
def show(*ts):
    for t in ts:
        print(t.round(decimals=8) + 0.0)
def err(f):
    try:
        f()
        print("no error")
    except Exception as e:
        print(type(e).__name__, str(e).splitlines()[0])
"""

SOFTMAX = PRELUDE + """
x = torch.tensor([0.3, 1.2, 2.0], dtype=torch.float64)
M = torch.tensor([[0.3, 1.2, 2.0], [0.1, -0.5, 0.7]], dtype=torch.float64)
T = torch.arange(12, dtype=torch.float64).reshape(2, 3, 2) / 7
from torch.autograd.functional import jacobian, hessian
show(jacobian(lambda x: x.softmax(0), x), jacobian(lambda x: x.softmax(0), x, vectorize=True))
show(torch.func.jacrev(lambda x: x.softmax(0))(x))
show(hessian(lambda x: (x.softmax(0) * x.log1p()).sum(), x, vectorize=True))
show(torch.func.hessian(lambda x: (x.softmax(0) * x.log1p()).sum())(x))
show(torch.func.jacrev(lambda m: torch.softmax(m, dim=0))(M), torch.func.jacrev(lambda m: F.softmax(m, dim=1))(T))
show(torch.func.jacrev(lambda m: F.softmin(m, dim=0))(M), jacobian(lambda m: F.softmin(m, dim=0), M, vectorize=True))
show(torch.func.hessian(lambda m: F.softmin(m, dim=0).pow(2).sum())(M))
show(hessian(lambda m: F.log_softmax(m, dim=0).pow(2).sum(), M, vectorize=True))
"""

LINALG = PRELUDE + """
A = torch.tensor([[2.0, 0.3, 0.1], [0.3, 1.5, 0.2], [0.1, 0.2, 1.0]], dtype=torch.float64)
show(torch.func.jacfwd(torch.linalg.cholesky)(A), torch.func.jacfwd(lambda a: torch.linalg.cholesky(a, upper=True))(A))
show(torch.func.jacfwd(torch.linalg.eigvalsh)(A), torch.func.jacfwd(lambda a: torch.linalg.eigh(a)[1])(A))
U = torch.zeros(3, 3, dtype=torch.float64)
U[0, 2] = 1.0
show(torch.func.jvp(torch.linalg.cholesky, (A,), (U,))[1], torch.func.jvp(torch.linalg.eigvalsh, (A,), (U,))[1])
with torch.autograd.forward_ad.dual_level():
    d = torch.autograd.forward_ad.make_dual(A, U)
    show(torch.autograd.forward_ad.unpack_dual(torch.linalg.eigh(d).eigenvectors).tangent)
show(torch.func.hessian(lambda a: torch.linalg.eigvalsh(a).pow(3).sum())(A))
show(torch.func.hessian(lambda a: torch.linalg.eigh(a)[0][0])(A))
show(torch.func.hessian(lambda a: torch.linalg.eigh(a)[1].pow(3).sum())(A))
show(torch.func.hessian(lambda a: torch.linalg.cholesky(a).pow(3).sum())(A))
show(torch.autograd.functional.hessian(lambda a: torch.linalg.eigvalsh(a).pow(3).sum(), A))
x = torch.tensor([[0.3, 1.2], [2.0, -0.4]], dtype=torch.float64)
show(torch.diag_embed(torch.tensor([1.0, 2.0]), offset=1, dim1=0, dim2=1), torch.diag_embed(x, dim1=0, dim2=2))
show(torch.func.jacrev(lambda t: torch.diag_embed(t, -1, 2, 0))(x), torch.func.jacfwd(lambda t: t.diag_embed(1, 1, 0))(x))
err(lambda: torch.diag_embed(x, dim1=1, dim2=1))
err(lambda: torch.diag_embed(x, dim1=0, dim2=3))
"""

ERRORS = PRELUDE + """
a = torch.tensor([[0.3, 1.2], [2.0, -0.4], [1.0, 1.0]], dtype=torch.float64, requires_grad=True)
b = torch.tensor([[0.5, 1.0], [0.0, -1.4]], dtype=torch.float64)
err(lambda: torch.func.jacfwd(lambda t: torch.cdist(t, b))(a))
err(lambda: torch.func.hessian(lambda t: torch.cdist(t, b).sum())(a))
g, = torch.autograd.grad(torch.cdist(a, b).sum(), a, create_graph=True)
print(g.requires_grad, type(g.grad_fn).__name__)
err(lambda: torch.autograd.grad(g.sum(), a))
s = torch.tensor([1.0, -2.0, 3.5, 0.25], dtype=torch.float64)
err(lambda: torch.func.hessian(lambda s: F.hardsigmoid(s).sum())(s))
err(lambda: torch.autograd.functional.hessian(lambda s: F.hardsigmoid(s).sum(), s))
"""


STRICT = PRELUDE + """
from torch.autograd.functional import jacobian, hessian, vjp, jvp, vhp, hvp
x = torch.tensor([1.0, 2.0])
y = torch.tensor([3.0, 4.0])
for vec in (False, True):
    err(lambda: jacobian(lambda a, b: a * 2, (x, y), strict=True, vectorize=vec))
err(lambda: jacobian(lambda a: a.detach() * 2, x, strict=True))
err(lambda: hessian(lambda a, b: (a * 2).sum(), (x, y), strict=True))
err(lambda: hessian(lambda a, b: (a * b).sum(), (x, y), strict=True))
err(lambda: vjp(lambda a, b: a * 2, (x, y), torch.ones(2), strict=True))
err(lambda: jvp(lambda a, b: a * 2, (x, y), (torch.ones(2), torch.ones(2)), strict=True))
err(lambda: jvp(lambda a, b: (a * b).detach(), (x, y), (torch.ones(2), torch.ones(2)), strict=True))
err(lambda: vhp(lambda a, b: (a * 2).sum(), (x, y), (torch.ones(2), torch.ones(2)), strict=True))
err(lambda: vhp(lambda a, b: (a * a).sum() + b.sum(), (x, y), (torch.ones(2), torch.ones(2)), strict=True))
err(lambda: hvp(lambda a, b: (a * a).sum() + b.sum(), (x, y), (torch.ones(2), torch.ones(2)), strict=True))
show(*vhp(lambda a, b: (a * a * b).sum(), (x, y), (torch.ones(2), torch.ones(2)), strict=True)[1])
"""


INPLACE_FORWARD = PRELUDE + """
import torch.autograd.forward_ad as fwAD
x = torch.tensor([1., 2., 3., 4.])
t = torch.tensor([1., -1., 0., 2.])
with fwAD.dual_level():
    d = fwAD.make_dual(x.clone(), t.clone())
    v = d[1:]
    v.mul_(v)
    print(fwAD.unpack_dual(d).tangent)
    y = fwAD.make_dual(x.clone(), t.clone()).clone()
    y *= y
    print(fwAD.unpack_dual(y).tangent)
    y = fwAD.make_dual(x.clone(), t.clone()).clone()
    y[1:].div_(y[1:])
    print(fwAD.unpack_dual(y).tangent)
    y = fwAD.make_dual(x.clone(), t.clone()).clone()
    y[1:].add_(y[1:])
    y.mul_(y.exp())
    print(fwAD.unpack_dual(y).tangent)
"""


SAVED_HOOKS = PRELUDE + """
def pack(t):
    print("pack", tuple(t.shape))
    return t
def unpack(t):
    print("unpack", tuple(t.shape))
    return t
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
W = torch.tensor([[1.0, 2.0, 3.0], [0.5, 0.1, 0.2]], requires_grad=True)
b = torch.tensor(3.0, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = (W @ a.sin()).tanh() * a[:2]
    z = (y.exp() / a[1]).sum() + (a / b).sum() + (b * a).sum() + torch.div(a, b, rounding_mode=None).sum()
    z = z + torch.where(a > 1, a.pow(3), a.log1p()).sum()
z.backward()
show(a.grad, b.grad)
"""


# torch.func.jacfwd is vmap(jvp) with randomness="error" by default: a draw raises (and torch.func.hessian is
# jacfwd of jacrev); "same" and "different" differentiate the draws
RANDOM_JACFWD = PRELUDE + """
x = torch.tensor([[0.3, -1.2], [2.0, 0.5]], dtype=torch.float64)
jacfwd = torch.func.jacfwd
err(lambda: jacfwd(lambda t: F.dropout(t, 0.5))(x))
err(lambda: jacfwd(lambda t: F.dropout1d(t.unsqueeze(0), 0.5))(x))
err(lambda: jacfwd(lambda t: F.alpha_dropout(t, 0.3, training=True))(x))
err(lambda: jacfwd(lambda t: torch.feature_alpha_dropout(t.unsqueeze(0), 0.3, True))(x))
err(lambda: jacfwd(lambda t: F.gumbel_softmax(t))(x))
err(lambda: jacfwd(lambda t: t * torch.rand(2, 2, dtype=torch.float64))(x))
err(lambda: jacfwd(lambda t: t * torch.randn_like(t))(x))
err(lambda: jacfwd(lambda t: t * torch.bernoulli(torch.full_like(t, 0.5)))(x))
err(lambda: jacfwd(lambda t: t * torch.empty_like(t).normal_())(x))
err(lambda: torch.func.hessian(lambda t: F.dropout(t, 0.5).pow(2).sum())(x))
err(lambda: jacfwd(lambda t: (torch.manual_seed(3), F.dropout(t))[1])(x))
print(torch.rand(3))
err(lambda: jacfwd(lambda t: t * 2, randomness="sometimes")(x))
show(jacfwd(lambda t: F.dropout(t, 0.5, training=False))(x), torch.func.hessian(lambda t: F.dropout(t, 0.0).pow(3).sum())(x))
for mode in ("same", "different"):
    torch.manual_seed(0)
    d = jacfwd(lambda t: F.dropout(t, 0.5), randomness=mode)(x).reshape(4, 4)
    print(mode, bool((d - torch.diag(torch.diagonal(d))).abs().max() == 0), set(torch.diagonal(d).tolist()) <= {0.0, 2.0})
"""

# a second derivative through embedding_bag's gradients raises PyTorch's errors (they are not differentiable
# again); torch.func.hessian of index_reduce meets its missing forward-mode rule; the zeros of index_reduce's
# amax/amin gradient are positive, as PyTorch's
SCATTER_AND_BAGS = PRELUDE + """
a = torch.arange(15.0, dtype=torch.float64).reshape(5, 3).requires_grad_()
b = (torch.arange(12.0, dtype=torch.float64).reshape(4, 3) - 5).requires_grad_()
w = torch.arange(15.0, dtype=torch.float64).reshape(5, 3) - 7
i = torch.tensor([0, 4, 2, 0])
for r in ("amax", "amin", "mean"):
    print(torch.autograd.grad((a.index_reduce(0, i, b, r) * w).sum(), (a, b)))
    print(torch.autograd.grad((a.index_reduce(0, i, b, r, include_self=False) * w.abs()).sum(), (a, b)))
err(lambda: torch.func.hessian(lambda s: (a.detach().index_reduce(0, i, s, "mean") * w).sum())(b.detach()))
err(lambda: torch.func.hessian(lambda s: (s.index_reduce(0, i, b.detach(), "amax") * w).sum())(a.detach()))
W = torch.tensor([[0.3, -1.2], [2.0, 0.5], [0.1, 0.7], [-0.4, 1.1], [0.9, -0.2], [1.5, 0.25]], dtype=torch.float64,
                 requires_grad=True)
p = torch.tensor([0.5, -1.0, 2.0, 0.3, 1.2], dtype=torch.float64, requires_grad=True)
out = F.embedding_bag(torch.tensor([1, 2, 4, 5, 1]), W, torch.tensor([0, 2, 5]), mode="sum", per_sample_weights=p,
                      include_last_offset=True)
v = torch.tensor([[1.0, -2.0], [0.5, 3.0]], dtype=torch.float64)
gW, gp = torch.autograd.grad((out * v).sum(), (W, p), create_graph=True)
show(gW, gp)
print(gW.requires_grad, gp.requires_grad)
err(lambda: torch.autograd.grad(gp.sum(), W, retain_graph=True))
err(lambda: torch.autograd.grad(gW.sum(), p, retain_graph=True))
err(lambda: torch.autograd.grad(gW.sum() + gp.sum(), (W, p), retain_graph=True))
f = lambda W, p: (F.embedding_bag(torch.tensor([1, 2, 4, 5, 1]), W, torch.tensor([0, 2, 5]), mode="sum",
                                  per_sample_weights=p, include_last_offset=True) * v).sum()
err(lambda: torch.autograd.functional.hessian(f, (W.detach(), p.detach())))
err(lambda: torch.autograd.functional.hessian(f, (W.detach(), p.detach()), vectorize=True))
err(lambda: torch.autograd.functional.hvp(f, (W.detach(), p.detach()), (torch.ones(6, 2, dtype=torch.float64), torch.ones(5, dtype=torch.float64))))
W2 = W.detach().requires_grad_()
g2, = torch.autograd.grad(F.embedding_bag(torch.tensor([1, 2, 4, 5]), W2, torch.tensor([0, 2])).pow(2).sum(), W2, create_graph=True)
print(g2.requires_grad)
"""


# an explicit generator= is refused too inside jacfwd and vmap(randomness="error"); torch.default_generator's
# manual_seed inside jacfwd seeds, as torch.manual_seed does
RANDOM_GENERATORS = PRELUDE + """g = torch.Generator().manual_seed(0)
x = torch.ones(3, dtype=torch.float64)
for f in (lambda x: x * torch.rand(3, generator=g, dtype=torch.float64), lambda x: torch.nn.functional.dropout(x, 0.5),
          lambda x: x * torch.randn(3, generator=g, dtype=torch.float64)):
    try:
        print(torch.func.jacfwd(f)(x))
    except RuntimeError as e:
        print("RuntimeError:", e)
try:
    print(torch.func.vmap(lambda x: x * torch.rand(3, generator=g, dtype=torch.float64))(torch.ones(2, 3, dtype=torch.float64)))
except RuntimeError as e:
    print("RuntimeError:", e)
def h(x):
    torch.default_generator.manual_seed(3)
    return x * 2
print(torch.func.jacfwd(h)(x))
"""


@pytest.mark.parametrize("name, program", [("softmax", SOFTMAX), ("linalg", LINALG), ("errors", ERRORS),
                                           ("strict", STRICT), ("inplace-forward", INPLACE_FORWARD),
                                           ("saved-hooks", SAVED_HOOKS), ("random-jacfwd", RANDOM_JACFWD),
                                           ("scatter-and-bags", SCATTER_AND_BAGS),
                                           ("random-generators", RANDOM_GENERATORS)])
def test_program_prints_pytorch_s_output(tmp_path, name, program):
    want, got = python_and_gradcli_stdout(tmp_path, name, program)
    assert_printed_alike(got, want)


def _cli(*args) -> str:
    done = subprocess.run([sys.executable, "-m", "gradcli", *args, "--format", "json"], capture_output=True,
                          text=True, timeout=HANG_TIMEOUT)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("mode", ["reverse", "forward", "auto"])
def test_cli_jacobian_of_softmax_along_dim_0(mode, torch):
    import json

    got = json.loads(_cli("jacobian", "x.softmax(0)", "-i", "x=[0.3, 1.2, 2.0]", "--mode", mode))
    x = torch.tensor([0.3, 1.2, 2.0])
    want = torch.autograd.functional.jacobian(lambda x: x.softmax(0), x).numpy()
    values = got["jacobian"]["x"]["value"]
    np.testing.assert_allclose(np.asarray(values, dtype=float), want, rtol=1e-5, atol=1e-6)


def test_cli_hessian_of_softmax_along_dim_0_passes_its_check(torch):
    done = subprocess.run([sys.executable, "-m", "gradcli", "hessian", "(x.softmax(0) * x.log1p()).sum()", "-i",
                           "x=[0.3, 1.2, 2.0]", "--check"], capture_output=True, text=True, timeout=HANG_TIMEOUT)
    assert done.returncode == 0, done.stderr
    assert "FAILED" not in done.stdout and "│ ok " in done.stdout, done.stdout


def _norm_cases():
    x = np.array([[0.3, 1.2, 2.0, -0.4], [0.1, -0.5, 0.7, 0.9], [1.1, 0.2, -0.3, 0.5]])
    w = np.array([0.5, 1.5, -0.7, 1.2])
    b = np.array([0.1, 0.2, 0.3, 0.4])
    return {
        "layer_norm": (lambda m, F, x, w: (F.layer_norm(x, (4,), w, m.tensor(b)) ** 3).sum(), x, w),
        "batch_norm": (lambda m, F, x, w: (F.batch_norm(x, None, None, w, m.tensor(b), training=True) ** 3).sum(),
                       x, w),
        "instance_norm": (lambda m, F, x, w: (F.instance_norm(x, weight=w) ** 3).sum(), x.reshape(1, 3, 4), w[:3]),
    }


@pytest.mark.parametrize("name", sorted(_norm_cases()))
def test_func_hessian_of_a_norm_with_a_weight(name, torch):
    """torch.func.hessian of batch_norm/instance_norm/layer_norm with a weight: gradcli's blocks equal PyTorch's
    torch.autograd.functional.hessian and, column by column, PyTorch's own forward over reverse
    (``torch.func.jvp(torch.func.grad(f))``) and central differences of the gradient. PyTorch 2.13's
    torch.func.hessian (vmap over the tangents of native_*_norm_backward) disagrees with all three in its
    weight–input block: a PyTorch batching bug, which gradcli does not copy (asserted here, so that a fixed
    PyTorch shows up)."""
    import torch.nn.functional as TF

    GF = G  # gradcli's library namespace has torch.nn.functional's norms
    f, x, w = _norm_cases()[name]
    got = func.hessian(lambda a, b: f(G, GF, a, b), argnums=(0, 1))(G.tensor(x), G.tensor(w))
    tx, tw = torch.tensor(x), torch.tensor(w)
    tf = lambda a, b: f(torch, TF, a, b)  # noqa: E731
    want = torch.autograd.functional.hessian(tf, (tx, tw))
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(got[i][j].data, want[i][j].numpy(), rtol=1e-7, atol=1e-9)
    # column (0, 1) of d(grad_w)/dx by PyTorch's unbatched forward over reverse and by central differences
    d = torch.zeros_like(tx)
    d.view(-1)[1] = 1.0
    grad_w = lambda a: torch.func.grad(tf, argnums=1)(a, tw)  # noqa: E731
    jvp_col = torch.func.jvp(grad_w, (tx,), (d,))[1].numpy()
    fd_col = ((grad_w(tx + 1e-6 * d) - grad_w(tx - 1e-6 * d)) / 2e-6).numpy()
    got_col = got[1][0].data.reshape(len(w) if name != "instance_norm" else 3, -1)[:, 1]
    np.testing.assert_allclose(got_col, jvp_col, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(got_col, fd_col, rtol=1e-4, atol=1e-6)
    buggy = torch.func.hessian(tf, argnums=(0, 1))(tx, tw)[1][0].reshape(got_col.shape[0], -1)[:, 1].numpy()
    assert not np.allclose(buggy, jvp_col), "PyTorch's torch.func.hessian agrees now: compare with it directly"


def test_autograd_functional_hessian_is_unchanged_for_eigvalsh(torch):
    """torch.autograd.functional.hessian stays reverse over reverse (PyTorch's definition), symmetric for eigvalsh,
    while torch.func.hessian is forward over reverse (PyTorch's, not symmetric there)."""
    A = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, 0.2], [0.1, 0.2, 1.0]])
    f = lambda m: (lambda a: m.linalg.eigvalsh(a).pow(3).sum())  # noqa: E731
    got_r = autograd_functional.hessian(f(G), G.tensor(A)).data
    got_f = func.hessian(f(G))(G.tensor(A)).data
    np.testing.assert_allclose(got_r, torch.autograd.functional.hessian(f(torch), torch.tensor(A)).numpy(),
                               rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(got_f, torch.func.hessian(f(torch))(torch.tensor(A)).numpy(), rtol=1e-7, atol=1e-9)
    assert not np.allclose(got_r, got_f)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_linspace_equals_pytorch_s_to_the_last_bit(dtype, torch):
    """torch.linspace's CPU kernel computes its vectorized part (from 8 float32 or 4 float64 steps on) with fused
    multiply-adds; a value one rounding off drifted a 2,000-step float32 fit (``x = linspace(-pi, pi, 2000)``,
    RMSprop) away from PyTorch's loss."""
    import math

    for steps in [*range(1, 40), 100, 2000, 4097]:
        for start, end in ((-math.pi, math.pi), (0.1, 7.3), (5, -2.5), (1e-3, 1e3)):
            got = G.linspace(start, end, steps, dtype=getattr(G, dtype)).data
            want = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).numpy()
            np.testing.assert_array_equal(got, want, err_msg=f"linspace({start}, {end}, {steps})")


@pytest.mark.parametrize("name, kwargs", [("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 1e-3}),
                                          ("RMSprop", {"lr": 1e-3}), ("Adam", {"lr": 1e-2}),
                                          ("AdamW", {"lr": 1e-2, "amsgrad": True})])
def test_optimizer_steps_equal_pytorch_s_to_the_last_bit(name, kwargs, torch):
    """An optimizer's update evaluates PyTorch's expressions in PyTorch's order, in float32: 200 steps from the
    same parameters and gradients give the same bits (what is left of a long float32 training loop's drift is the
    summation order of matrix products and reductions, and the last bit of libm's sin: tests/README.md)."""
    rng = np.random.default_rng(0)
    p0 = rng.standard_normal((4, 3)).astype(np.float32)
    grads = rng.standard_normal((200, 4, 3)).astype(np.float32)
    res = []
    for m in (G, torch):
        p = m.nn.Parameter(m.tensor(p0.copy()))
        opt = getattr(m.optim, name)([p], **kwargs)
        for g in grads:
            p.grad = m.tensor(g.copy())
            opt.step()
        res.append(np.array(p.detach().numpy() if m is torch else p.data))
    np.testing.assert_array_equal(res[0], res[1])
