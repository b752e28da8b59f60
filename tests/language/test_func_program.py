"""A program using ``torch.func``: grad, grad_and_value (argnums, has_aux), vjp, jvp, jacrev, jacfwd,
hessian, vmap (in_dims, out_dims, nested, over grad and jacrev, per-sample gradients), pytrees (dicts, tuples),
autograd.functional's forward-mode strategies and PyTorch's messages, run by ``gradcli run``, prints exactly
what the same program prints under PyTorch. (Hessians are printed ``+ 0.0``: the sign of a zero entry follows
how it was computed, forward over reverse in PyTorch, reverse over reverse in gradcli.)"""

from __future__ import annotations


from helpers import python_and_gradcli_stdout

PROGRAM = """\
import torch
from torch.func import grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, vmap


def f(x):
    return (x.sin() * x).sum()


def g(x, y):
    return x * y.exp(), (x ** 2).sum()


x = torch.tensor([1.0, 2.0, 3.0])
y = torch.tensor([0.5, -1.0, 0.25])
print(grad(f)(x))
print(grad(lambda a, b: (a * b).sum(), argnums=(0, 1))(x, y))
print(grad(lambda t: grad(f)(t).sum())(x))
print(grad_and_value(f)(x))
gr, (val, aux) = grad_and_value(lambda t: (f(t), t * 2), has_aux=True)(x)
print(gr, val, aux)
print(grad(lambda t: (f(t), t.max()), has_aux=True)(x))
out, fn = vjp(g, x, y)
print(out)
print(fn((torch.ones(3), torch.tensor(2.0))))
print(jvp(torch.sin, (x,), (torch.ones(3),)))
print(jvp(g, (x, y), (torch.ones(3), torch.zeros(3))))
print(jacrev(torch.sin)(x))
print(jacrev(g, argnums=(0, 1))(x, y))
print(jacfwd(g, argnums=1)(x, y))
print(hessian(f)(x) + 0.0)  # (+ 0.0: the sign of a zero follows how it was computed)
print([[h + 0.0 for h in row] for row in hessian(lambda a, b: (a * b.sin()).sum(), argnums=(0, 1))(x, y)])
print(jacrev(lambda d: d["a"] * d["b"])({"a": x, "b": y}))
print(torch.vmap(torch.dot)(torch.ones(2, 3), torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])))
print(vmap(lambda a, b: a * b, in_dims=(1, None), out_dims=1)(torch.arange(6.0).reshape(3, 2), y))
print(vmap(vmap(lambda a: a.sum() * 2))(torch.arange(6.0).reshape(2, 3, 1)))
print(vmap(grad(f))(torch.arange(6.0).reshape(2, 3)))
print(vmap(jacrev(torch.sin))(torch.arange(4.0).reshape(2, 2)))
print(vmap(lambda a: (a.sum(), a * 2))(torch.ones(2, 3)))
print(vmap(lambda a, s: a * s, in_dims=(0, None))(torch.ones(2, 3), 3.0))
per_sample = vmap(grad(lambda w, xi: ((w * xi).sum() - 1.0) ** 2), in_dims=(None, 0))(y, torch.eye(3))
print(per_sample)
print(torch.func.jacrev(lambda t: t.exp(), has_aux=False)(torch.tensor(0.5)))
print(torch.autograd.functional.jacobian(lambda t: t ** 3, x, vectorize=True, strategy="forward-mode"))
print(torch.autograd.functional.hessian(f, x, vectorize=True, outer_jacobian_strategy="forward-mode").detach())
for bad in (lambda: grad(lambda t: t * 2)(x), lambda: grad(f, argnums=3)(x),
            lambda: grad(lambda t: (f(t), 1, 2), has_aux=True)(x), lambda: grad(f)(3.0),
            lambda: jvp(torch.sin, x, x), lambda: jvp(torch.sin, (x,), (x, x)),
            lambda: vmap(lambda a, b: a + b)(torch.ones(2, 3), torch.ones(3, 3)),
            lambda: vmap(lambda a: a, in_dims=2)(torch.ones(2, 3)),
            lambda: vmap(lambda a: 1.0)(torch.ones(2)), lambda: vmap(lambda a: a)(),
            lambda: vmap(lambda a: a)(2.0),
            lambda: fn(torch.ones(3)),
            lambda: torch.autograd.functional.jacobian(torch.sin, x, strategy="forward-mode")):
    try:
        bad()
    except (RuntimeError, ValueError, NotImplementedError) as e:
        print(e)
"""


def test_torch_func_program_prints_what_pytorch_prints(tmp_path, torch):
    want, got = python_and_gradcli_stdout(tmp_path, "func_program", PROGRAM)
    assert got == want
    assert "Thing passed to transform API must be Tensor" in got
