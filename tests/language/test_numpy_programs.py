"""``import numpy as np`` inside programs: NumPy's subset prints, draws and converts as Python with NumPy and
PyTorch do (each program is run by both and the outputs compared).

The programs are the patterns of public tutorials and course notebooks: data built with NumPy (seeded
``np.random``, ``linspace``, ``default_rng``), converted with ``torch.from_numpy``/``torch.tensor``/
``torch.as_tensor``, trained on, and brought back with ``.detach().numpy()`` to be printed.
"""

from __future__ import annotations

import pytest

from helpers import assert_printed_alike, python_and_gradcli_stdout

CREATION = """\
import numpy as np
a = np.array([[1.0, 2.0], [3.0, 4.0]])
print(a)
print(repr(a))
print(np.zeros((2, 3)), np.ones(3, dtype=np.int64), np.eye(2), np.full((2, 2), 7.5))
print(np.arange(5), np.arange(0.0, 1.0, 0.25), np.linspace(-1, 1, 5))
print(repr(np.zeros_like(a)), repr(np.ones_like(a, dtype=np.float32)))
print(a.shape, a.ndim, a.size, a.dtype, a.T, a.reshape(4), a.reshape(-1, 1).shape, a.flatten(), a.copy())
print(a.astype(np.float32).dtype, a.astype(np.int64), a.dtype == np.float64, np.float32)
print(np.pi, np.e, np.inf, -np.inf, np.nan)
print([np.array([1.5, 2.0])], (np.float32(0.5), np.int64(3)))
print(repr(np.float64(2.5)), np.float64(2.5).item(), a.tolist(), a.dtype.name)
a[0, 1] = 9.0
a[1] = [5.0, 6.0]
a += 1
print(a, a[0], a[:, 1], a[a > 6], a[[0, 1], [1, 0]], a[::-1])
b = np.array([1, 2, 3], dtype=np.float32)
print(repr(b), repr(b * 2 + 1), repr(b / 2), repr(b ** 2), repr(-b), repr(b - b.mean()))
"""

MATH = """\
import numpy as np
x = np.linspace(0.1, 2.0, 7)
print(np.exp(x), np.log(x), np.sin(x), np.cos(x), np.tanh(x), np.sqrt(x), np.abs(x - 1))
print(np.maximum(x, 1.0), np.minimum(x, 1.0), np.clip(x, 0.5, 1.5), np.where(x > 1, x, 0.0), np.power(x, 3))
print(np.sum(x), np.mean(x), np.std(x), np.var(x), np.max(x), np.min(x), np.argmax(x), np.argmin(x))
print(np.prod(x), np.cumsum(x), x.sum(), x.mean(), x.std(), x.var(), x.max(), x.min(), x.argmax(), x.prod())
m = x[:6].reshape(2, 3)
print(m.sum(axis=0), m.mean(axis=1), np.sum(m, axis=1, keepdims=True), m.transpose(), m.cumsum(axis=1))
print(np.dot(m, m.T), np.matmul(m, m.T), m @ m.T, np.dot(x, x), np.outer(x[:2], x[:3]))
print(np.allclose(x, x + 1e-12), np.isclose(x, 1.05), np.concatenate([m, m]), np.stack([x, x]).shape)
print(np.concatenate([m, m], axis=1).shape, np.vstack([x, x]).shape, np.hstack([x, x]).shape)
print(np.round(x, 2), np.floor(x), np.ceil(x), np.sign(x - 1), np.square(x), np.log1p(x))
"""

RANDOM = """\
import numpy as np
np.random.seed(0)
print(np.random.rand(2, 3))
print(np.random.randn(4))
print(np.random.normal(1.0, 2.0, size=3), np.random.uniform(-1, 1, 3), np.random.randint(0, 10, size=5))
print(np.random.choice(10, 4), np.random.choice([1.5, 2.5, 3.5], size=2, replace=False), np.random.permutation(6))
a = np.arange(8)
np.random.shuffle(a)
print(a, np.random.random(2), np.random.standard_normal(2))
np.random.seed(42)
print(np.random.randn(2))
rng = np.random.default_rng(1234)
print(rng.random(3), rng.normal(size=2), rng.normal(5.0, 0.1, 2), rng.uniform(0, 10, 2))
print(rng.integers(0, 100, size=4), rng.choice(5, 3), rng.permutation(5))
b = np.arange(5)
rng.shuffle(b)
print(b)
rs = np.random.RandomState(7)
print(rs.randn(3), rs.randint(0, 5, 3))
"""

TORCH_BRIDGE = """\
import numpy as np
import torch
np.random.seed(0)
x_np = np.random.rand(5, 1).astype(np.float32)
y_np = 3 * x_np + 2
x = torch.from_numpy(x_np)
y = torch.tensor(y_np)
print(x.dtype, y.dtype, x.shape)
print(torch.tensor(np.arange(4)), torch.tensor(np.array([1.0, 2.0])), torch.as_tensor(np.ones(2)))
print(torch.as_tensor(np.ones(2), dtype=torch.float32), torch.from_numpy(np.array([1, 2], dtype=np.int32)))
a = np.zeros(3)
t = torch.from_numpy(a)
t.add_(1)
a[0] = 5
print(a, t)
w = torch.zeros(1, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
for step in range(50):
    loss = ((x @ w + b - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.5 * w.grad
        b -= 0.5 * b.grad
    w.grad.zero_()
    b.grad.zero_()
print(w.detach().numpy(), b.detach().numpy(), repr(loss.detach().numpy()))
print(np.round(w.detach().numpy(), 2), x.numpy().shape, x.numpy().sum().dtype)
"""


@pytest.mark.parametrize("name, program", [("np_creation", CREATION), ("np_math", MATH), ("np_random", RANDOM)])
def test_numpy_programs_print_what_numpy_prints(tmp_path, name, program):
    want, got = python_and_gradcli_stdout(tmp_path, name, program)
    assert got == want


def test_numpy_data_trained_on_with_torch(tmp_path):
    # the tutorials' pattern: data from NumPy, a model in torch, the result back as an array
    want, got = python_and_gradcli_stdout(tmp_path, "np_bridge", TORCH_BRIDGE)
    assert_printed_alike(got, want)
