"""Run a Python program that imports torch, as ``python PROGRAM`` does, without paying torch's import each time.

Many tests compare what a PyTorch program prints under Python with what ``gradcli run`` prints for the same text.
Starting a fresh interpreter that imports torch costs about two seconds of CPU each time, which over the suite's
hundreds of such programs was minutes. :func:`run_python` instead asks one helper process per test process (one
per pytest-xdist worker) that has imported torch once; for each program it forks a child, which runs the file as
``python FILE`` would (``runpy.run_path`` with ``__name__ == "__main__"``, ``sys.argv == [FILE]``, the file's
folder first on ``sys.path``, the caller's working directory and environment, standard input from /dev/null) and
exits with the status Python's own start-up would give (0, SystemExit's code, or 1 after printing the traceback).
The helper process itself never runs torch code, so each child starts from torch's state just after import (no
thread pool yet) as a fresh interpreter does; each child seeds torch's, Python's and NumPy's generators afresh
(a fresh interpreter's unseeded draws differ from run to run; a forked child's would repeat its parent's).

Where fork is not the platform's (not Linux), or the helper process died, each program runs in a fresh
interpreter as before.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
import threading

#: The helper process: imports torch, then for each request line forks a child that runs one program.
_SERVER = r"""
import json, os, random, runpy, signal, sys, traceback
import numpy.random
import torch  # the point: imported once, before the forks

def child(req):
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(req["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    err = os.open(req["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(null, 0); os.dup2(out, 1); os.dup2(err, 2)
    sys.stdin = open(0, closefd=False)
    signal.alarm(req["timeout"])  # a guard against a hang, as subprocess's timeout
    # a fresh interpreter's generators start from a random seed each: so does each child (not its parent's state)
    torch.seed()
    random.seed()
    numpy.random.seed()
    sys.argv = [req["path"]]
    sys.path[0] = os.path.dirname(os.path.abspath(req["path"]))
    for entry in reversed(req["env"].get("PYTHONPATH", "").split(os.pathsep)):
        if entry and entry not in sys.path:
            sys.path.insert(1, entry)  # where a fresh interpreter would put PYTHONPATH's entries
    code = 0
    try:
        runpy.run_path(req["path"], run_name="__main__")
    except SystemExit as e:
        if e.code is None:
            code = 0
        elif isinstance(e.code, int):
            code = e.code
        else:
            print(e.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)

for line in sys.stdin:
    req = json.loads(line)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        child(req)
    _, status = os.waitpid(pid, 0)
    print(json.dumps(os.waitstatus_to_exitcode(status)), flush=True)
"""

_lock = threading.Lock()
_server: subprocess.Popen | None = None


def _helper() -> subprocess.Popen | None:
    global _server
    if not sys.platform.startswith("linux"):
        return None
    if _server is None or _server.poll() is not None:
        _server = subprocess.Popen([sys.executable, "-c", _SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   text=True)
        atexit.register(_stop, _server)
    return _server


def _stop(server: subprocess.Popen) -> None:
    if server.poll() is None:
        server.stdin.close()  # the helper ends at the end of its input
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


def run_python(path, timeout: int, env: dict | None = None, cwd=None) -> subprocess.CompletedProcess:
    """``subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=timeout, env=env,
    cwd=cwd)``, through the helper process that has torch imported (see the module docstring).

    Returns:
        a CompletedProcess with ``returncode`` (negative: the signal that ended it; -14, SIGALRM, after
        ``timeout`` seconds), ``stdout`` and ``stderr`` (text).
    """
    path = os.fspath(path)
    env = dict(os.environ if env is None else env)
    cwd = os.fspath(cwd) if cwd is not None else os.getcwd()
    with _lock:
        server = _helper()
        if server is not None:
            with tempfile.TemporaryDirectory(prefix="torch-python-") as tmp:
                out, err = os.path.join(tmp, "out"), os.path.join(tmp, "err")
                req = {"path": os.path.abspath(path), "out": out, "err": err, "cwd": cwd, "env": env,
                       "timeout": int(timeout)}
                try:
                    server.stdin.write(json.dumps(req) + "\n")
                    server.stdin.flush()
                    reply = server.stdout.readline()
                except (BrokenPipeError, OSError):
                    reply = ""
                if reply:
                    with open(out, encoding="utf-8", errors="replace") as f_out, \
                            open(err, encoding="utf-8", errors="replace") as f_err:
                        return subprocess.CompletedProcess([sys.executable, path], json.loads(reply), f_out.read(),
                                                           f_err.read())
    return subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
