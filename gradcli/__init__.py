"""gradcli: a command-line gradient calculator, and the reverse-mode autograd engine behind it.

As a library it reads like PyTorch::

    import gradcli as G
    x = G.tensor([1., 2.], requires_grad=True)
    (x * x).sum().backward()
    print(x.grad)            # tensor([2., 4.])

``G.<op>`` for every op of the table under PyTorch's names (``G.relu``, ``G.matmul``, ...), the creation
functions, ``G.no_grad``/``G.enable_grad``, ``G.grad`` (torch.autograd.grad) and ``G.backward``.

The default dtype, the random generator (``G.manual_seed``), the limits (``gradcli.engine.limits.configure``), grad
mode and anomaly mode belong to the active :class:`RunContext`; ``with G.RunContext(dtype="float64", seed=0):``
runs a block in a context of its own and restores the previous one after it.

The engine is imported on first use of one of these names (PEP 562 module ``__getattr__``), so that the
``gradcli`` command's ``--help`` and its other paths that compute nothing start without numpy and the op table.
"""

import sys as _sys
import types as _types

__version__ = "0.1.0"

_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
            "bool": "bool"}


def _submodules() -> frozenset:
    import os

    here = __path__[0]
    return frozenset(n[:-3] if n.endswith(".py") else n for n in os.listdir(here)
                     if n.endswith(".py") or os.path.isfile(os.path.join(here, n, "__init__.py")))


_SUBMODULES = _submodules()


def _engine() -> dict:
    """Import the engine and put its public names into this module (done once)."""
    from .engine import autograd, context, dtypes, tensor  # here, not at the top: --help starts without numpy
    from .ops import MEMORY_FORMATS, REGISTRY  # here, not at the top: the op table loads on first use of a name

    names = {k: v for k, v in REGISTRY.items() if not k.startswith("_")}
    names.update(MEMORY_FORMATS)  # torch.contiguous_format, torch.channels_last, ...
    names.update(autograd=autograd, dtypes=dtypes, backward=autograd.backward, enable_grad=autograd.enable_grad,
                 grad=autograd.grad, is_grad_enabled=autograd.is_grad_enabled, no_grad=autograd.no_grad,
                 set_grad_enabled=autograd.set_grad_enabled, RunContext=context.RunContext, Size=tensor.Size,
                 Tensor=tensor.Tensor, get_default_dtype=dtypes.get_default_dtype,
                 set_default_dtype=dtypes.set_default_dtype)
    names.update(float16=dtypes.float16, float32=dtypes.float32, float64=dtypes.float64, int8=dtypes.int8,
                 int16=dtypes.int16, int32=dtypes.int32, int64=dtypes.int64, uint8=dtypes.uint8,
                 bool=dtypes.bool_)
    names.update({alias: names[target] for alias, target in _ALIASES.items()})
    import math  # torch.pi, torch.e, torch.inf, torch.nan (Python floats, as in torch)

    names.update(pi=math.pi, e=math.e, inf=math.inf, nan=math.nan)
    from .api import linalg, special  # torch.linalg's and torch.special's namespaces, loaded with the op table

    names.update(linalg=linalg, special=special)
    globals().update(names)
    return names


def _namespace(name: str):
    """``G.nn``, ``G.optim`` and ``G.func`` (torch.nn, torch.optim, torch.func), imported on first use."""
    if name == "nn":
        from .api import nn as module  # torch.nn, loaded on first use of G.nn (PEP 562)
    elif name == "optim":
        from .api import optim as module  # torch.optim, loaded on first use of G.optim (PEP 562)
    else:
        from .api import func as module  # torch.func, loaded on first use of G.func (PEP 562)
    globals()[name] = module
    return module


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    if name in ("nn", "optim", "func"):
        return _namespace(name)
    if name in _SUBMODULES:
        # ``from . import engine`` before gradcli.engine is loaded: no such attribute yet, and the import system
        # then imports the submodule (without the engine).
        raise AttributeError(f"module 'gradcli' has no attribute {name!r}")
    names = globals().get("_ENGINE")
    if names is None:
        if globals().get("_LOADING"):  # a submodule the engine imports while it loads
            raise AttributeError(f"module 'gradcli' has no attribute {name!r}")
        globals()["_LOADING"] = True
        try:
            names = globals()["_ENGINE"] = _engine()
        finally:
            globals()["_LOADING"] = False
    try:
        return names[name]
    except KeyError:
        raise AttributeError(f"module 'gradcli' has no attribute {name!r}") from None


def __dir__():
    if "_ENGINE" not in globals():
        globals()["_ENGINE"] = _engine()
    return sorted(globals())
