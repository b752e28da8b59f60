"""The hints printed under the errors of a gradient request, in one place.

A hint is chosen by the error's type and a code that names the situation (never by reading the message): the
code comes from the error itself (:attr:`gradcli.engine.errors.GradcliError.code`, set where the error is
made) or from what the pipeline knows when backward fails (the output does not require grad; it has more than
one element and no ``--gradient`` was given: the two cases of torch.autograd.backward's ``_make_grads``). Each
front end has its own wording, because each offers a different remedy: ``-i``/``--gradient`` on the command
line and in batch entries, a leaf defined in the interactive session.
"""

from __future__ import annotations

from ..engine.errors import EvalError, GradcliError

#: Where the request comes from: the command line and batch entries ("command"), or the session ("session").
COMMAND, SESSION = "command", "session"

#: (error type, code, where) → the hint, a ``str.format`` template of the error's fields.
HINTS = {
    ("NameError", "undefined_name", COMMAND):
        "pass it with -i {subject}=SPEC (an input that requires grad, e.g. -i \"{subject}=[1., 2.]\") or -c "
        "{subject}=SPEC (a constant)",
    ("RuntimeError", "output_without_grad", COMMAND): "declare an input that requires grad with -i NAME=SPEC",
    ("RuntimeError", "output_without_grad", SESSION):
        "define a leaf in the session, e.g. x = tensor([1., 2.], requires_grad=True)",
    ("RuntimeError", "non_scalar_output", COMMAND):
        "the output has shape {shape}: pass --gradient SPEC of that shape (the v of the vector-Jacobian "
        "product), or reduce it, e.g. with .sum()",
    ("RuntimeError", "non_scalar_output", SESSION): "the output has shape {shape}: reduce it, e.g. with .sum()",
}


def add_hint(err: GradcliError, code: str | None, where: str = COMMAND, **fields) -> GradcliError:
    """Give ``err`` the hint of (its type, ``code``, ``where``) when it has none yet and :data:`HINTS` has one;
    ``fields`` (and the error's ``subject``) fill in the template. Returns ``err``."""
    template = HINTS.get((err.type, code, where))
    if template is not None and err.hint is None:
        err.hint = template.format(subject=err.subject, **fields)
    return err


def program_error(err: GradcliError, where: str = COMMAND) -> GradcliError:
    """A failure of the program's run with the hint of its own code (a name read but never defined: how to
    give it). Returns ``err``."""
    return add_hint(err, err.code, where)


def backward_error(exc: Exception, output, gradient, where: str = COMMAND) -> EvalError:
    """The :class:`EvalError` of an engine exception raised by ``output.backward(gradient)``, with the hint for
    why backward refused: the output does not require grad, or it is not a single element and no gradient was
    given (torch.autograd.backward checks these first, in this order)."""
    err = EvalError.from_exception(exc)
    code = None
    if not output.requires_grad:
        code = "output_without_grad"
    elif gradient is None and output.data.size != 1:
        code = "non_scalar_output"
    return add_hint(err, code, where, shape=list(output.data.shape))
