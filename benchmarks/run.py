#!/usr/bin/env python3
"""gradcli's performance benchmark: gradcli against PyTorch (when installed) and raw numpy, side by side.

    python benchmarks/run.py            # every benchmark, full size (a few minutes)
    python benchmarks/run.py --quick    # fewer repetitions, a 200,000-node chain (about a minute)
    python benchmarks/run.py --json     # one JSON object instead of the table
    python benchmarks/run.py --only perop,matmul

What is measured (benchmarks/README.md has the latest figures and explains every missed target):

  startup  whole-process wall time of ``gradcli grad "2 * dot(x, x)" -i "x=arange(4.0)"``, against
           ``python -c "import numpy, typer, rich, lark"`` (the floor: gradcli's own dependencies) and the same
           computation as a PyTorch script.                                  target: <= 1.3x the floor
  perop    a chain of 10,000 elementwise ops on a 3-element float32 tensor, forward + backward, in microseconds
           per op. numpy: the same ufuncs forward and the derivatives written by hand.
                                                                             target: <= 0.5x PyTorch
  matmul   ``(a @ b).sum()`` forward + backward with 2048x2048 float32 ``a``, ``b``, against numpy doing the
           same work (the product, the sum, and the two gradient products).  target: <= 1.1x numpy
  mlp      a 784-512-10 MLP, batch 256, ReLU, cross-entropy, forward + backward (float32).
                                                                             target: <= 1.0x PyTorch
  conv     ``conv2d(x, w, b).relu().mean()`` forward + backward (x, w and b's gradients), x 32x3x64x64 float32,
           16 filters 3x3; numpy: the same im2col products and col2im by hand.
                                                                             target: <= 3.0x PyTorch
  chain    a 1,000,000-node elementwise chain (forward + backward), each implementation in its own process:
           time, and peak memory above the process's baseline (peak RSS after the run minus RSS before it).
                                                                             target: <= 0.5x PyTorch, both
  batch    10,000 small programs through ``gradcli batch`` (one process pinned to one core), entries/second.
                                                                             target: >= 2,000 entries/s
  scaleout the same 10,000 programs with ``--jobs 2`` and with ``--dask`` on a LocalCluster of 1 and 2 worker
           processes (wall time, entries/second; the output compared with ``--jobs 1`` byte for byte).
                                                                             target: >= 2,000 entries/s
  transforms  a 256x256 Jacobian of ``tanh(W @ sin(x) + b) * x`` and the 64x64 Hessian of ``(tanh(W @ sin(x)) *
           x).sum()``, by torch.autograd.functional (vectorize=True) and torch.func (jacrev, hessian), gradcli's
           and PyTorch's, CPU time per call.                                 target: <= 1.0x PyTorch
  parse    text -> program, per entry: gradcli's parse and build (``build_program``, every entry parsed: the batch
           runner's shape cache off) of the batch benchmark's entries, CPU time per entry, against Python's own
           ``ast.parse`` of the same text (PyTorch parses nothing).          target: <= 0.2 ms
  session  the interactive session once started (gradcli.frontends.session.core.Session, what `gradcli repl` runs for each
           entry), wall time per entry in ms: a value print (``x * 2 + 1`` shown as PyTorch prints it) and a
           small ``:grad`` answer (3-element input, 5 ops, the four tables).  target: <= 5 ms, <= 20 ms

Every figure is the median over repetitions; gradcli, PyTorch and numpy run in separate worker processes
(PyTorch's OpenMP threads must not share a process with numpy's BLAS), and the rounds alternate between them
so that load from other processes on the machine falls on all of them alike. The single-threaded benchmarks
(perop, chain) report the process's CPU time (time.process_time: all its threads), which other processes'
load disturbs far less than wall time; the JSON output has the wall times too. Each benchmark also checks that
gradcli's gradients agree with PyTorch's (or numpy's).

The gradcli measured is the one in this checkout (PYTHONPATH is set to the repository root).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve()

# ------------------------------------------------------------------------------------------------- workloads
# Each workload runs inside a worker process: ``python benchmarks/run.py --worker NAME IMPL N REPS`` prints one
# JSON object {"times": [...seconds per repetition...], "check": [...numbers to compare across impls...], ...}.

PEROP_N = 10_000
CHAIN_N = 1_000_000
CHAIN_N_QUICK = 200_000


# The chain: y*1.0001, y+c, tanh(y), y*w, y-0.001, repeated. The values are chosen so that neither the values
# nor the gradients blow up or underflow over a million steps (float32 denormals would measure the FPU's slow
# path, not the frameworks): y stays near 1e-3, where tanh' is ~1, and 1.0001 * 0.9999 ~ 1.
def _chain(m, n):
    """The chain in ``m`` (gradcli or torch: the same code runs on both); returns ``x.grad``."""
    x = m.tensor([0.001, -0.002, 0.003], requires_grad=True)
    c = m.tensor([0.001, 0.001, 0.001])
    w = m.tensor([0.9999, 0.9999, 0.9999])
    y = x
    for i in range(n):
        k = i % 5
        if k == 0:
            y = y * 1.0001
        elif k == 1:
            y = y + c
        elif k == 2:
            y = y.tanh()
        elif k == 3:
            y = y * w
        else:
            y = y - 0.001
    y.sum().backward()
    return x.grad


def _chain_gradcli(n):
    import gradcli as G

    return _chain(G, n).data


def _chain_torch(n):
    import torch

    return _chain(torch, n).numpy()


def _chain_numpy(n):
    # The floor: the same ufuncs, every intermediate kept for the backward pass, derivatives written by hand.
    import numpy as np

    f32 = np.float32
    x = np.array([0.001, -0.002, 0.003], dtype=f32)
    c = np.array([0.001, 0.001, 0.001], dtype=f32)
    w = np.array([0.9999, 0.9999, 0.9999], dtype=f32)
    saved = []
    y = x
    for i in range(n):
        k = i % 5
        if k == 0:
            y = np.multiply(y, f32(1.0001))
        elif k == 1:
            y = np.add(y, c)
        elif k == 2:
            y = np.tanh(y)
            saved.append(y)
        elif k == 3:
            y = np.multiply(y, w)
        else:
            y = np.subtract(y, f32(0.001))
    g = np.ones_like(y)
    for i in range(n - 1, -1, -1):
        k = i % 5
        if k == 0:
            g = np.multiply(g, f32(1.0001))
        elif k == 2:
            r = saved.pop()
            g = np.multiply(g, np.subtract(f32(1), np.multiply(r, r)))
        elif k == 3:
            g = np.multiply(g, w)
    return g


CHAINS = {"gradcli": _chain_gradcli, "torch": _chain_torch, "numpy": _chain_numpy}


def work_perop(impl, n, reps):
    fn = CHAINS[impl]
    fn(n)  # warm up: one untimed run (allocator arenas, caches)
    times, wall = [], []
    for _ in range(reps):
        t, c = time.perf_counter(), time.process_time()
        g = fn(n)
        times.append(time.process_time() - c)
        wall.append(time.perf_counter() - t)
    return {"times": times, "wall": wall, "check": [float(v) for v in g]}


def _rss_kib(field):
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    if field == "VmHWM":
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return None


def work_chain(impl, n, reps):
    # One repetition per process: peak RSS is a per-process high-water mark.
    fn = CHAINS[impl]
    fn(10)
    import gc

    gc.collect()
    before = _rss_kib("VmRSS")
    t, c = time.perf_counter(), time.process_time()
    g = fn(n)
    cpu, wall = time.process_time() - c, time.perf_counter() - t
    peak = _rss_kib("VmHWM")
    return {"times": [cpu], "wall": [wall], "check": [float(v) for v in g], "rss_before_kib": before,
            "peak_kib": peak, "delta_kib": None if before is None or peak is None else peak - before}


def _matmul_data(n):
    import numpy as np

    rng = np.random.default_rng(0)
    return (rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32))


def work_matmul(impl, n, reps):
    import numpy as np

    A, B = _matmul_data(n)
    if impl == "gradcli":
        import gradcli as G

        a, b = G.tensor(A, requires_grad=True), G.tensor(B, requires_grad=True)

        def step():
            a.grad = b.grad = None
            (a @ b).sum().backward()
            return a.grad.data, b.grad.data
    elif impl == "torch":
        import torch

        a, b = torch.tensor(A, requires_grad=True), torch.tensor(B, requires_grad=True)

        def step():
            a.grad = b.grad = None
            (a @ b).sum().backward()
            return a.grad.numpy(), b.grad.numpy()
    else:
        def step():
            c = A @ B
            c.sum()
            g = np.ones_like(c)
            return g @ B.T, A.T @ g
    step()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        ga, gb = step()
        times.append(time.perf_counter() - t)
    assert ga.dtype == np.float32 and gb.dtype == np.float32, (ga.dtype, gb.dtype)
    return {"times": times, "check": [float(ga[0, 0]), float(ga[-1, 5]), float(gb[3, 7]), float(gb[-1, -1])]}


def _mlp_data():
    import numpy as np

    rng = np.random.default_rng(1)
    f32 = np.float32
    X = rng.standard_normal((256, 784), dtype=f32)
    y = rng.integers(0, 10, 256)
    W1 = (rng.standard_normal((784, 512), dtype=f32) * f32(0.05))
    b1 = np.zeros(512, f32)
    W2 = (rng.standard_normal((512, 10), dtype=f32) * f32(0.05))
    b2 = np.zeros(10, f32)
    return X, y, W1, b1, W2, b2


def work_mlp(impl, n, reps):
    import numpy as np

    X, y, W1, b1, W2, b2 = _mlp_data()
    note = None
    if impl == "gradcli":
        import gradcli as G

        x = G.tensor(X)
        params = [G.tensor(p, requires_grad=True) for p in (W1, b1, W2, b2)]
        if "cross_entropy" in G.__dict__:
            target = G.tensor(y)

            def loss_fn(z):
                return G.cross_entropy(z, target)
        else:
            # gradcli has no cross_entropy yet: log_softmax composed from its ops. The shift by the row maximum
            # is a constant (log_softmax does not depend on it), taken from the values with numpy.
            note = "gradcli has no cross_entropy yet: log_softmax composed from exp, log, sum, sub, mul"
            onehot = np.zeros((256, 10), np.float32)
            onehot[np.arange(256), y] = 1
            onehot = G.tensor(onehot)

            def loss_fn(z):
                s = z - G.tensor(z.data.max(axis=1, keepdims=True))
                logp = s - s.exp().sum(dim=1, keepdim=True).log()
                return (logp * onehot).sum() * (-1.0 / 256)

        def step():
            for p in params:
                p.grad = None
            w1, c1, w2, c2 = params
            loss = loss_fn((x @ w1 + c1).relu() @ w2 + c2)
            loss.backward()
            return float(loss.item()), params[0].grad.data, params[2].grad.data
    elif impl == "torch":
        import torch
        import torch.nn.functional as F

        x = torch.tensor(X)
        target = torch.tensor(y)
        params = [torch.tensor(p, requires_grad=True) for p in (W1, b1, W2, b2)]

        def step():
            for p in params:
                p.grad = None
            w1, c1, w2, c2 = params
            loss = F.cross_entropy(torch.relu(x @ w1 + c1) @ w2 + c2, target)
            loss.backward()
            return float(loss.item()), params[0].grad.numpy(), params[2].grad.numpy()
    else:
        onehot = np.zeros((256, 10), np.float32)
        onehot[np.arange(256), y] = 1

        def step():
            h = X @ W1 + b1
            a = np.maximum(h, np.float32(0))
            z = a @ W2 + b2
            s = z - z.max(axis=1, keepdims=True)
            e = np.exp(s)
            se = e.sum(axis=1, keepdims=True)
            loss = -(s - np.log(se))[np.arange(256), y].mean()
            dz = (e / se - onehot) * np.float32(1 / 256)
            gW2 = a.T @ dz
            dz.sum(axis=0)
            da = dz @ W2.T
            dh = np.where(h > 0, da, np.float32(0))
            gW1 = X.T @ dh
            dh.sum(axis=0)
            return float(loss), gW1, gW2
    step()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        loss, g1, g2 = step()
        times.append(time.perf_counter() - t)
    assert g1.dtype == np.float32, g1.dtype
    return {"times": times, "check": [loss, float(g1[0, 0]), float(g1[100, 200]), float(g2[5, 3])], "note": note}


def _conv_data(n):
    import numpy as np

    rng = np.random.default_rng(2)
    f32 = np.float32
    X = rng.standard_normal((n, 3, 64, 64), dtype=f32)
    W = rng.standard_normal((16, 3, 3, 3), dtype=f32) * f32(0.2)
    b = rng.standard_normal(16, dtype=f32) * f32(0.1)
    return X, W, b


def work_conv(impl, n, reps):
    """``conv2d(x, w, b).relu().mean()`` forward and backward (the gradients of x, w and b: the whole
    convolution_backward), x an (n, 3, 64, 64) float32 batch, 16 filters 3x3. numpy: the same im2col product,
    its two transposed products and col2im, written by hand."""
    import numpy as np

    X, W, b = _conv_data(n)
    if impl == "gradcli":
        import gradcli as G

        params = [G.tensor(p, requires_grad=True) for p in (X, W, b)]

        def step():
            for p in params:
                p.grad = None
            loss = G.conv2d(*params).relu().mean()
            loss.backward()
            return float(loss.item()), params[0].grad.data, params[1].grad.data, params[2].grad.data
    elif impl == "torch":
        import torch
        import torch.nn.functional as F

        params = [torch.tensor(p, requires_grad=True) for p in (X, W, b)]

        def step():
            for p in params:
                p.grad = None
            loss = F.conv2d(*params).relu().mean()
            loss.backward()
            return float(loss.item()), params[0].grad.numpy(), params[1].grad.numpy(), params[2].grad.numpy()
    else:
        from numpy.lib.stride_tricks import sliding_window_view

        def step():
            col = np.ascontiguousarray(sliding_window_view(X, (3, 3), axis=(2, 3)).transpose(1, 4, 5, 0, 2, 3))
            col = col.reshape(27, -1)
            y = (W.reshape(16, 27) @ col).reshape(16, n, 62, 62) + b[:, None, None, None]
            r = np.maximum(y, np.float32(0))
            loss = r.transpose(1, 0, 2, 3).mean()
            dy = np.where(y > 0, np.float32(1 / r.size), np.float32(0))
            gb = dy.sum(axis=(1, 2, 3))
            gw = (dy.reshape(16, -1) @ col.T).reshape(W.shape)
            dcol = (W.reshape(16, 27).T @ dy.reshape(16, -1)).reshape(3, 3, 3, n, 62, 62)
            gx = np.zeros((3, n, 64, 64), np.float32)
            for i in range(3):
                for j in range(3):
                    gx[:, :, i:i + 62, j:j + 62] += dcol[:, i, j]
            return float(loss), np.ascontiguousarray(gx.transpose(1, 0, 2, 3)), gw, gb
    step()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        loss, gx, gw, gb = step()
        times.append(time.perf_counter() - t)
    assert gx.dtype == np.float32 and gw.dtype == np.float32, (gx.dtype, gw.dtype)
    return {"times": times, "check": [loss, float(gx[0, 0, 5, 5]), float(gx[-1, 2, 0, 63]), float(gw[0, 0, 0, 0]),
                                      float(gw[15, 2, 1, 2]), float(gb[3])]}


SESSION_VALUE = "x * 2 + 1"
SESSION_GRAD = ":grad (x.sin() * x).exp().mean() + x.sum()"  # 5 ops: sin, mul, exp, mean, add (+ sum: 6 nodes)


def work_session(impl, n, reps):
    """Per-entry wall time of the session: a value print and a small :grad with tables (what the terminal
    gets: colour on, rendered into a string that the session then writes)."""
    from gradcli.frontends.session.core import Session

    sink = []
    s = Session(write=sink.append, error=sink.append, color=True)
    s.execute("x = tensor([0.5, -1.0, 2.0], requires_grad=True)")
    out = {}
    for label, entry in (("value", SESSION_VALUE), ("grad", SESSION_GRAD)):
        for _ in range(5):  # warm-up: the first :grad imports rich and the renderers
            s.execute(entry)
        times = []
        for _ in range(reps):
            sink.clear()
            t = time.perf_counter()
            s.execute(entry)
            times.append(time.perf_counter() - t)
        out[label] = times
    assert "gradients" in "".join(sink), "".join(sink)
    return {"times": out["value"], "grad": out["grad"], "check": [len(sink)]}


JAC_N = 256
HESS_N = 64


def _transform_data(n):
    import numpy as np

    rng = np.random.default_rng(0)
    return (rng.standard_normal((n, n), dtype=np.float32) / np.float32(np.sqrt(n)),
            rng.standard_normal(n, dtype=np.float32))


def work_transform(kind, impl, n, reps):
    """A Jacobian of the n-to-n program ``tanh(W @ sin(x) + b) * x`` (elementwise plus matmul) or the Hessian of
    the scalar ``(tanh(W @ sin(x)) * x).sum()``, by ``torch.autograd.functional`` (vectorize=True) or
    ``torch.func`` (jacrev, hessian): the same code on gradcli and torch. CPU time per call."""
    import numpy as np

    W, X = _transform_data(n)
    if impl == "gradcli":
        import gradcli as m
        from gradcli.api import func as mfunc
        from gradcli.api import autograd_functional as mfunctional
    else:
        import torch as m
        import torch.autograd.functional as mfunctional
        import torch.func as mfunc
    w, x, b = m.tensor(W), m.tensor(X), m.ones(n)

    def jac_fn(v):
        return (w @ v.sin() + b).tanh() * v

    def hess_fn(v):
        return ((w @ v.sin()).tanh() * v).sum()

    step = {
        "jacobian": lambda: mfunctional.jacobian(jac_fn, x, vectorize=True),
        "jacrev": lambda: mfunc.jacrev(jac_fn)(x),
        "hessian": lambda: mfunctional.hessian(hess_fn, x, vectorize=True),
        "func_hessian": lambda: mfunc.hessian(hess_fn)(x),
    }[kind]
    r = step()
    times, wall = [], []
    for _ in range(reps):
        t, tw = time.process_time(), time.perf_counter()
        r = step()
        times.append(time.process_time() - t)
        wall.append(time.perf_counter() - tw)
    a = r.detach().numpy() if impl == "torch" else np.asarray(r.data)
    assert a.shape == (n, n), a.shape
    return {"times": times, "wall": wall, "check": [float(a[0, 0]), float(a[3, 7]), float(a[-1, -1]),
                                                    float(a.sum())]}


PARSE_N = 500


def work_parse(impl, n, reps):
    """CPU time of turning each of ``n`` batch entries into a program (``reps`` passes after one untimed pass):
    gradcli's ``build_program`` (parse and build; the shape cache is off, so every entry is parsed), or
    ``ast.parse`` (impl "ast"). Per-entry times; the check is each entry's number of statements."""
    import ast

    if impl == "gradcli":
        from gradcli.language.build import build_program

        def convert(text):
            return len(build_program(text).body)
    else:
        def convert(text):
            return len(ast.parse(text).body)
    entries = batch_entries(n)
    check = [convert(e) for e in entries]  # warm-up
    clock = time.process_time_ns
    times, wall = [], []
    for _ in range(reps):
        for e in entries:
            t, w = clock(), time.perf_counter_ns()
            convert(e)
            times.append((clock() - t) * 1e-9)
            wall.append((time.perf_counter_ns() - w) * 1e-9)
    return {"times": times, "wall": wall, "check": check}


WORKERS = {"parse": work_parse, "session": work_session, "perop": work_perop, "chain": work_chain, "matmul": work_matmul,
           "mlp": work_mlp, "conv": work_conv,
           **{k: (lambda k: lambda impl, n, reps: work_transform(k, impl, n, reps))(k)
              for k in ("jacobian", "jacrev", "hessian", "func_hessian")}}


def worker_main(argv):
    name, impl, n, reps = argv[0], argv[1], int(argv[2]), int(argv[3])
    import numpy as np

    np.seterr(all="ignore")
    out = WORKERS[name](impl, n, reps)
    sys.stdout.write(json.dumps(out) + "\n")


# ----------------------------------------------------------------------------------------------- the runner
def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("NO_COLOR", "1")
    # An installed gradcli has its bytecode compiled (pip does it), like numpy and typer: let the warm-up run
    # write this checkout's __pycache__ rather than measure Python compiling gradcli's sources every time.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if THREADS:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(THREADS)
    return env


THREADS = None  # --threads: BLAS/OpenMP threads of every worker (None: the libraries' defaults)


def have_torch() -> bool:
    r = subprocess.run([sys.executable, "-c", "import importlib.util as u, sys; "
                        "sys.exit(0 if u.find_spec('torch') else 1)"], env=_env())
    return r.returncode == 0


def run_worker(name, impl, n, reps, timeout=1800):
    r = subprocess.run([sys.executable, str(HERE), "--worker", name, impl, str(n), str(reps)], env=_env(),
                       capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"worker {name}/{impl} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def gradcli_command():
    """How to start gradcli: its console script next to this Python if installed there, else ``-m gradcli``."""
    script = Path(sys.executable).parent / "gradcli"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "gradcli"]


def _wall(cmd, env, stdin_path=None, cpu=None):
    preexec = None
    if cpu is not None and hasattr(os, "sched_setaffinity"):
        def preexec():
            os.sched_setaffinity(0, {cpu})
    stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
    try:
        t = time.perf_counter()
        r = subprocess.run(cmd, env=env, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           preexec_fn=preexec)
        elapsed = time.perf_counter() - t
    finally:
        if stdin_path:
            stdin.close()
    return elapsed, r


TORCH_STARTUP_SCRIPT = """\
import torch
x = torch.arange(4.0, requires_grad=True)
y = 2 * torch.dot(x, x)
y.backward()
print(y)
print(x.grad)
"""


def _cpu(cmd, env):
    """(wall seconds, CPU seconds: user + system of the child, from getrusage) of one run of ``cmd``."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, r = _wall(cmd, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        raise RuntimeError(f"{cmd} failed: {r.stderr.decode()[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def bench_startup(reps, torch_ok):
    env = _env()
    # A Lark cache of this run's own: the cache file is named by Lark's version only, so another checkout with a
    # different grammar (a worktree, another install) running meanwhile would rewrite it, and a run here would
    # rebuild the parser (seconds) instead of loading it.
    cache = tempfile.TemporaryDirectory(prefix="gradcli-bench-cache-")  # removed when collected, or below
    env["XDG_CACHE_HOME"] = cache.name
    cmds = {"gradcli": gradcli_command() + ["grad", "2 * dot(x, x)", "-i", "x=arange(4.0)"],
            "floor": [sys.executable, "-c", "import numpy, typer, rich, lark"],
            # what the command imports from its dependencies beyond the floor's top-level modules: tables need
            # rich.console and rich.table (typer 0.29's pydantic adapters are avoided by the <0.29 pin)
            "deps": [sys.executable, "-c", "import numpy, typer, rich, lark, rich.console, rich.table"]}
    if torch_ok:
        cmds["torch"] = [sys.executable, "-c", TORCH_STARTUP_SCRIPT]
    extra = [("gradcli --json", cmds["gradcli"] + ["--json"]), ("gradcli --help", gradcli_command() + ["--help"])]
    samples = {k: [] for k in cmds}
    samples.update({k: [] for k, _ in extra})
    cpu = {k: [] for k in samples}
    for name, cmd in list(cmds.items()) + extra:  # warm the OS caches, .pyc, Lark cache
        _cpu(cmd, env)
    for _ in range(reps):
        for name, cmd in list(cmds.items()) + extra:
            wall, used = _cpu(cmd, env)
            samples[name].append(wall)
            cpu[name].append(used)
    med = {k: statistics.median(v) for k, v in samples.items()}
    rows = [_row("start-up (table output)", "s", med["gradcli"], med.get("torch"), med["floor"],
                 ratio=med["gradcli"] / med["floor"], ratio_of="floor", target=("<=", 1.3)),
            _row("start-up (--json)", "s", med["gradcli --json"], med.get("torch"), med["floor"],
                 ratio=med["gradcli --json"] / med["floor"], ratio_of="floor", target=("<=", 1.3)),
            _row("start-up (--help)", "s", med["gradcli --help"], None, med["floor"],
                 ratio=med["gradcli --help"] / med["floor"], ratio_of="floor", target=("<=", 1.1))]
    rows[0]["note"] = (f"floor = python -c 'import numpy, typer, rich, lark' {med['floor']:.3f} s; the imports the "
                       f"command needs from its dependencies (+ rich.console, rich.table) "
                       f"take {med['deps']:.3f} s = {med['deps'] / med['floor']:.2f}x the floor; gradcli is "
                       f"{med['gradcli'] / med['deps']:.2f}x that")
    # CPU time (user + system), which load from other processes disturbs far less than wall time: min and median
    for row, name in zip(rows, ("gradcli", "gradcli --json", "gradcli --help")):
        cpu_note = (f"CPU time {min(cpu[name]):.3f} s min = {min(cpu[name]) / min(cpu['floor']):.2f}x the floor's "
                    f"{min(cpu['floor']):.3f} s, median {statistics.median(cpu[name]) / statistics.median(cpu['floor']):.2f}x")
        row["note"] = cpu_note + ("; " + row["note"] if row["note"] else "")
    cache.cleanup()
    return rows, {"samples": samples, "cpu": cpu, "command": cmds["gradcli"]}


def _agree(a, b, rtol=1e-3, atol=1e-6):
    return a is not None and b is not None and len(a) == len(b) and all(
        abs(x - y) <= atol + rtol * abs(y) for x, y in zip(a, b))


def _rounds(name, n, reps, rounds, impls):
    """Run each implementation's worker ``rounds`` times, alternating, and pool the repetitions."""
    out = {impl: {"times": [], "wall": [], "check": None, "extra": []} for impl in impls}
    for _ in range(rounds):
        for impl in impls:
            res = run_worker(name, impl, n, reps)
            out[impl]["times"] += res["times"]
            out[impl]["wall"] += res.get("wall", res["times"])
            out[impl]["check"] = res["check"]
            out[impl]["extra"].append({k: v for k, v in res.items() if k not in ("times", "wall", "check")})
    for impl in impls:
        out[impl]["median"] = statistics.median(out[impl]["times"])
    return out


def bench_perop(reps, rounds, impls):
    res = _rounds("perop", PEROP_N, reps, rounds, impls)
    us = {k: v["median"] / PEROP_N * 1e6 for k, v in res.items()}
    ref = "torch" if "torch" in res else "numpy"
    ok = _agree(res["gradcli"]["check"], res[ref]["check"])
    row = _row("per-op fwd+bwd (10,000-op chain, 3 elements)", "us/op CPU", us["gradcli"], us.get("torch"),
               us["numpy"], ratio=us["gradcli"] / us["torch"] if "torch" in us else None, ratio_of="torch",
               target=("<=", 0.5), agree=ok, checked_against="PyTorch" if ref == "torch" else "numpy")
    return [row], {k: {"cpu_s": v["times"], "wall_s": v["wall"]} for k, v in res.items()}


def bench_matmul(reps, rounds, impls, n=2048):
    res = _rounds("matmul", n, reps, rounds, impls)
    ok = _agree(res["gradcli"]["check"], res["numpy"]["check"], rtol=1e-4, atol=1e-3)
    row = _row(f"(a @ b).sum() backward, {n}x{n} float32", "s", res["gradcli"]["median"],
               res["torch"]["median"] if "torch" in res else None, res["numpy"]["median"],
               ratio=res["gradcli"]["median"] / res["numpy"]["median"], ratio_of="numpy", target=("<=", 1.1),
               agree=ok, checked_against="numpy")
    return [row], {k: v["times"] for k, v in res.items()}


def bench_mlp(reps, rounds, impls):
    res = _rounds("mlp", 0, reps, rounds, impls)
    ref = "torch" if "torch" in res else "numpy"
    ok = _agree(res["gradcli"]["check"], res[ref]["check"], rtol=1e-3, atol=1e-6)
    notes = [e["note"] for e in res["gradcli"]["extra"] if e.get("note")]
    row = _row("MLP 784-512-10, batch 256, fwd+bwd", "s", res["gradcli"]["median"],
               res["torch"]["median"] if "torch" in res else None, res["numpy"]["median"],
               ratio=res["gradcli"]["median"] / res["torch"]["median"] if "torch" in res else None,
               ratio_of="torch", target=("<=", 1.0), agree=ok, note=notes[0] if notes else None,
               checked_against="PyTorch" if ref == "torch" else "numpy")
    return [row], {k: v["times"] for k, v in res.items()}


def bench_conv(reps, rounds, impls, n=32):
    res = _rounds("conv", n, reps, rounds, impls)
    ref = "torch" if "torch" in res else "numpy"
    ok = _agree(res["gradcli"]["check"], res[ref]["check"], rtol=1e-3, atol=1e-6)
    row = _row(f"conv2d fwd+bwd, {n}x3x64x64, 16 filters 3x3", "s", res["gradcli"]["median"],
               res["torch"]["median"] if "torch" in res else None, res["numpy"]["median"],
               ratio=res["gradcli"]["median"] / res["torch"]["median"] if "torch" in res else None,
               ratio_of="torch", target=("<=", 3.0), agree=ok, checked_against="PyTorch" if ref == "torch" else "numpy")
    return [row], {k: v["times"] for k, v in res.items()}


def bench_transforms(reps, rounds, torch_ok):
    """The Jacobian and Hessian rows: gradcli's torch.autograd.functional (vectorize=True) and torch.func beside
    PyTorch's, CPU time per call; the target is <= 1.0x PyTorch's time for each."""
    impls = ["gradcli", "torch"] if torch_ok else ["gradcli"]
    rows, detail = [], {}
    for name, n, label in (("jacobian", JAC_N, f"jacobian {JAC_N}x{JAC_N}, functional.jacobian(vectorize=True)"),
                           ("jacrev", JAC_N, f"jacobian {JAC_N}x{JAC_N}, torch.func.jacrev"),
                           ("hessian", HESS_N, f"hessian {HESS_N}x{HESS_N}, functional.hessian(vectorize=True)"),
                           ("func_hessian", HESS_N, f"hessian {HESS_N}x{HESS_N}, torch.func.hessian")):
        res = _rounds(name, n, reps, rounds, impls)
        t = res.get("torch", {}).get("median")
        ok = _agree(res["gradcli"]["check"], res["torch"]["check"], rtol=1e-4, atol=1e-5) if t else None
        rows.append(_row(label, "ms CPU", res["gradcli"]["median"] * 1e3, t * 1e3 if t else None, None,
                         ratio=res["gradcli"]["median"] / t if t else None, ratio_of="torch", target=("<=", 1.0),
                         agree=ok))
        if t:
            wall = {k: statistics.median(v["wall"]) for k, v in res.items()}
            rows[-1]["note"] = (f"wall time: gradcli {wall['gradcli'] * 1e3:.3f} ms, PyTorch "
                                f"{wall['torch'] * 1e3:.3f} ms ({wall['gradcli'] / wall['torch']:.2f}x)")
        detail[name] = {k: {"cpu_s": v["times"], "wall_s": v["wall"]} for k, v in res.items()}
    rows[0]["note"] = ("program tanh(W @ sin(x) + b) * x (256 -> 256) for the Jacobians, (tanh(W @ sin(x)) * x).sum() "
                       "(64 inputs) for the Hessians, float32; CPU time per call (all threads); "
                       + (rows[0]["note"] or ""))
    return rows, detail


def bench_chain(n, rounds, impls):
    res = _rounds("chain", n, 1, rounds, impls)
    mem = {k: statistics.median(e["delta_kib"] for e in v["extra"]) / 1024 for k, v in res.items()}
    peak = {k: statistics.median(e["peak_kib"] for e in v["extra"]) / 1024 for k, v in res.items()}
    ref = "torch" if "torch" in res else None
    # Checked against numpy, which computes the same float32 formulas: over a million float32 steps PyTorch's
    # kernels (its tanh differs from numpy's in the last bit now and then) drift apart by ~1e-3 relative.
    ok = _agree(res["gradcli"]["check"], res["numpy"]["check"], rtol=1e-5, atol=0)
    label = f"{n:,}-node chain"
    rows = [_row(f"{label}: time (fwd+bwd)", "s CPU", res["gradcli"]["median"],
                 res["torch"]["median"] if ref else None, res["numpy"]["median"],
                 ratio=res["gradcli"]["median"] / res["torch"]["median"] if ref else None, ratio_of="torch",
                 target=("<=", 0.5), agree=ok, checked_against="numpy"),
            _row(f"{label}: peak memory above baseline", "MiB", mem["gradcli"], mem.get("torch"), mem["numpy"],
                 ratio=mem["gradcli"] / mem["torch"] if ref else None, ratio_of="torch", target=("<=", 0.5),
                 note="peak RSS: " + ", ".join(f"{k} {v:,.0f} MiB" for k, v in peak.items()))]
    return rows, {k: {"cpu_s": v["times"], "wall_s": v["wall"], "memory": v["extra"]} for k, v in res.items()}


BATCH_TEMPLATES = [
    "x = tensor([{a}, {b}], requires_grad=True); (x * x).sum()",
    "x = tensor([{a}, {b}, {c}], requires_grad=True); (2 * x + 1).tanh().sum()",
    "w = tensor([[{a}, {b}], [{c}, 1.0]], requires_grad=True); relu(w @ tensor([1.0, -2.0])).sum()",
    "x = tensor({a}, requires_grad=True); y = x ** 3 - 2 * x; y",
    "x = tensor([{a}, {b}], requires_grad=True); sigmoid(x).mean()",
]


def batch_entries(n):
    import random

    rnd = random.Random(0)
    lines = []
    for i in range(n):
        vals = {k: round(rnd.uniform(-2, 2), 3) for k in "abc"}
        lines.append(BATCH_TEMPLATES[i % len(BATCH_TEMPLATES)].format(**vals))
    return lines


def _cpu_run(cmd, env, stdin_path=None):
    """Run a command; returns (CPU seconds of the child, user + system, completed process)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    _, r = _wall(cmd, env, stdin_path)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), r


def bench_batch(n, reps, torch_ok):
    env = _env()
    cmd = gradcli_command()
    name = f"gradcli batch, {n:,} text entries"
    help_run = subprocess.run(cmd + ["batch", "--help"], env=env, capture_output=True, text=True)
    if help_run.returncode != 0:
        return [_row(name, "entries/CPU-s", None, None, None, ratio=None, ratio_of=None, target=(">=", 2000),
                     note="n/a: this gradcli has no `batch` command")], {}
    rows, detail = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "entries.txt"
        path.write_text("\n".join(batch_entries(n)) + "\n")
        # The file as an argument, or on standard input if the command takes none.
        chosen = None
        for c, stdin_path in ((cmd + ["batch", str(path)], None), (cmd + ["batch", "-"], str(path))):
            _, r = _wall(c + ["--json"], env, stdin_path)
            if r.returncode in (0, 1) and r.stdout:
                chosen = (c, stdin_path)
                break
        if chosen is None:
            return [_row(name, "entries/CPU-s", None, None, None, ratio=None, ratio_of=None, target=(">=", 2000),
                         note=f"failed: exit {r.returncode}: {r.stderr.decode(errors='replace')[-300:]}")], {}
        failed = r.stdout.count(b'"error"')
        torch_rate = None
        if torch_ok:
            script = ("import torch\n"
                      f"vals = [(0.1 * (i % 7), -0.2 * (i % 3)) for i in range({n})]\n"
                      "for a, b in vals:\n"
                      "    x = torch.tensor([a, b], requires_grad=True)\n"
                      "    (x * x).sum().backward()\n")
            torch_rate = n / statistics.median(_cpu_run([sys.executable, "-c", script], env)[0]
                                               for _ in range(max(1, reps // 2)))
        for label, extra in (("JSON Lines (--json)", ["--json"]), ("table output", [])):
            times = [_cpu_run(chosen[0] + extra, env, chosen[1])[0] for _ in range(reps)]
            rows.append(_row(f"{name}, {label}", "entries/CPU-s", n / statistics.median(times), torch_rate, None,
                             ratio=None, ratio_of=None, target=(">=", 2000), value_target=True))
            detail[label] = {"cpu_s": times, "command": chosen[0] + extra}
    rows[0]["note"] = (f"one process (no --jobs), start-up included, {failed} failed entries; CPU time of the "
                       f"process. PyTorch column: a script doing the x*x sum backward of {n:,} small tensors "
                       "(no parsing), for scale")
    return rows, detail


LOCAL_CLUSTER_SCRIPT = """\
import sys
from distributed import LocalCluster
if __name__ == "__main__":
    with LocalCluster(n_workers=int(sys.argv[1]), threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=":0") as cluster:
        print(cluster.scheduler_address, flush=True)
        sys.stdin.read()  # until the benchmark closes it
"""


def _local_cluster(workers, env):
    """A Dask LocalCluster (a scheduler and ``workers`` worker processes of one thread) in a process of its
    own: (the process, the scheduler's address); None if Dask is not installed."""
    p = subprocess.Popen([sys.executable, "-c", LOCAL_CLUSTER_SCRIPT, str(workers)], env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    address = p.stdout.readline().strip()
    if not address:
        p.wait()
        return None
    return p, address


def _parent_cpu_run(cmd, env):
    """(wall seconds, CPU seconds of the ``gradcli batch`` process itself, not of its workers, completed
    process): the parent's CPU read from /proc every 10 ms while it runs (the last reading before it exits;
    None where /proc is missing)."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    cpu = None
    chunks = []
    import threading

    reader = threading.Thread(target=lambda: chunks.append(p.stdout.read()), daemon=True)
    reader.start()
    while p.poll() is None:
        try:
            fields = Path(f"/proc/{p.pid}/stat").read_text().rsplit(")", 1)[1].split()
            cpu = (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            pass
        time.sleep(0.01)
    reader.join()
    err = p.stderr.read()
    wall = time.perf_counter() - t
    return wall, cpu, subprocess.CompletedProcess(cmd, p.returncode, chunks[0] if chunks else b"", err)


SCALE_STEPS = (1, 2, 4, 8, 16)


def bench_scaleout(n, reps):
    """``gradcli batch`` over several processes, capped at this machine's cores: ``--jobs`` 1/2/4/8/16 and the
    partitioned Dask mode (``--output-dir``) on LocalClusters of 1/2/4/8/16 worker processes; entries/s of the
    whole command (wall time), efficiency (entries/s against workers x the one-worker rate) and, for
    ``--jobs``, the CPU the ``gradcli batch`` process itself spends per entry (what caps how many workers it
    can feed). Each output is compared with ``--jobs 1`` byte for byte."""
    env = _env()
    cmd = gradcli_command()
    cores = os.cpu_count() or 1
    steps = [k for k in SCALE_STEPS if k <= cores]
    rows, detail = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "entries.txt"
        path.write_text("\n".join(batch_entries(n)) + "\n")
        base = cmd + ["batch", str(path), "--json"]
        reference, one = None, None
        for k in steps:
            c = base + ["--jobs", str(k)]
            _wall(c, env)  # untimed first run
            samples = [_parent_cpu_run(c, env) for _ in range(reps)]
            wall = statistics.median(s[0] for s in samples)
            cpus = [s[1] for s in samples if s[1] is not None]
            parent_us = statistics.median(cpus) / n * 1e6 if cpus else None
            out = samples[-1][2].stdout
            reference = out if reference is None else reference
            rate = n / wall
            one = rate if one is None else one
            rows.append(_row(f"gradcli batch --jobs {k}, {n:,} entries", "entries/s", rate, None, None,
                             ratio=rate / (one * k), ratio_of=f"{k} x --jobs 1", target=(">=", 0.8),
                             agree=out == reference, checked_against="--jobs 1 (byte for byte)",
                             note=(f"efficiency {rate / (one * k):.0%}; the parent's CPU "
                                   f"{parent_us:.0f} us/entry (start-up included)" if parent_us is not None
                                   else f"efficiency {rate / (one * k):.0%}")))
            detail[f"--jobs {k}"] = {"wall_s": [s[0] for s in samples], "parent_cpu_s": cpus, "command": c}
        parts_dir = Path(tmp) / "parts"
        parts_dir.mkdir()
        lines = batch_entries(n)
        nparts = max(steps) * 2
        for p_ in range(nparts):
            (parts_dir / f"part-{p_:05d}.txt").write_text("\n".join(lines[p_::nparts]) + "\n")
        dask_one = None
        for k in steps:
            cluster = _local_cluster(k, env)
            label = f"gradcli batch --dask --output-dir, LocalCluster of {k} worker{'s' if k > 1 else ''}"
            if cluster is None:
                rows.append(_row(f"{label}, {n:,} entries", "entries/s", None, None, None, ratio=None, ratio_of=None,
                                 target=(">=", 0.8), note="n/a: Dask is not installed (pip install 'gradcli[dask]')"))
                break
            try:
                samples = []
                for r_ in range(reps + 1):
                    out_dir = Path(tmp) / f"out-{k}-{r_}"
                    c = cmd + ["batch", f"{parts_dir}/part-*.txt", "--json", "--dask", cluster[1],
                               "--output-dir", str(out_dir)]
                    t, r = _wall(c, env)
                    if r_:
                        samples.append(t)
            finally:
                cluster[0].stdin.close()
                cluster[0].wait(60)
            rate = n / statistics.median(samples)
            dask_one = rate if dask_one is None else dask_one
            rows.append(_row(f"{label}, {n:,} entries in {nparts} parts", "entries/s", rate, None, None,
                             ratio=rate / (dask_one * k), ratio_of=f"{k} x 1 worker", target=(">=", 0.8),
                             note=f"efficiency {rate / (dask_one * k):.0%}; workers read and write their parts"))
            detail[label] = {"wall_s": samples}
        if rows:
            rows[0]["note"] += (f"; wall time of the whole command, start-up included, capped at this machine's "
                                f"{cores} cores")
    return rows, detail


def bench_parse(reps, rounds):
    res = _rounds("parse", PARSE_N, reps, rounds, ["gradcli", "ast"])
    ms = {k: v["median"] * 1e3 for k, v in res.items()}
    row = _row("parse+build, batch entries (per entry)", "ms CPU", ms["gradcli"], ms["ast"], None,
               ratio=ms["gradcli"] / 0.2, ratio_of="target", target=("<=", 0.2), value_target=True,
               agree=res["gradcli"]["check"] == res["ast"]["check"], checked_against="ast.parse (statements)",
               note=f"text -> program of {PARSE_N} entries like `x = tensor([a, b], requires_grad=True); "
                    f"(x * x).sum()` (30 tokens), CPU time per entry, median of {reps * rounds * PARSE_N:,}; "
                    "PyTorch column: Python's ast.parse of the same text (PyTorch parses nothing), for scale")
    return [row], {k: {"cpu_s": v["times"], "wall_s": v["wall"]} for k, v in res.items()}


def bench_session(reps):
    res = run_worker("session", "gradcli", 0, reps)
    value = statistics.median(res["times"]) * 1e3
    grad = statistics.median(res["grad"]) * 1e3
    rows = [_row(f"session: value print ({SESSION_VALUE})", "ms", value, None, None, ratio=None, ratio_of=None,
                 target=("<=", 5), value_target=True),
            _row("session: small :grad with tables (3 elements, 5 ops)", "ms", grad, None, None, ratio=None,
                 ratio_of=None, target=("<=", 20), value_target=True)]
    rows[0]["note"] = (f"wall time per entry once the session has started, median of {reps}; the entry is run and "
                       "its answer rendered into a string, as at the terminal (colour on)")
    return rows, {"value_s": res["times"], "grad_s": res["grad"]}
def _wall_to_file(cmd, env, path):
    """(wall seconds, bytes written, completed process) of ``cmd`` with its standard output going to the file
    ``path``, as ``cmd > path`` in a shell (standard error is captured)."""
    with open(path, "wb") as out:
        t = time.perf_counter()
        r = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.PIPE)
        elapsed = time.perf_counter() - t
    return elapsed, os.path.getsize(path), r


def bench_bigjson(reps, torch_ok):
    """``gradcli grad "(X @ X).sum()" -i "X=randn(1000, 1000)"``: whole-process wall time with --json against the
    table (the target: --json <= 1.5x the table), the same with ``--fields output,grads``, and the size written.

    The output goes to a file, as ``gradcli grad ... --json > out.json``; the note also gives the times with the
    output read through a pipe by this script (``subprocess`` reading 32 KiB at a time and keeping the 34 MB),
    where the reader's own work on the second CPU adds to the JSON's time."""
    env = _env()
    base = gradcli_command() + ["grad", "(X @ X).sum()", "-i", "X=randn(1000, 1000)", "--seed", "0"]
    cmds = {"table": base, "json": base + ["--json"], "json fields": base + ["--json", "--fields", "output,grads"]}
    sizes = {}
    with tempfile.TemporaryDirectory(prefix="gradcli-bench-bigjson-") as tmp:
        out = os.path.join(tmp, "out")
        for name, cmd in cmds.items():  # warm up, and check that it runs
            _, size, r = _wall_to_file(cmd, env, out)
            if r.returncode != 0:
                raise RuntimeError(f"{name} failed: {r.stderr.decode()[-2000:]}")
            sizes[name] = size
        samples = {k: [] for k in cmds}
        piped = {k: [] for k in cmds}
        for _ in range(reps):
            for name, cmd in cmds.items():
                samples[name].append(_wall_to_file(cmd, env, out)[0])
                piped[name].append(_wall(cmd, env)[0])
    med = {k: statistics.median(v) for k, v in samples.items()}
    pmed = {k: statistics.median(v) for k, v in piped.items()}
    rows = [_row("grad --json, 1000x1000 input", "s", med["json"], None, None, ratio=med["json"] / med["table"],
                 ratio_of="table", target=("<=", 1.5),
                 note=f"table {med['table']:.3f} s; {sizes['json'] / 1e6:.1f} MB of JSON (the input, the gradient, "
                      f"and the gradient again under calls), written to a file; read through a pipe by this "
                      f"script instead: json {pmed['json']:.3f} s, table {pmed['table']:.3f} s, "
                      f"{pmed['json'] / pmed['table']:.2f}x"),
            _row("grad --json --fields output,grads", "s", med["json fields"], None, None,
                 ratio=med["json fields"] / med["table"], ratio_of="table", target=("<=", 1.5),
                 note=f"{sizes['json fields'] / 1e6:.1f} MB; through a pipe "
                      f"{pmed['json fields'] / pmed['table']:.2f}x")]
    return rows, {"samples": samples, "piped": piped, "bytes": sizes}


def _row(name, unit, gradcli, torch, numpy, ratio, ratio_of, target, agree=None, note=None, value_target=False,
         checked_against="PyTorch"):
    op, limit = target
    measured = gradcli if value_target else ratio
    if measured is None:
        status, miss = "n/a", None
    elif op == "<=":
        status, miss = ("met", None) if measured <= limit else ("missed", measured / limit - 1)
    else:
        status, miss = ("met", None) if measured >= limit else ("missed", 1 - measured / limit)
    return {"name": name, "unit": unit, "gradcli": gradcli, "torch": torch, "numpy": numpy, "ratio": ratio,
            "ratio_of": ratio_of, "target": f"{op} {limit:,}" + (f" {unit}" if value_target else f"x {ratio_of}"),
            "status": status, "miss": miss, "results_agree": agree, "checked_against": checked_against, "note": note}


def _fmt(v, unit):
    if v is None:
        return "-"
    if unit.startswith("entries"):
        return f"{v:,.0f}"
    if unit == "MiB":
        return f"{v:,.0f}"
    if unit.startswith("us/op"):
        return f"{v:.2f}"
    return f"{v:.3f}" if v < 10 else f"{v:.1f}"


def machine():
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info = {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform(), "loadavg_start": list(os.getloadavg()) if hasattr(os, "getloadavg")
            else None}
    code = ("import json, numpy; d = {'numpy': numpy.__version__}\n"
            "try:\n    d['blas'] = numpy.__config__.CONFIG['Build Dependencies']['blas']['name']\n"
            "except Exception:\n    pass\n"
            "try:\n    import torch; d['torch'] = torch.__version__; d['torch_threads'] = torch.get_num_threads()\n"
            "except ImportError:\n    pass\n"
            "import typer, lark\nd['typer'] = typer.__version__; d['lark'] = lark.__version__\n"
            "print(json.dumps(d))")
    r = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True)
    if r.returncode == 0:
        info.update(json.loads(r.stdout))
    return info


def print_table(rows, info, elapsed):
    head = ["benchmark", "unit", "gradcli", "PyTorch", "numpy", "ratio", "target", "result"]
    body = []
    for r in rows:
        if r["status"] == "met":
            result = "met"
        elif r["status"] == "missed":
            result = f"MISSED by {r['miss']:.0%}"
        else:
            result = "n/a"
        if r["results_agree"] is False:
            result += " (RESULTS DIFFER)"
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}x {r['ratio_of']}"
        body.append([r["name"], r["unit"], _fmt(r["gradcli"], r["unit"]), _fmt(r["torch"], r["unit"]),
                     _fmt(r["numpy"], r["unit"]), ratio, r["target"], result])
    widths = [max(len(str(x[i])) for x in [head] + body) for i in range(len(head))]
    line = "  ".join("-" * w for w in widths)
    print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
    print(line)
    for b in body:
        print("  ".join(str(x).ljust(w) if i in (0, 1, 6, 7) else str(x).rjust(w)
                        for i, (x, w) in enumerate(zip(b, widths))))
    print(line)
    for r in rows:
        if r["note"]:
            print(f"note: {r['name']}: {r['note']}")
        if r["results_agree"] is not None:
            print(f"check: {r['name']}: gradcli's numbers {'agree with' if r['results_agree'] else 'DIFFER from'} "
                  f"{r['checked_against']}'s")
    print(f"machine: {info.get('cpu')}, {info.get('cores')} cores; Python {info.get('python')}, numpy "
          f"{info.get('numpy')} ({info.get('blas', '?')}), torch {info.get('torch', 'not installed')}, typer "
          f"{info.get('typer')}, lark {info.get('lark')}")
    print(f"BLAS/OpenMP threads: {info['threads']}; load average (1 min) at start {info['loadavg_start'][0]:.2f}, "
          f"at end {info['loadavg_end'][0]:.2f}; medians; total {elapsed:.0f} s")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions and a 200,000-node chain")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--only", default="",
                    help="comma-separated: startup,perop,matmul,mlp,conv,chain,batch,scaleout,bigjson,session,"
                         "transforms,parse")
    ap.add_argument("--no-torch", action="store_true", help="leave PyTorch out even if it is installed")
    ap.add_argument("--threads", type=int, default=None,
                    help="BLAS/OpenMP threads for every run (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS, "
                         "MKL_NUM_THREADS); default: the libraries' own (all cores)")
    args = ap.parse_args(argv)
    global THREADS
    THREADS = args.threads
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    known = {"startup", "perop", "matmul", "mlp", "conv", "chain", "batch", "scaleout", "bigjson", "session",
             "transforms", "parse"}
    if only - known:
        ap.error(f"unknown benchmark(s): {', '.join(sorted(only - known))}")
    want = only or known
    torch_ok = not args.no_torch and have_torch()
    impls = ["gradcli", "torch", "numpy"] if torch_ok else ["gradcli", "numpy"]
    q = args.quick
    t0 = time.perf_counter()
    info = machine()
    rows, raw = [], {}
    plan = [
        ("startup", lambda: bench_startup(3 if q else 10, torch_ok)),
        ("perop", lambda: bench_perop(2 if q else 3, 2 if q else 5, impls)),
        ("matmul", lambda: bench_matmul(2 if q else 3, 1 if q else 2, impls)),
        ("mlp", lambda: bench_mlp(5 if q else 10, 1 if q else 3, impls)),
        ("conv", lambda: bench_conv(5 if q else 10, 1 if q else 3, impls)),
        ("chain", lambda: bench_chain(CHAIN_N_QUICK if q else CHAIN_N, 1, impls)),
        ("batch", lambda: bench_batch(10_000, 1 if q else 2, torch_ok)),
        ("scaleout", lambda: bench_scaleout(20_000, 1 if q else 3)),
        ("session", lambda: bench_session(30 if q else 200)),
        ("bigjson", lambda: bench_bigjson(3 if q else 9, torch_ok)),
        ("transforms", lambda: bench_transforms(5 if q else 20, 1 if q else 3, torch_ok)),
        ("parse", lambda: bench_parse(2 if q else 5, 1 if q else 3)),
    ]
    for name, fn in plan:
        if name in want:
            if not args.json:
                print(f"running {name} ...", file=sys.stderr, flush=True)
            r, detail = fn()
            rows += r
            raw[name] = detail
    info["loadavg_end"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    info["threads"] = THREADS or "library defaults"
    elapsed = time.perf_counter() - t0
    if args.json:
        json.dump({"machine": info, "quick": q, "rows": rows, "samples": raw, "seconds": elapsed}, sys.stdout,
                  indent=1)
        sys.stdout.write("\n")
    else:
        print_table(rows, info, elapsed)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker_main(sys.argv[2:])
    else:
        main()
