"""The answers of ``:grad EXPR`` and ``:graph NAME``: a :class:`~gradcli.app.result.GradResult`, as ``gradcli grad``
makes one, computed from the session's variables, for the renderers of ``--format`` and ``--graph tree``.

``:grad`` is a question, not a statement: EXPR runs against a copy of the session's variables (an assignment
in it does not stay), backward keeps the graph (``retain_graph=True``, so the session's tensors can still be
differentiated), and the leaves' ``.grad`` are put back as they were afterwards, so asking twice gives the same
answer. Its gradients are those of one ``backward()`` call from zero, for the session's leaves (tensors that
require grad, defined in the session).
"""

from __future__ import annotations

from ...engine import dtypes
from ...engine.errors import EvalError, GradcliError, InputError
from ...engine.lazy import lazy
from ...language.build import build_program
from ...app.calculator import GradRequest, build_graph, run_output, tensor_info
from ...app.jobs import GradContext, GradJob, run_grad, run_in_workspace
from ...app.result import GradResult, InputInfo

transforms = lazy("gradcli.app.transforms")
symbolic = lazy("gradcli.app.symbolic")  # :diff only (it imports SymPy)
sympy_check = lazy("gradcli.app.sympy_check")  # :diff only


def _evaluate(session, text: str):
    """Run ``text`` against a copy of the session's variables; the value of its last expression, as a Tensor."""
    return run_in_workspace(session, text)


def grad_result(session, text: str) -> GradResult:
    """The ``grad`` command's answer for ``text`` with the session's leaves as the inputs: the application's
    :func:`~gradcli.app.jobs.run_grad` with the session as the workspace (see
    :func:`gradcli.app.jobs.workspace_grad`).

    Raises:
        GradcliSyntaxError: ``text`` does not parse (exit code 2).
        EvalError: it fails, has no numeric output, or its output does not depend on a leaf (PyTorch's
            "element 0 of tensors does not require grad ..."), with a hint; a non-scalar output needs a
            scalar (exit code 1).
    """
    return run_grad(GradJob(GradRequest(program=text, filename="<stdin>")), GradContext(workspace=session))


def diff_result(session, text: str) -> GradResult:
    """``:diff EXPR``: :func:`grad_result` with the gradients as formulas too (``result.symbolic``: a
    :class:`gradcli.app.symbolic.SymbolicResult`, in terms of the session's leaves and other variables).

    Raises:
        GradcliSyntaxError, EvalError: as :func:`grad_result`.
    """
    sympy_check.require_sympy()
    result = grad_result(session, text)
    result.symbolic = symbolic.workspace_formulas(result, text, dict(session.interp.globals),
                                                  dtypes.get_default_dtype().name)
    return result


def graph_result(session, text: str) -> GradResult:
    """The autograd graph under the tensor ``text`` names (or computes), for the tree renderer; nothing runs
    backward.

    Raises:
        GradcliSyntaxError, EvalError: as :func:`grad_result`.
    """
    output = _evaluate(session, text)
    leaves = session.leaves()
    inputs = [InputInfo(name=name, value=tensor_info(t), kind="leaf") for name, t in leaves]
    graph = build_graph(output, {id(t): name for name, t in leaves})
    return GradResult(program=text, output=tensor_info(output), inputs=inputs, calls=[], graph=graph,
                      printed="", default_dtype=dtypes.get_default_dtype().name)


def transform_result(session, text: str, kind: str):
    """``:jacobian EXPR`` / ``:hessian EXPR``: the answer of ``gradcli jacobian``/``hessian`` for ``text`` with
    the session's leaves as the inputs (a :class:`~gradcli.app.transforms.TransformResult`); the session's variables
    and the leaves' ``.grad`` are left as they were.

    Raises:
        InputError: no leaf in the session (exit code 2).
        GradcliSyntaxError, EvalError: as :func:`grad_result`; PyTorch's errors of jacobian/hessian.
    """
    program = build_program(text, "<stdin>")
    leaves = session.leaves()
    if not leaves:
        raise InputError(f":{kind} needs a leaf to differentiate with respect to: define one, e.g. "
                         "x = tensor([1., 2.], requires_grad=True)", type="UsageError")
    interp = session.interp
    saved = interp.globals

    def f(*values):
        interp.globals = dict(saved)
        interp.globals.update({name: v for (name, _), v in zip(leaves, values)})
        try:
            return run_output(interp, program)
        finally:
            interp.globals = saved

    values = tuple(t for _, t in leaves)
    output = f(*values)
    try:
        blocks = transforms.transform_blocks(kind, "reverse", f, values, names=[name for name, _ in leaves])
    except GradcliError:
        raise
    except (RuntimeError, TypeError, ValueError) as e:
        raise EvalError.from_exception(e) from None
    return transforms.TransformResult(kind=kind, output=tensor_info(output.detach()), mode="reverse",
                                      inputs=[(name, tuple(t.shape)) for name, t in leaves], blocks=blocks,
                                      default_dtype=dtypes.get_default_dtype().name)
