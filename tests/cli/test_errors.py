"""One error path for every command (``gradcli.frontends.cli.reported`` over ``gradcli.app.reporting``): in the process
``main()`` owns, every exception becomes a message and an exit status; run from a test runner, exceptions other
than gradcli's errors reach the caller (so that tests see bugs)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from gradcli.app import catalog, reporting
from gradcli.frontends.cli import app
from gradcli.frontends.cli_options import Invocation
from gradcli.engine.errors import EvalError, InputError

runner = CliRunner()


def ops_raising(monkeypatch, exc, *, owns_process: bool, env=None):
    """``gradcli ops`` whose op list raises ``exc`` (ops configures no limits, so no process guard is
    installed in the test process even when it 'owns' it)."""
    def list_ops(**kw):
        raise exc

    monkeypatch.setattr(catalog, "list_ops", list_ops)
    return runner.invoke(app, ["ops"], obj=Invocation(owns_process=owns_process), env=env)


@pytest.mark.parametrize("exc, code, text", [
    (ZeroDivisionError("a bug"), 1, "gradcli: internal error: ZeroDivisionError: a bug\nPlease report this"),
    (MemoryError(), 1, "MemoryError: out of memory"),
    (RecursionError("deep"), 1, "RecursionError: deep\n"),
    (EvalError("boom", type="RuntimeError"), 1, "RuntimeError: boom\n"),
    (InputError("bad", type="UsageError"), 2, "UsageError: bad\n"),
    (KeyboardInterrupt(), 130, "interrupted\n"),
])
def test_every_exception_has_its_message_and_exit_status(monkeypatch, exc, code, text):
    r = ops_raising(monkeypatch, exc, owns_process=True, env={"GRADCLI_DEBUG": "0"})
    assert r.exit_code == code and r.stdout == ""
    assert text in r.stderr and "Traceback" not in r.stderr


def test_debug_shows_the_traceback_first(monkeypatch):
    r = ops_raising(monkeypatch, ZeroDivisionError("a bug"), owns_process=True, env={"GRADCLI_DEBUG": "1"})
    assert r.exit_code == 1 and r.stderr.startswith("Traceback (most recent call last)")
    assert "in list_ops" in r.stderr and "gradcli: internal error: ZeroDivisionError: a bug" in r.stderr


def test_a_closed_pipe_ends_quietly(monkeypatch):
    r = ops_raising(monkeypatch, BrokenPipeError(), owns_process=True)
    assert r.exit_code == 141 and r.stderr == ""  # 128 + SIGPIPE, as gradcli batch


def test_grad_into_head_ends_quietly():
    """``gradcli grad ... | head -1`` exits 141 with nothing on stderr, not 1 (rich's own handling of a closed
    pipe)."""
    import os
    import subprocess
    import sys

    from helpers import ROOT

    # 300 backward calls make a table of about 88 kB, more than a pipe holds (64 kB): gradcli is still writing
    # when the reader goes away after one line, as head's reader does (with a few kB, it could finish first)
    p = subprocess.Popen([sys.executable, "-m", "gradcli", "grad", "x * 2", "-i", "x=ones(2000)", "--gradient",
                          "ones(2000)", "--repeat", "300"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    p.stdout.readline()
    p.stdout.close()
    assert p.wait() == 141 and p.stderr.read() == b""


def test_outside_main_a_bug_reaches_the_caller(monkeypatch):
    r = ops_raising(monkeypatch, ZeroDivisionError("a bug"), owns_process=False)
    assert isinstance(r.exception, ZeroDivisionError)
    r = ops_raising(monkeypatch, InputError("bad", type="UsageError"), owns_process=False)  # gradcli's own: reported
    assert r.exit_code == 2 and "UsageError: bad" in r.stderr


def test_one_ladder_from_exception_to_error():
    assert reporting.to_error(MemoryError()).type == "MemoryError"
    assert reporting.to_error(RecursionError("deep")).type == "RecursionError"
    err = reporting.to_error(ZeroDivisionError("a bug"))
    assert isinstance(err, reporting.InternalError) and err.exit_code == 1
    assert err.message == "ZeroDivisionError: a bug (a bug in gradcli; please report it)"  # as a batch entry shows it
    same = InputError("x")
    assert reporting.to_error(same) is same
