"""NumPy inside programs stays inside its allow-list: the names that reach files, pickles, ctypes, memory maps
or the OS are refused with a message that says so, ndarray names outside the list are refused, arrays hold
numbers only, and every array a program could build passes the ``elements`` limit first (creation, nested
lists, broadcasting, products, fancy indexing, random draws). Each program is run by ``gradcli run`` in a
subprocess, as a user runs it; none writes a file.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from helpers import HANG_TIMEOUT, ROOT


def _run(tmp_path, body: str, *args):
    path = tmp_path / "prog.py"
    path.write_text("import numpy as np\nimport torch\n" + body + "\n")
    return subprocess.run([sys.executable, "-m", "gradcli", "run", *args, str(path)], capture_output=True,
                          text=True, cwd=tmp_path, timeout=HANG_TIMEOUT, env={"PYTHONPATH": str(ROOT), "PATH": ""})


def _files(tmp_path) -> list:
    return sorted(p.name for p in tmp_path.iterdir() if p.name != "prog.py")


REACHES_OUT = [
    "np.save('out.npy', np.zeros(2))", "np.savez('out.npz', a=np.zeros(2))", "np.savetxt('out.txt', np.zeros(2))",
    "np.load('out.npy')", "np.loadtxt('out.txt')", "np.genfromtxt('out.txt')", "np.fromfile('out.bin')",
    "np.memmap('out.bin', shape=(2,))", "np.lib.format.write_array", "np.ctypeslib", "np.frombuffer",
    "np.zeros(2).tofile('out.bin')", "np.zeros(2).dump('out.pkl')", "np.zeros(2).dumps()", "np.zeros(2).ctypes",
    "np.zeros(2).data", "np.zeros(2).base", "np.random.default_rng(0).bit_generator",
    "from numpy import save\nsave('out.npy', np.zeros(2))", "from numpy.random import bit_generator",
]


@pytest.mark.parametrize("body", REACHES_OUT)
def test_names_that_reach_files_pickles_or_memory_are_refused(tmp_path, body):
    r = _run(tmp_path, body)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert ("cannot reach files, pickles, ctypes, memory maps or the OS" in r.stderr
            or "ImportError" in r.stderr or "has no attribute" in r.stderr), r.stderr
    assert _files(tmp_path) == []


@pytest.mark.parametrize("body, error", [
    ("np.zeros(2).repeat(3)", "NotImplementedError: ndarray.repeat is not supported"),
    ("np.zeros(2).view(np.int64)", "NotImplementedError: ndarray.view is not supported"),
    ("np.zeros(2).tobytes()", "NotImplementedError: ndarray.tobytes is not supported"),
    ("np.zeros(2).setflags(write=False)", "PermissionError"),
    ("np.zeros(2).flags", "NotImplementedError: ndarray.flags is not supported"),
    ("np.zeros(2).strides", "NotImplementedError: ndarray.strides is not supported"),
    ("np.zeros(2).frobnicate", "AttributeError: 'ndarray' object has no attribute 'frobnicate'"),
    ("np.einsum('i,i', np.ones(2), np.ones(2))", "NotImplementedError: numpy.einsum is not supported"),
    ("np.vectorize(lambda v: v)", "NotImplementedError: numpy.vectorize is not supported"),
    ("np.bincount(np.array([10 ** 12]))", "NotImplementedError: numpy.bincount is not supported"),
    ("np.diag(np.ones(3))", "NotImplementedError: numpy.diag is not supported"),
    ("np.zerps(2)", "AttributeError: module 'numpy' has no attribute 'zerps'"),
    ("np.array(['a', 'b'])", "TypeError: np.array(): gradcli's NumPy holds numbers only"),
    ("np.array([1], dtype=object)", "TypeError: gradcli's NumPy supports the dtypes"),
    ("np.zeros(2, dtype='U3')", "TypeError: gradcli's NumPy supports the dtypes"),
    ("np.zeros(2).astype('O')", "TypeError: gradcli's NumPy supports the dtypes"),
    ("a = np.zeros(2)\na[0] = 'x'", "TypeError: an array holds numbers"),
    ("np.add(np.ones(2), np.ones(2), out=np.zeros(2))", "TypeError: gradcli's NumPy does not support out="),
])
def test_names_outside_the_subset_are_clear_errors(tmp_path, body, error):
    r = _run(tmp_path, body)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert error in r.stderr, r.stderr


BIG = [
    "np.zeros(10 ** 9)", "np.ones((100000, 100000))", "np.full((50000, 50000), 1.0)", "np.empty(10 ** 10)",
    "np.arange(1e12)", "np.linspace(0, 1, 10 ** 10)", "np.eye(100000)", "np.random.rand(100000, 100000)",
    "np.random.randn(10 ** 10)", "np.random.normal(size=(10 ** 5, 10 ** 5))", "np.random.choice(10 ** 10, 3, replace=False)",
    "np.random.permutation(10 ** 10)", "np.random.default_rng(0).random((10 ** 5, 10 ** 5))",
    "np.random.default_rng(0).integers(0, 5, size=10 ** 10)",
    "np.array([[0] * 1000000] * 1000)", "np.asarray(range(10 ** 10))",
    "a = np.ones(100000)\nb = a[:, None] * a", "a = np.ones(100000)\nb = a[:, None] < a",
    "a = np.ones(100000)\nb = np.maximum(a[:, None], a)", "a = np.ones(100000)\nb = np.outer(a, a)",
    "a = np.ones((100000, 1))\nb = a @ a.T", "a = np.ones((100000, 1))\nb = np.dot(a, a.T)",
    "a = np.ones(100000)\nb = a[:, None] + [[0.0] * 100000]",
    "a = np.ones(100000)\nb = np.concatenate([a] * 2000)",
    "i = np.arange(10000)\nj = np.zeros(100000, dtype=np.int64)\nb = np.ones((10000, 10))[i[:, None], j[None, :]]",
    "a = np.ones(100000)\nb = np.broadcast_to(a, (100000, 100000))", "a = np.ones(10000)\nb = np.tile(a, 100000)",
    "a = np.ones(100000)\nb = np.repeat(a, 100000)", "a = np.ones(100000)\nb = np.meshgrid(a, a)",
    "a = np.ones(100000)\na[:] = [[0.0] * 100000] * 100000",
    "a = np.ones((100000, 1))\nb = a.dot(a.T)", "a = np.ones((100000, 1))\nb = a.clip(np.zeros(100000), 2)",
    "b = np.float64(1.0) * ([[0.0] * 1000000] * 1000)", "b = np.float64(1.0) < [[0.0] * 1000000] * 1000",
    "b = np.zeros_like(np.ones(2), shape=(100000, 100000))",
    "b = np.clip(np.ones(3), 0, a_max=[[1.0] * 1000000] * 1000)",
    "b = np.full((2,), [[0.0] * 1000000] * 1000)",
]


@pytest.mark.parametrize("body", BIG)
def test_big_arrays_hit_the_elements_limit(tmp_path, body):
    r = _run(tmp_path, body)
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
    assert "limit is 100,000,000 (elements per tensor)" in r.stderr, r.stderr


def test_the_elements_limit_is_the_one_the_command_sets(tmp_path):
    ok = _run(tmp_path, "print(np.zeros(1000).shape)", "--limit", "elements=1000")
    assert ok.returncode == 0 and ok.stdout == "(1000,)\n", ok.stderr
    over = _run(tmp_path, "print(np.zeros(1001).shape)", "--limit", "elements=1000")
    assert over.returncode != 0 and "limit is 1,000" in over.stderr


def test_numpy_is_only_what_the_program_imports(tmp_path):
    r = _run(tmp_path, "print(1)")  # (the header imports numpy; a program without it has no np)
    assert r.returncode == 0
    path = tmp_path / "bare.py"
    path.write_text("np.zeros(2)\n")
    bare = subprocess.run([sys.executable, "-m", "gradcli", "run", str(path)], capture_output=True, text=True,
                          timeout=HANG_TIMEOUT, env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert bare.returncode == 1 and "NameError: name 'np' is not defined" in bare.stderr


def test_np_random_is_seeded_by_the_run_and_repeats(tmp_path):
    first = _run(tmp_path, "print(np.random.rand(3))", "--seed", "5")
    again = _run(tmp_path, "print(np.random.rand(3))", "--seed", "5")
    other = _run(tmp_path, "print(np.random.rand(3))", "--seed", "6")
    assert first.returncode == 0 and first.stdout == again.stdout != other.stdout


def test_from_numpy_refuses_what_pytorch_refuses(tmp_path):
    r = _run(tmp_path, "torch.from_numpy([1.0, 2.0])")
    assert r.returncode == 1 and "TypeError: expected np.ndarray (got list)" in r.stderr
    r = _run(tmp_path, "torch.from_numpy(np.arange(4)[::-1])")
    assert r.returncode == 1 and "negative" in r.stderr
