"""``gradcli.api.func`` (torch.func) as a library against torch.func: results and their nesting for argnums, has_aux
and pytrees, nested transforms (grad of grad, jacfwd of jacfwd, jvp of grad, vmap of jacrev), vmap's in_dims and
out_dims (negative, nested, dicts, empty batches), and PyTorch's messages."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli as G
from gradcli.api import func as gf

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X = RNG.standard_normal(3)
Y = RNG.standard_normal(3)
M = RNG.standard_normal((2, 3))


def both(make):
    """``make(module, tensor)`` run with gradcli.api.func and torch.func, float64."""
    a = make(gf, lambda v: G.tensor(np.asarray(v, dtype=np.float64)))
    b = make(torch.func, lambda v: torch.tensor(np.asarray(v, dtype=np.float64)))
    return a, b


def same(a, b, path="result"):
    if isinstance(b, torch.Tensor):
        assert isinstance(a, G.Tensor), f"{path}: {type(a)}"
        assert tuple(a.shape) == tuple(b.shape), f"{path}: {tuple(a.shape)} != {tuple(b.shape)}"
        np.testing.assert_allclose(a.data, b.detach().numpy(), rtol=1e-10, atol=1e-12, err_msg=path)
    elif isinstance(b, dict):
        assert isinstance(a, dict) and list(a) == list(b), path
        for k in b:
            same(a[k], b[k], f"{path}[{k!r}]")
    elif isinstance(b, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), f"{path}: {type(a)} {len(a)} vs {type(b)} {len(b)}"
        for i, (p, q) in enumerate(zip(a, b)):
            same(p, q, f"{path}[{i}]")
    else:
        assert a == b, path


CASES = {
    "grad": lambda F, T: F.grad(lambda x: (x.sin() * x).sum())(T(X)),
    "grad argnums": lambda F, T: F.grad(lambda x, y: (x * y.exp()).sum(), argnums=(1, 0))(T(X), T(Y)),
    "grad negative argnums": lambda F, T: F.grad(lambda x, y: (x * y.exp()).sum(), argnums=-1)(T(X), T(Y)),
    "grad has_aux": lambda F, T: F.grad(lambda x: ((x ** 3).sum(), {"a": x * 2}), has_aux=True)(T(X)),
    "grad pytree": lambda F, T: F.grad(lambda p: (p["w"] * p["b"][0]).sum())({"w": T(X), "b": [T(Y)]}),
    "grad of grad": lambda F, T: F.grad(F.grad(lambda x: x.sin() * x ** 2))(T(1.5)),
    "grad_and_value": lambda F, T: F.grad_and_value(lambda x, y: (x * y).sum(), argnums=(0, 1))(T(X), T(Y)),
    "vjp": lambda F, T: (lambda o, fn: (o, fn(T(M))))(*F.vjp(lambda m: m.tanh() * 2, T(M))),
    "vjp tuple": lambda F, T: (lambda o, fn: (o, fn((T(X), T(1.0)))))(*F.vjp(lambda x, y: (x * y, x.sum()),
                                                                              T(X), T(Y))),
    "vjp has_aux": lambda F, T: (lambda o, fn, aux: (o, fn(T(X)), aux))(*F.vjp(lambda x: (x.exp(), x.sum()), T(X),
                                                                              has_aux=True)),
    "jvp": lambda F, T: F.jvp(lambda x, y: (x * y).exp(), (T(X), T(Y)), (T(Y), T(X))),
    "jvp has_aux": lambda F, T: F.jvp(lambda x: (x.exp(), x * 3), (T(X),), (T(Y),), has_aux=True),
    "jvp of grad": lambda F, T: F.jvp(F.grad(lambda x: (x.sin() * x).sum()), (T(X),), (T(Y),)),
    "jacrev": lambda F, T: F.jacrev(lambda m: (m @ m.T).tanh())(T(M)),
    "jacrev argnums": lambda F, T: F.jacrev(lambda x, y: {"p": x * y, "q": (x + y).sum()}, argnums=(0, 1))(T(X),
                                                                                                        T(Y)),
    "jacrev has_aux": lambda F, T: F.jacrev(lambda x: (x.sin(), x.cos()), has_aux=True)(T(X)),
    "jacfwd": lambda F, T: F.jacfwd(lambda m: m.softmax(1) * m)(T(M)),
    "jacfwd argnums": lambda F, T: F.jacfwd(lambda x, y: (x * y, y.sum()), argnums=(0, 1))(T(X), T(Y)),
    "jacfwd of jacfwd": lambda F, T: F.jacfwd(F.jacfwd(lambda x: x.sin() * x.sum()))(T(X)),
    "jacrev of jacfwd": lambda F, T: F.jacrev(F.jacfwd(lambda x: x.exp() * x.prod()))(T(X)),
    "hessian": lambda F, T: F.hessian(lambda x: (x.sin() * x.prod()).sum())(T(X)),
    "hessian vector output": lambda F, T: F.hessian(lambda x: x.sin() * x.sum())(T(X)),
    "hessian argnums": lambda F, T: F.hessian(lambda x, y: (x.exp() * y.sin()).sum(), argnums=(0, 1))(T(X), T(Y)),
    "vmap": lambda F, T: F.vmap(lambda x, y: x @ y)(T(M), T(M)),
    "vmap in_dims": lambda F, T: F.vmap(lambda m, y: m * y, in_dims=(1, None))(T(M), T(X[:2])),
    "vmap out_dims": lambda F, T: F.vmap(lambda m: (m * 2, m.sum()), out_dims=(1, 0))(T(M)),
    "vmap negative dims": lambda F, T: F.vmap(lambda m: m.cumsum(0), in_dims=-1, out_dims=-1)(T(M)),
    "vmap dict": lambda F, T: F.vmap(lambda d: d["a"] * d["b"], in_dims=({"a": 0, "b": None},))({"a": T(M),
                                                                                                   "b": T(X)}),
    "vmap nested": lambda F, T: F.vmap(F.vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(None, 0))(T(X),
                                                                                                        T(Y)),
    "vmap of jacrev": lambda F, T: F.vmap(F.jacrev(lambda x: x.sin() * x.sum()))(T(M)),
    "vmap of grad per sample": lambda F, T: F.vmap(F.grad(lambda w, x: ((w * x).sum() - 1) ** 2),
                                                   in_dims=(None, 0))(T(X), T(M)),
    "vmap kwargs": lambda F, T: F.vmap(lambda x, scale=1.0: x * scale)(T(M), scale=3.0),
    "vmap empty batch": lambda F, T: F.vmap(lambda x: x.sum())(T(np.zeros((0, 3)))),
    "vmap out_dims None": lambda F, T: F.vmap(lambda x, c: (x * 2, c), in_dims=(0, None),
                                             out_dims=(0, None))(T(M), T(X)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_results_equal_torch_func(name):
    a, b = both(CASES[name])
    same(a, b)


ERRORS = {
    "non-scalar output": lambda F, T: F.grad(lambda x: x * 2)(T(X)),
    "output not a tensor": lambda F, T: F.grad(lambda x: 3.0)(T(X)),
    "has_aux without a pair": lambda F, T: F.grad(lambda x: x.sum(), has_aux=True)(T(X)),
    "argnums out of range": lambda F, T: F.grad(lambda x: x.sum(), argnums=2)(T(X)),
    "argnums float": lambda F, T: F.grad(lambda x: x.sum(), argnums=1.0)(T(X)),
    "argnums empty": lambda F, T: F.grad(lambda x: x.sum(), argnums=())(T(X)),
    "non-tensor argument": lambda F, T: F.grad(lambda x: x.sum())(3.0),
    "jvp primals not a tuple": lambda F, T: F.jvp(lambda x: x, T(X), T(X)),
    "jvp structures": lambda F, T: F.jvp(lambda x: x, (T(X),), (T(X), T(X), T(X))),
    "jvp no primals": lambda F, T: F.jvp(lambda: 1, (), ()),
    "jvp tangent size": lambda F, T: F.jvp(lambda x: x, (T(X),), (T(X[:2]),)),
    "vjp cotangent structure": lambda F, T: F.vjp(lambda x: x.sin(), T(X))[1]((T(X),)),
    "vjp cotangent shape": lambda F, T: F.vjp(lambda x: x.sin(), T(X))[1](T(X[:2])),
    "jacrev output not a tensor": lambda F, T: F.jacrev(lambda x: (x, 1), has_aux=False)(T(X)),
    "jacfwd output not a tensor": lambda F, T: F.jacfwd(lambda x: (x, 1))(T(X)),
    "vjp output not a tensor": lambda F, T: F.vjp(lambda x: (x, 1), T(X)),
    "jvp output not a tensor": lambda F, T: F.jvp(lambda x: (x, 1), (T(X),), (T(X),)),
    "aux not a tensor": lambda F, T: F.grad(lambda x: (x.sum(), 1), has_aux=True)(T(X)),
    "jacrev aux not a tensor": lambda F, T: F.jacrev(lambda x: (x, [1]), has_aux=True)(T(X)),
    "vmap sizes": lambda F, T: F.vmap(lambda a, b: a + b)(T(M), T(np.ones((3, 3)))),
    "vmap in_dims structure": lambda F, T: F.vmap(lambda a, b: a, in_dims=(0,))(T(M), T(M)),
    "vmap in_dim range": lambda F, T: F.vmap(lambda a: a, in_dims=2)(T(M)),
    "vmap in_dims None": lambda F, T: F.vmap(lambda a: a, in_dims=None)(T(M)),
    "vmap nothing mapped": lambda F, T: F.vmap(lambda a: a, in_dims=(None,))(T(M)),
    "vmap non-tensor output": lambda F, T: F.vmap(lambda a: 1.0)(T(M)),
    "vmap no inputs": lambda F, T: F.vmap(lambda: 1)(),
    "vmap non-tensor input": lambda F, T: F.vmap(lambda a: a)(2.0),
    "vmap 0-d input": lambda F, T: F.vmap(lambda a: a)(T(2.0)),
    "vmap out_dim range": lambda F, T: F.vmap(lambda a: a, out_dims=2)(T(M)),
    "vmap out_dims None of a mapped output": lambda F, T: F.vmap(lambda a: a.sum(), out_dims=None)(T(M)),
    "vmap randomness": lambda F, T: F.vmap(lambda a: a, randomness="sometimes")(T(M)),
    "vmap random op": lambda F, T: F.vmap(lambda a: a + (G if F is gf else torch).rand(3))(T(M)),
}


def _error(fn):
    try:
        fn()
    except (RuntimeError, ValueError, TypeError, IndexError) as e:
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("name", list(ERRORS))
def test_messages_equal_torch_func(name):
    ours = _error(lambda: ERRORS[name](gf, lambda v: G.tensor(np.asarray(v, dtype=np.float64))))
    theirs = _error(lambda: ERRORS[name](torch.func, lambda v: torch.tensor(np.asarray(v, dtype=np.float64))))
    assert theirs is not None and ours == theirs


def test_results_outside_transforms_are_detached_and_inside_keep_their_graph():
    x = G.tensor([1.0, 2.0])
    assert not gf.grad(lambda t: (t * t).sum())(x).requires_grad
    w = G.tensor([1.0, 2.0], requires_grad=True)
    g = gf.grad(lambda t: (t * t * t).sum())(w)
    assert g.requires_grad
    (gg,) = G.autograd.grad(g.sum(), w)
    np.testing.assert_allclose(gg.data, [6.0, 12.0])


def test_functional_forward_mode_strategies_equal_torch():
    x = X
    f_g = lambda t: (t.sin() * t.sum(), t.exp())  # noqa: E731
    from gradcli.api import autograd_functional as GF

    ours = GF.jacobian(f_g, G.tensor(x), vectorize=True, strategy="forward-mode")
    theirs = torch.autograd.functional.jacobian(lambda t: (t.sin() * t.sum(), t.exp()), torch.tensor(x),
                                                vectorize=True, strategy="forward-mode")
    same(ours, theirs)
    h_ours = GF.hessian(lambda t: (t.sin() * t.prod()).sum(), G.tensor(x), vectorize=True,
                        outer_jacobian_strategy="forward-mode")
    h_theirs = torch.autograd.functional.hessian(lambda t: (t.sin() * t.prod()).sum(), torch.tensor(x),
                                                 vectorize=True, outer_jacobian_strategy="forward-mode")
    same(h_ours, h_theirs)
    for kw in ({"strategy": "forward-mode"}, {"strategy": "forward-mode", "vectorize": True, "strict": True},
               {"strategy": "forward-mode", "vectorize": True, "create_graph": True}):
        a = _error(lambda: GF.jacobian(lambda t: t.sin(), G.tensor(x), **kw))
        b = _error(lambda: torch.autograd.functional.jacobian(lambda t: t.sin(), torch.tensor(x), **kw))
        assert a == b or (a and b and a[1] == b[1])


def test_batched_rows_equal_row_by_row(monkeypatch):
    """The batched reverse pass (functional.batched_vjp) against one backward per row, on a graph of every
    batchable kind: elementwise, broadcasting, reductions with dims, mv, mm, dot, reshapes, expand, transpose,
    permute."""
    from gradcli.api import autograd_functional as GF

    a = G.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    b = G.tensor(RNG.standard_normal(4), requires_grad=True)
    W = G.tensor(RNG.standard_normal((4, 4)))
    y = ((a * b).tanh() @ W + b.exp()).sum(1, keepdim=True) * a.mean(0).sum()
    y = y + (a.T.permute(1, 0) @ a.T).reshape(9, 1).reshape(3, 3).sum(1, keepdim=True) + (a @ b).unsqueeze(1)
    y = y + b.dot(b).expand(3, 1) - a.transpose(0, 1).mean((0,), keepdim=False).view(3, 1).neg()
    rows = GF.batched_vjp(y, [a, b])
    assert rows is not None
    for k in range(y.data.size):
        ga, gb = G.autograd.grad(y.reshape(-1)[k], [a, b], retain_graph=True)
        np.testing.assert_allclose(rows[0][k], ga.data, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(rows[1][k], gb.data, rtol=1e-12, atol=1e-12)
    monkeypatch.setattr(GF, "BATCH_ELEMENTS", 20)  # chunks of one or two rows
    chunked = GF.batched_vjp(y, [a, b])
    for r, c in zip(rows, chunked):
        np.testing.assert_array_equal(r, c)


def test_vmap_randomness_same_draws_once():
    G.manual_seed(0)
    torch.manual_seed(0)
    ours = gf.vmap(lambda a: a + G.rand(()), randomness="same")(G.zeros(3))
    theirs = torch.func.vmap(lambda a: a + torch.rand(()), randomness="same")(torch.zeros(3))
    np.testing.assert_allclose(ours.data, theirs.numpy(), rtol=1e-6)
    assert float(G.rand(()).item()) == pytest.approx(float(torch.rand(()).item()), rel=1e-6)  # the streams go on alike
