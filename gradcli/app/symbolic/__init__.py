"""The gradient as a formula (``gradcli grad --symbolic``), checked against autograd at the inputs.

:func:`symbolic_gradients` runs the program again, traced (:mod:`.trace`), at the inputs of a computed
:class:`~gradcli.app.result.GradResult`; builds each input's gradient from the ops' symbolic rules (SymPy for
the algebra, :mod:`.algebra`); writes it in Unicode, LaTeX and as a PyTorch expression (:mod:`.printing`); and
evaluates it at the inputs with numpy (:mod:`.evaluate`) to compare with the autograd gradient. SymPy is
imported only here, and this package only for ``--symbolic``.
"""

from .gradients import Formula, SymbolicResult, symbolic_gradients, trace_program, workspace_formulas  # noqa: F401
from .hessian import symbolic_hessian  # noqa: F401
