"""SciPy's special functions for :mod:`gradcli.ops.elementwise.special`, in a module of their own so that
``lazy("gradcli.ops.elementwise._scipy_special")`` defers SciPy until a special function first runs (a lazy()
of ``scipy.special`` itself would import the scipy package at start-up, to find the submodule)."""

from scipy import special as functions  # noqa: F401  (read as _scipy_special.functions.<name>)
