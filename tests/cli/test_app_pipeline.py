"""One application pipeline behind ``gradcli grad``, a ``gradcli batch`` entry and the session's ``:grad``
(:func:`gradcli.app.jobs.run`), and its hints, chosen by the error's type and code (never by its message):
each front end as a user runs it, in a process of its own."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gradcli.app import hints
from gradcli.engine.errors import EvalError

NAME_HINT = 'pass it with -i z=SPEC (an input that requires grad, e.g. -i "z=[1., 2.]") or -c z=SPEC (a constant)'
SHAPE_HINT = ("the output has shape [2]: pass --gradient SPEC of that shape (the v of the vector-Jacobian product), "
              "or reduce it, e.g. with .sum()")


def gradcli(*args, stdin: str | None = None):
    return subprocess.run([sys.executable, "-m", "gradcli", *args], input=stdin, capture_output=True, text=True,
                          timeout=120)


def test_grad_and_batch_give_the_same_hints():
    r = gradcli("grad", "(z * 2).sum()")
    assert r.returncode == 1 and r.stdout == ""
    assert "NameError: name 'z' is not defined\n" + NAME_HINT in r.stderr
    r = gradcli("grad", "x * 2", "-i", "x=[1., 2.]")
    assert r.returncode == 1
    assert r.stderr.endswith("RuntimeError: grad can be implicitly created only for scalar outputs\n"
                             + SHAPE_HINT + "\n")
    r = gradcli("batch", "-", stdin='{"program": "(z * 2).sum()"}\n'
                                   '{"program": "x * 2", "inputs": {"x": "[1., 2.]"}}\n')
    assert r.returncode == 1
    # the table's last column, its wrapped lines joined
    last = " ".join(line.rsplit("\u2502", 1)[-1].strip() for line in r.stdout.splitlines()[2:])
    assert " ".join(NAME_HINT.split()) in " ".join(last.split())
    assert " ".join(SHAPE_HINT.split()) in " ".join(last.split())


def test_the_session_s_grad_has_its_own_wording():
    r = gradcli("repl", stdin="x = tensor([1., 2.], requires_grad=True)\n:grad x * 2\n")
    assert r.returncode == 1
    assert r.stderr.endswith("RuntimeError: grad can be implicitly created only for scalar outputs\n"
                             "the output has shape [2]: reduce it, e.g. with .sum()\n")
    r = gradcli("repl", stdin="c = tensor([1., 2.])\n:grad (c * c).sum()\n")
    assert r.returncode == 1
    assert r.stderr.endswith("RuntimeError: element 0 of tensors does not require grad and does not have a "
                             "grad_fn\ndefine a leaf in the session, e.g. x = tensor([1., 2.], requires_grad=True)\n")


def test_a_program_s_own_name_error_gets_no_hint_about_inputs():
    # The hint follows the error's code (set where the name is looked up), not its text.
    r = gradcli("grad", "raise NameError(\"name 'q' is not defined\")")
    assert r.returncode == 1 and "NameError: name 'q' is not defined" in r.stderr and "-i q=SPEC" not in r.stderr
    err = EvalError("anything at all", type="NameError")
    err.code, err.subject = "undefined_name", "w"
    assert hints.program_error(err).hint.startswith("pass it with -i w=SPEC")
    assert hints.program_error(EvalError("name 'w' is not defined", type="NameError")).hint is None


def test_backward_hints_follow_the_output_not_the_message():
    torch = pytest.importorskip("torch")
    from gradcli.engine.tensor import Tensor
    import numpy as np

    # the two refusals of torch.autograd.backward, in its order: a non-scalar output, an output without grad
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        (torch.ones(2, requires_grad=True) * 2).backward()
    out = Tensor(np.ones(2, dtype=np.float32))
    err = hints.backward_error(RuntimeError("some other text"), out, None, hints.SESSION)
    assert err.hint == "define a leaf in the session, e.g. x = tensor([1., 2.], requires_grad=True)"
