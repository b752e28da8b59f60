"""The values a program handles besides tensors and Python's own: module-like namespaces and user functions.

Programs see Tensors, Python numbers, strings, None, lists/tuples/sets, the namespaces ``torch``/``F``
(:class:`Namespace`) and the functions they define with ``def`` (:class:`Function`). :func:`type_name` names
any of them as Python's messages do (``'Tensor'``, ``'function'``, ``'module'``).
"""

from __future__ import annotations

from ..engine.errors import EvalError
from ..engine.tensor import Tensor


class Return(Exception):
    """``return value`` unwinding a program function's body (caught where the function was called)."""

    def __init__(self, value):
        super().__init__()
        self.value = value


class Namespace:
    """A module-like namespace of the language (``torch``, ``torch.nn.functional``): ``name`` as Python
    prints it and ``members`` (name → value), the only attributes a program can read from it."""

    __slots__ = ("name", "members")

    def __init__(self, name: str, members: dict):
        self.name = name
        self.members = members

    def __repr__(self) -> str:
        return f"<module '{self.name}'>"


class LazyNamespace(Namespace):
    """A :class:`Namespace` whose ``members`` are made by ``build()`` when first read (``torch.nn`` and
    ``torch.optim``: their library modules load only when a program names them)."""

    __slots__ = ("build",)

    def __init__(self, name: str, build):
        self.name = name
        self.build = build

    def __getattr__(self, attr):  # called only while the ``members`` slot is still empty
        if attr != "members":
            raise AttributeError(attr)
        self.members = self.build()
        return self.members


class Scope(dict):
    """The variables of a comprehension, generator expression or closure's call: its own names, then
    ``outer`` (the enclosing scope: another Scope or a function's or the program's variables) for the names it
    does not bind."""

    __slots__ = ("outer", "declared", "is_class")

    def __init__(self, outer, declared=None, is_class=False):
        super().__init__()
        self.outer = outer
        self.declared = declared  # a function's global/nonlocal names (name → "global" or "nonlocal"), or None
        self.is_class = is_class  # a class body's namespace (its functions do not close over it)


class Function:
    """A function defined in a program with ``def`` or ``lambda``: its ``params`` (``(name, default expression
    or None)`` pairs, the positional-or-keyword parameters), ``vararg`` (``*args``), ``kwonly`` (pairs after ``*``),
    ``kwarg`` (``**kwargs``), its ``body`` (statements; a lambda's is one ``return``), ``scope`` and ``defaults``
    (the default values, evaluated at the ``def``: one per param then one per keyword-only param, None for a
    parameter without one). ``owner`` is the class whose body defined it (for ``super()``), ``declared`` the
    names of its ``global``/``nonlocal`` statements."""

    __slots__ = ("name", "params", "body", "defaults", "scope", "interpreter", "vararg", "kwonly", "kwarg",
                 "owner", "declared", "generator")

    def __init__(self, name, params, body, defaults, scope=None, interpreter=None, vararg=None, kwonly=None,
                 kwarg=None, declared=None):
        self.name = name
        self.params = params
        self.body = body
        self.defaults = defaults
        self.scope = scope  # the enclosing function's variables for a closure (a nested def, a lambda), else None
        self.interpreter = interpreter  # the interpreter that runs it when library code calls it
        self.vararg = vararg
        self.kwonly = kwonly or ()
        self.kwarg = kwarg
        self.owner = None
        self.declared = declared
        self.generator = False  # its body yields: a call makes a Generator

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


class Generator:
    """What calling a generator function gives: an iterator that runs the function's body up to each
    ``yield`` (in the program's interpreter, as a call of the function: its frame, call depth and steps), and
    ``send(value)``/``close()`` as Python's generators. Exhausted by ``return``."""

    __slots__ = ("interp", "func", "local", "gen", "running")

    def __init__(self, interp, func, local):
        self.interp = interp
        self.func = func
        self.local = local
        self.gen = interp.gen_block(func.body, local)
        self.running = False

    def __iter__(self):
        return self

    def __next__(self):
        return self.send(None)

    def send(self, value):
        """Resume the body with ``value`` as the result of the ``yield`` it stopped at.

        Raises:
            StopIteration: when the body ends (``return``'s value as its value).
            ValueError: Python's message for a generator that resumes itself.
        """
        if self.running:
            raise ValueError("generator already executing")
        interp = self.interp
        if interp.depth >= interp.max_depth:
            raise RecursionError("maximum recursion depth exceeded")
        interp.depth += 1
        interp.frames.append((self.func, self.local))
        self.running = True
        try:
            return self.gen.send(value)
        except Return as r:
            self.gen = iter(())
            raise StopIteration(r.value) from None
        finally:
            self.running = False
            interp.depth -= 1
            interp.frames.pop()

    def close(self):
        """Stop the generator (Python's ``close``)."""
        self.gen.close()

    def __repr__(self) -> str:
        return f"<generator object {self.func.name} at {id(self):#x}>"


class StaticMethod:
    """``@staticmethod``: the function, unbound from instance and class."""

    __slots__ = ("func",)

    def __init__(self, func):
        self.func = func


class ClassMethod:
    """``@classmethod``: the function, bound to the class it is read from."""

    __slots__ = ("func",)

    def __init__(self, func):
        self.func = func


class Property:
    """``@property`` (and ``@name.setter``): reading the attribute calls ``fget``, assigning it ``fset``."""

    __slots__ = ("fget", "fset")

    def __init__(self, fget, fset=None):
        self.fget = fget
        self.fset = fset


class BoundMethod:
    """A function read from an instance (or a classmethod from its class): called with ``obj`` first."""

    __slots__ = ("func", "obj")

    def __init__(self, func, obj):
        self.func = func
        self.obj = obj

    def __call__(self, *args, **kwargs):
        return self.func(self.obj, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<bound method {self.func.name} of {self.obj!r}>"


class Class:
    """A ``class`` of a program: ``name``, ``bases`` (its program classes; ``builtin`` the gradcli base it
    derives from, e.g. torch.autograd.Function, or None), its ``namespace`` (what the body defined) and
    ``mro`` (itself, then its bases' linearization, as Python's C3 gives it for the hierarchies programs use)."""

    __slots__ = ("name", "bases", "namespace", "mro", "builtin", "interpreter", "__weakref__")

    def __init__(self, name, bases, namespace, builtin=None, interpreter=None):
        self.name = name
        self.bases = bases
        self.namespace = namespace
        self.builtin = builtin
        self.interpreter = interpreter
        self.mro = _c3(self)

    def lookup(self, name):
        """The raw value ``name`` has in the first class of the MRO that defines it, or :data:`MISSING`."""
        for c in self.mro:
            ns = c.namespace
            if name in ns:
                return ns[name]
        return MISSING

    def is_subclass(self, other) -> bool:
        return other in self.mro

    def __call__(self, *args, **kwargs):
        return self.interpreter.call_value(self, list(args), kwargs, self.interpreter.call_node)

    def __repr__(self) -> str:
        return f"<class '__main__.{self.name}'>"


#: "No such attribute" from :meth:`Class.lookup` (None is a value a class may hold).
MISSING = object()


def _c3(cls) -> list:
    """Python's C3 linearization of ``cls`` over its program bases.

    Raises:
        TypeError: Python's message when the bases admit no consistent order.
    """
    seqs = [list(b.mro) for b in cls.bases] + [list(cls.bases)]
    out = [cls]
    while True:
        seqs = [s for s in seqs if s]
        if not seqs:
            return out
        for s in seqs:
            head = s[0]
            if not any(head in t[1:] for t in seqs):
                break
        else:
            raise TypeError("Cannot create a consistent method resolution order (MRO) for bases "
                            + ", ".join(b.name for b in cls.bases))
        out.append(head)
        for s in seqs:
            if s[0] is head:
                del s[0]


class Instance:
    """An object of a program's class: its ``cls`` and its attributes (``attrs``). Python's operators,
    ``len``, ``iter``, ``str``, ``in``, ``bool`` and calls reach the special methods the class defines
    (``__add__``, ``__len__``, ...) through the program's interpreter; without them they behave as for
    Python's ``object``."""

    # base: the object of gradcli's base class behind it (a torch.nn module for ``class Net(nn.Module)``), whose
    # behaviour the special methods fall back to; None for other classes
    __slots__ = ("cls", "attrs", "base", "__weakref__")

    def __init__(self, cls):
        self.cls = cls
        self.attrs = {}
        self.base = None

    def special(self, name, *args):
        """Call the special method ``name`` the class defines with ``args``; :data:`MISSING` when it has none."""
        f = self.cls.lookup(name)
        if f is MISSING:
            return MISSING
        interp = self.cls.interpreter
        return interp.call_value(interp.bind(f, self, self.cls), list(args), {}, interp.call_node)

    def __repr__(self) -> str:
        r = self.special("__repr__")
        if r is MISSING and self.base is not None:
            return repr(self.base)
        if r is MISSING:
            return f"<__main__.{self.cls.name} object at {id(self):#x}>"
        if not isinstance(r, str):
            raise TypeError(f"__repr__ returned non-string (type {type_name(r)})")
        return r

    def __str__(self) -> str:
        r = self.special("__str__")
        if r is MISSING:
            return repr(self)
        if not isinstance(r, str):
            raise TypeError(f"__str__ returned non-string (type {type_name(r)})")
        return r

    def __call__(self, *args, **kwargs):
        interp = self.cls.interpreter
        return interp.call_value(self, list(args), kwargs, interp.call_node)

    def __len__(self):
        r = self.special("__len__")
        if r is MISSING and self.base is not None and hasattr(type(self.base), "__len__"):
            return len(self.base)
        if r is MISSING:
            raise TypeError(f"object of type '{self.cls.name}' has no len()")
        return r

    def __bool__(self):
        r = self.special("__bool__")
        if r is not MISSING:
            return r
        r = self.special("__len__")
        return True if r is MISSING else r != 0

    def __getitem__(self, key):
        r = self.special("__getitem__", key)
        if r is MISSING and self.base is not None and hasattr(type(self.base), "__getitem__"):
            return self.base[key]
        if r is MISSING:
            raise TypeError(f"'{self.cls.name}' object is not subscriptable")
        return r

    def __setitem__(self, key, value):
        if self.special("__setitem__", key, value) is MISSING:
            raise TypeError(f"'{self.cls.name}' object does not support item assignment")

    def __delitem__(self, key):
        if self.special("__delitem__", key) is MISSING:
            raise TypeError(f"'{self.cls.name}' object does not support item deletion")

    def __iter__(self):
        r = self.special("__iter__")
        if r is not MISSING:
            return iter(r) if not isinstance(r, Instance) else r
        if self.base is not None and hasattr(type(self.base), "__iter__"):
            return iter(self.base)
        if self.cls.lookup("__getitem__") is MISSING:
            raise TypeError(f"'{self.cls.name}' object is not iterable")
        return _SequenceIterator(self)

    def __next__(self):
        try:
            r = self.special("__next__")
        except EvalError as err:  # the program's ``raise StopIteration`` ends a loop over the object
            if err.type == "StopIteration":
                raise StopIteration from None
            raise
        if r is MISSING:
            raise TypeError(f"'{self.cls.name}' object is not an iterator")
        return r

    def __contains__(self, item):
        r = self.special("__contains__", item)
        if r is MISSING:
            return any(v is item or v == item for v in self)
        return bool(r)

    def __eq__(self, other):
        r = self.special("__eq__", other)
        return (self is other) if r is MISSING else r

    def __ne__(self, other):
        r = self.special("__ne__", other)
        if r is MISSING:
            eq = self.__eq__(other)
            return NotImplemented if eq is NotImplemented else not eq
        return r

    def __hash__(self):
        r = self.special("__hash__")
        if r is MISSING:
            if self.cls.lookup("__eq__") is not MISSING:
                raise TypeError(f"unhashable type: '{self.cls.name}'")
            return id(self) >> 4
        return r

    def __enter__(self):
        r = self.special("__enter__")
        if r is MISSING:
            raise TypeError(f"'{self.cls.name}' object does not support the context manager protocol")
        return r

    def __exit__(self, *exc):
        r = self.special("__exit__", *exc)
        return False if r is MISSING else r

    def _binary(name):  # noqa: N805 - builds the methods below
        def method(self, other):
            r = self.special(name, other)
            return NotImplemented if r is MISSING else r
        method.__name__ = name
        return method

    def _unary(name, what):  # noqa: N805
        def method(self):
            r = self.special(name)
            if r is MISSING:
                raise TypeError(f"bad operand type for {what}: '{self.cls.name}'")
            return r
        method.__name__ = name
        return method

    __lt__ = _binary("__lt__")
    __le__ = _binary("__le__")
    __gt__ = _binary("__gt__")
    __ge__ = _binary("__ge__")
    __add__ = _binary("__add__")
    __radd__ = _binary("__radd__")
    __sub__ = _binary("__sub__")
    __rsub__ = _binary("__rsub__")
    __mul__ = _binary("__mul__")
    __rmul__ = _binary("__rmul__")
    __truediv__ = _binary("__truediv__")
    __rtruediv__ = _binary("__rtruediv__")
    __floordiv__ = _binary("__floordiv__")
    __rfloordiv__ = _binary("__rfloordiv__")
    __mod__ = _binary("__mod__")
    __rmod__ = _binary("__rmod__")
    __pow__ = _binary("__pow__")
    __rpow__ = _binary("__rpow__")
    __matmul__ = _binary("__matmul__")
    __rmatmul__ = _binary("__rmatmul__")
    __neg__ = _unary("__neg__", "unary -")
    __pos__ = _unary("__pos__", "unary +")
    __abs__ = _unary("__abs__", "abs()")
    __float__ = _unary("__float__", "float()")
    __int__ = _unary("__int__", "int()")
    __index__ = _unary("__index__", "index")
    del _binary, _unary


class _SequenceIterator:
    """``iter(obj)`` for a class with ``__getitem__`` only: indexes 0, 1, ... until IndexError, as Python."""

    __slots__ = ("obj", "i")

    def __init__(self, obj):
        self.obj, self.i = obj, 0

    def __iter__(self):
        return self

    def __next__(self):
        try:
            v = self.obj[self.i]
        except EvalError as err:  # the program's __getitem__ raised IndexError: the end of the sequence
            if err.type in ("IndexError", "StopIteration"):
                raise StopIteration from None
            raise
        self.i += 1
        return v


class Super:
    """``super()`` in a method of ``cls`` called on ``obj``: attributes from the classes after ``cls`` in
    ``obj``'s MRO."""

    __slots__ = ("cls", "obj")

    def __init__(self, cls, obj):
        self.cls = cls
        self.obj = obj

    def __repr__(self) -> str:
        return f"<super: <class '{self.cls.name}'>, <{self.obj.cls.name if isinstance(self.obj, Instance) else self.obj.name} object>>"


def type_name(v) -> str:
    """The type of ``v`` as Python's messages name it (``'Tensor'``, ``'function'``, ``'module'``, ``'int'``)."""
    if isinstance(v, Tensor):
        return "Tensor"
    if isinstance(v, Function):
        return "function"
    if isinstance(v, Instance):
        return v.cls.name
    if isinstance(v, Class):
        return "type"
    if isinstance(v, BoundMethod):
        return "method"
    if isinstance(v, Generator):
        return "generator"
    if isinstance(v, Namespace):
        return "module"
    return type(v).__name__
