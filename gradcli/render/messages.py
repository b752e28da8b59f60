"""The lines ``gradcli grad`` writes to standard error whatever the output format: the warning about NaN and
infinity, and why ``--check`` failed; and :func:`escape_controls`, with which every renderer writes a program's
text (names, strings, error messages): control characters as Python's ``repr`` writes them, never raw to a
terminal."""

from __future__ import annotations

from ..app.result import GradResult, nonfinite
from ..engine.errors import escape_controls  # noqa: F401 - the renderers' one escaping of a program's text


def nonfinite_where(result: GradResult) -> list[str]:
    """The output, inputs and gradients that hold NaN or infinity (``["output", "grad of w"]``), in that order."""
    where = []
    if nonfinite(result.output.value):
        where.append("output")
    where += [f"input {i.name}" for i in result.inputs if nonfinite(i.value.value)]
    where += [f"grad of {i.name}" for i in result.inputs if nonfinite(i.grad)]
    return where


def nonfinite_warning(result: GradResult) -> str | None:
    """A warning naming the output, inputs and gradients that hold NaN or infinity, or None if all are finite."""
    where = nonfinite_where(result)
    if not where:
        return None
    return escape_controls("warning: NaN or infinity in " + ", ".join(where) +
            " (gradcli grad --anomaly names the first op whose backward produces one)")


def check_failure(check) -> str | None:
    """Why ``--check`` failed (the inputs beyond tolerance and their largest difference), or None if it passed.

    Args:
        check: a :class:`gradcli.app.finite_differences.CheckResult`.
    """
    if check.ok:
        return None
    kinks = [k.message(i.name) for i in check.inputs for k in getattr(i, "kinks", ()) if not k.ok]
    if getattr(check, "fails_only_at_kinks", False):
        return ("gradcli: --check failed only at kinks, where central differences cannot check PyTorch's "
                "subgradient (exit 1 all the same): " + "; ".join(kinks))
    bad = ", ".join(f"{i.name} (max abs diff {i.max_abs_diff:.3e})" for i in check.inputs if not i.ok)
    return (f"gradcli: --check failed: gradients differ from finite differences beyond atol={check.atol:g}, "
            f"rtol={check.rtol:g}: {bad}" + ("; of those, at kinks: " + "; ".join(kinks) if kinks else ""))
