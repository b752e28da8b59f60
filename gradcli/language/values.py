"""The values a program handles besides tensors and Python's own: module-like namespaces and user functions.

Programs see Tensors, Python numbers, strings, None, lists/tuples/sets, the namespaces ``torch``/``F``
(:class:`Namespace`) and the functions they define with ``def`` (:class:`Function`). :func:`type_name` names
any of them as Python's messages do (``'Tensor'``, ``'function'``, ``'module'``).
"""

from __future__ import annotations

from ..tensor import Tensor


class Namespace:
    """A module-like namespace of the language (``torch``, ``torch.nn.functional``): ``name`` as Python
    prints it and ``members`` (name → value), the only attributes a program can read from it."""

    __slots__ = ("name", "members")

    def __init__(self, name: str, members: dict):
        self.name = name
        self.members = members

    def __repr__(self) -> str:
        return f"<module '{self.name}'>"


class Scope(dict):
    """The variables of a comprehension, generator expression or closure's call: its own names, then
    ``outer`` (the enclosing scope: another Scope or a function's or the program's variables) for the names it
    does not bind."""

    __slots__ = ("outer",)

    def __init__(self, outer):
        super().__init__()
        self.outer = outer


class Function:
    """A function defined in a program with ``def``: its ``params`` (``(name, default expression or None)``
    pairs), its ``body`` (statements; a lambda's is one ``return``), ``scope`` and ``defaults`` (the default values, evaluated at the ``def``, None for a
    parameter without one)."""

    __slots__ = ("name", "params", "body", "defaults", "scope", "interpreter")

    def __init__(self, name, params, body, defaults, scope=None, interpreter=None):
        self.name = name
        self.params = params
        self.body = body
        self.defaults = defaults
        self.scope = scope  # the enclosing function's variables for a closure (a nested def, a lambda), else None
        self.interpreter = interpreter  # the interpreter that runs it when library code calls it

    def __call__(self, *args, **kwargs):
        """Called by library code given the function (``torch.autograd.functional.jacobian(f, x)``): run by the
        program's own interpreter, with its limits and error positions.

        Raises:
            TypeError: for a function without an interpreter (never made by a running program).
        """
        if self.interpreter is None:
            raise TypeError(f"'{self.name}' cannot be called outside its program")
        return self.interpreter.call_function(self, list(args), kwargs, self.interpreter.call_node)

    def __repr__(self) -> str:
        return f"<function {self.name} at {id(self):#x}>"


def type_name(v) -> str:
    """The type of ``v`` as Python's messages name it (``'Tensor'``, ``'function'``, ``'module'``, ``'int'``)."""
    if isinstance(v, Tensor):
        return "Tensor"
    if isinstance(v, Function):
        return "function"
    if isinstance(v, Namespace):
        return "module"
    return type(v).__name__
