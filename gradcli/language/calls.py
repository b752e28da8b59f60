"""Calls and the program's functions and classes: the :class:`Calls` mixin of :class:`~.interpreter.Interpreter`.

A call expression (positional, ``*args``, keyword and ``**kwargs`` arguments), calling any value a program may
call (its functions, bound methods, classes, objects with ``__call__``, ``super()``, gradcli's and Python's
callables), binding arguments to a program function's parameters and running its body (the ``call_depth``
limit), making functions (``def``, ``lambda``) and classes (``class``), and the attributes of the program's
instances, classes and ``super()`` objects as Python reads and writes them.
"""

from __future__ import annotations

from ..engine import limits
from ..engine.errors import GradcliError
from ..engine.tensor import Tensor
from ..ops import REGISTRY
from ..ops.core import out_arg
from ..ops.core.declare import numpy_keywords
from . import builtins
from .safety import admit, materialize
from .statements import program_error
from . import nodes as n
from .values import (MISSING, BoundMethod, Class, ClassMethod, Function, Generator, Instance, Namespace,
                     Property, Scope, StaticMethod, Super, type_name)
from .values import Return as _Return

_PyFunction = type(lambda: None)  # a Python function a decorator returned (torch.no_grad()(f)): binds as a method


def _keyword_hint(func, message: str) -> str | None:
    """did-you-mean for ``f() got an unexpected keyword argument 'dimm'``, among ``func``'s parameters."""
    import inspect
    import re

    m = re.search(r"unexpected keyword argument '(\w+)'", message)
    if m is None:
        return None
    # a Tensor method (x.sum) is the op of its name; an op's parameters are its forward's
    target = REGISTRY.get(getattr(func, "__name__", ""), func) if inspect.ismethod(func) else func
    target = getattr(target, "forward", None) or target
    try:
        params = [p.name for p in inspect.signature(target).parameters.values()
                  if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    except (TypeError, ValueError):
        return None
    return builtins.did_you_mean(m.group(1), params)


class Calls:
    """How the interpreter calls values and makes and reads the program's functions, classes and objects (a
    mixin of the Interpreter)."""

    def call(self, e: n.Call, env):
        func = self.eval_expr(e.func, env)
        args = []
        for a in e.args:
            if type(a) is not n.Starred:
                args.append(self.eval_expr(a, env))
                continue
            star = self.eval_expr(a.value, env)
            try:
                args.extend(materialize(star, "the * arguments"))
                admit(len(args), "the arguments")
            except (TypeError, GradcliError) as exc:
                raise self.error(exc, a.value) from None
        kwargs = {k: self.eval_expr(v, env) for k, v in e.kwargs}
        for m in e.kwstars or ():
            mapping = self.eval_expr(m, env)
            if not isinstance(mapping, dict):
                raise self.error(TypeError(f"argument after ** must be a mapping, not {type_name(mapping)}"), m)
            for k, v in mapping.items():
                if not isinstance(k, str):
                    raise self.error(TypeError("keywords must be strings"), m)
                if k in kwargs:
                    raise self.error(TypeError(f"got multiple values for keyword argument '{k}'"), m)
                kwargs[k] = v
        if type(func) is Function:
            return self.call_function(func, args, kwargs, e)
        return self.call_value(func, args, kwargs, e)

    def call_value(self, func, args: list, kwargs: dict, node):
        """Call any value a program may call: its functions, bound methods, classes (a new instance), objects
        whose class defines ``__call__``, ``super()``, and gradcli's and Python's callables.

        Raises:
            EvalError: what the call raised, at ``node``.
        """
        t = type(func)
        if t is Function:
            return self.call_function(func, args, kwargs, node)
        if t is BoundMethod:
            return self.call_value(func.func, [func.obj] + args, kwargs, node)
        if t is Class:
            return self.instantiate(func, args, kwargs, node)
        if t is Instance:
            f = func.cls.lookup("__call__")
            if f is MISSING and func.base is not None and callable(func.base):  # e.g. a torch.nn module's
                return self.call_value(func.base, args, kwargs, node)
            if f is MISSING:
                raise self.error(TypeError(f"'{func.cls.name}' object is not callable"), node)
            return self.call_value(self.bind(f, func, func.cls), args, kwargs, node)
        if func is builtins.SUPER:
            return self.make_super(args, node)
        if t is StaticMethod or t is ClassMethod:
            return self.call_value(func.func, args, kwargs, node)
        if not callable(func) or isinstance(func, (Tensor, Namespace, str, list, tuple)):
            raise self.error(TypeError(f"'{type_name(func)}' object is not callable"), node)
        outer, self.call_node = self.call_node, node  # where a warning of this call points
        if kwargs:
            kwargs = numpy_keywords(func, kwargs)  # x.sum(axis=0), as PyTorch's argument parser accepts it
        try:
            if "out" in kwargs and out_arg.takes_out(func):  # torch.f(..., out=t): the result written into t
                return out_arg.call_with_out(func, args, kwargs)
            return func(*args, **kwargs)
        except GradcliError as exc:  # e.g. a LimitError of an op: at this call, unless it has a position
            raise exc.with_position(**self._where(node))
        except BrokenPipeError:  # a closed stdout ends the run (see cli.main), not an error here
            raise
        except RecursionError:
            raise self.error(RecursionError("maximum recursion depth exceeded"), node) from None
        except MemoryError as exc:
            raise limits.memory_error(exc).with_position(**self._where(node)) from None
        except Exception as exc:
            err = program_error(self, exc, node)
            if err is exc:  # a failed write of the output: the command reports it
                raise
            if isinstance(exc, TypeError) and "unexpected keyword argument" in err.message and not err.hint:
                err.hint = _keyword_hint(func, err.message)
            raise err from None
        finally:
            self.call_node = outer

    def call_function(self, f: Function, args, kwargs, node):
        names = [p for p, _ in f.params]
        npos = len(names)
        if len(args) > npos and f.vararg is None:
            given = len(args)
            raise self.error(TypeError(f"{f.name}() takes {npos} positional argument{'s' if npos != 1 else ''} "
                                       f"but {given} {'were' if given != 1 else 'was'} given"), node)
        local = dict(zip(names, args))
        if f.scope is not None or f.declared:  # a closure: its enclosing function's variables behind its own
            scope = Scope(f.scope if f.scope is not None else self.globals, f.declared)
            scope.update(local)
            local = scope
        if f.vararg is not None:
            local[f.vararg] = tuple(args[npos:])
        extra = {} if f.kwarg is not None else None
        kwonly = f.kwonly
        for k, v in kwargs.items():
            if k in local and k != f.vararg:
                raise self.error(TypeError(f"{f.name}() got multiple values for argument '{k}'"), node)
            if k in names or any(k == kn for kn, _ in kwonly):
                local[k] = v
            elif extra is not None:
                extra[k] = v
            else:
                raise self.error(TypeError(f"{f.name}() got an unexpected keyword argument '{k}'"), node)
        if extra is not None:
            local[f.kwarg] = extra
        for (p, default_node), default in zip(list(f.params) + list(kwonly), f.defaults):
            if p not in local:
                if default_node is None:
                    what = "positional" if any(p == q for q in names) else "keyword-only"
                    raise self.error(TypeError(f"{f.name}() missing 1 required {what} argument: '{p}'"), node)
                local[p] = default
        if self.depth >= self.max_depth:
            err = limits.exceeded("call_depth", f"maximum recursion depth exceeded: {f.name}() nests calls more "
                                                f"than {self.max_depth:,} deep", self.max_depth)
            err.type = "RecursionError"
            raise err.with_position(**self._where(node))
        if f.generator:
            return Generator(self, f, local)
        self.depth += 1
        self.frames.append((f, local))
        try:
            self.exec_block(f.body, local)
        except _Return as r:
            return r.value
        finally:
            self.depth -= 1
            self.frames.pop()
        return None

    def make_function(self, name, params, body, env, node=None) -> Function:
        """A ``def`` or ``lambda`` (``node``, for its ``*args``, keyword-only and ``**kwargs`` parameters):
        defaults evaluated now; a closure over ``env`` unless defined at top level (a class body's functions
        close over what encloses the class, as Python's methods do)."""
        kwonly = (node.kwonly if node is not None else None) or []
        defaults = [None if d is None else self.eval_expr(d, env) for _, d in list(params) + list(kwonly)]
        scope = env
        while type(scope) is Scope and scope.is_class:
            scope = scope.outer
        f = Function(name, params, body, defaults, None if scope is self.globals else scope, self,
                     node.vararg if node is not None else None, kwonly,
                     node.kwarg if node is not None else None,
                     getattr(node, "declared", None))  # noqa: B009 - a Lambda node has no declared names
        f.generator = getattr(node, "generator", False)  # noqa: B009 - nor a generator flag
        return f

    def decorate(self, value, decorators: list, node):
        """Apply ``@decorators`` (already evaluated, top to bottom) to ``value``, the last one first."""
        for d in reversed(decorators):
            value = self.call_value(d, [value], {}, node)
        return value

    def make_class(self, s: n.ClassDef, env) -> Class:
        """Run a ``class`` body in a namespace of its own and make the :class:`Class` of what it defined.

        Raises:
            EvalError: a base that is not a class (TypeError), or bases with no consistent MRO.
        """
        bases, builtin = [], None
        for node in s.bases:
            b = self.eval_expr(node, env)
            if isinstance(b, Class):
                bases.append(b)
                builtin = builtin or b.builtin
            elif b is builtins.OBJECT:
                continue
            elif builtins.is_builtin_base(b):
                builtin = b
            else:
                raise self.error(TypeError(f"gradcli classes derive from classes of the program, object or "
                                           f"{builtins.BUILTIN_BASE_NAMES}; got a '{type_name(b)}'"), node)
        body = Scope(env, is_class=True)
        self.exec_block(s.body, body)
        admit(len(body), f"the class {s.name}")
        try:
            cls = Class(s.name, bases, dict(body), builtin, self)
        except TypeError as exc:
            raise self.error(exc, s) from None
        for value in cls.namespace.values():
            for f in (value, getattr(value, "func", None), getattr(value, "fget", None),  # noqa: B009
                      getattr(value, "fset", None)):  # noqa: B009 - the wrappers of values.py
                if isinstance(f, Function) and f.owner is None:
                    f.owner = cls
                    f.name = f"{s.name}.{f.name}"
        return cls

    def instantiate(self, cls: Class, args: list, kwargs: dict, node):
        """``Cls(args)``: a new instance, initialised by the ``__init__`` its MRO defines (or gradcli's base
        class's, e.g. torch.nn.Module's)."""
        if cls.builtin is not None and builtins.builtin_instantiate(cls.builtin) is not None:
            obj = builtins.builtin_instantiate(cls.builtin)(cls)
        else:
            obj = Instance(cls)
        init = cls.lookup("__init__")
        if init is MISSING and obj.base is not None:
            # no __init__ of the program's: its torch.nn base class's (class Wide(nn.Linear): pass; Wide(2, 3))
            self.call_value(builtins.base_init(cls.builtin, obj), args, kwargs, node)
            return obj
        if init is MISSING:
            if args or kwargs:
                raise self.error(TypeError(f"{cls.name}() takes no arguments"), node)
            return obj
        result = self.call_value(self.bind(init, obj, cls), args, kwargs, node)
        if result is not None:
            raise self.error(TypeError(f"__init__() should return None, not '{type_name(result)}'"), node)
        return obj

    def make_super(self, args: list, node) -> Super:
        """``super()`` in a method (the class that defined it, and its first argument), or ``super(Cls, obj)``.

        Raises:
            EvalError: RuntimeError as Python's outside a method.
        """
        if args:
            if len(args) != 2 or not isinstance(args[0], Class):
                raise self.error(TypeError("super() takes a class and an object: super(Cls, self)"), node)
            target = args[1]
            cls = target.cls if isinstance(target, Instance) else target
            if not isinstance(cls, Class) or args[0] not in cls.mro:  # Python's check and message
                raise self.error(TypeError("super(type, obj): obj must be an instance or subtype of type"), node)
            return Super(args[0], target)
        for f, local in reversed(self.frames):
            if f.owner is not None and f.params:
                return Super(f.owner, local[f.params[0][0]])
            break
        raise self.error(RuntimeError("super(): no arguments"), node)

    def bind(self, value, obj, cls):
        """A class attribute as read from ``obj`` (an instance, or the class itself when ``obj`` is None):
        functions become bound methods, ``classmethod`` binds ``cls``, ``staticmethod`` unwraps, ``property``
        calls its getter (on an instance)."""
        t = type(value)
        if t is Function or t is _PyFunction:
            return value if obj is None else BoundMethod(value, obj)
        if t is StaticMethod:
            return value.func
        if t is ClassMethod:
            return BoundMethod(value.func, cls)
        if t is Property:
            if obj is None:
                return value
            return self.call_value(value.fget, [obj], {}, self.call_node)
        return value

    def object_attribute(self, obj, name: str, node):
        """``obj.name`` for a program's instance, class or ``super()``: the instance's own attributes, then the
        class's (through the MRO; functions bound), as Python reads them.

        Raises:
            EvalError: AttributeError with Python's message.
        """
        t = type(obj)
        if t is Instance:
            if name in obj.attrs:
                return obj.attrs[name]
            value = obj.cls.lookup(name)
            if value is not MISSING:
                return self.bind(value, obj, obj.cls)
            found, value = builtins.builtin_attribute(obj, name)
            if found:
                return value
            raise self.error(AttributeError(f"'{obj.cls.name}' object has no attribute '{name}'"), node)
        if t is Class:
            value = obj.lookup(name)
            if value is not MISSING:
                return self.bind(value, None, obj)
            if name == "__name__":
                return obj.name
            found, value = builtins.builtin_attribute(obj, name)
            if found:
                return value
            raise self.error(AttributeError(f"type object '{obj.name}' has no attribute '{name}'"), node)
        # super(): the classes after obj.cls in the MRO of the object's class
        target = obj.obj
        cls = target.cls if isinstance(target, Instance) else target
        mro = cls.mro
        start = mro.index(obj.cls) + 1 if obj.cls in mro else len(mro)
        for c in mro[start:]:
            if name in c.namespace:
                return self.bind(c.namespace[name], target if isinstance(target, Instance) else None, cls)
        if name == "__init__":  # object.__init__ (or the gradcli base's): nothing to do
            return builtins.base_init(cls.builtin, target)
        found, value = builtins.builtin_attribute(target, name, through_super=True)
        if found:
            return value
        raise self.error(AttributeError(f"'super' object has no attribute '{name}'"), node)

    def set_attribute(self, obj, name, value, node):
        if type(obj) is Instance:
            prop = obj.cls.lookup(name)
            if type(prop) is Property:
                if prop.fset is None:
                    raise self.error(AttributeError(f"property '{name}' of '{obj.cls.name}' object has no "
                                                    "setter"), node)
                self.call_value(prop.fset, [obj, value], {}, node)
                return
            try:
                if obj.base is not None and builtins.set_base_attribute(obj, name, value):
                    return
                builtins.set_instance_attribute(obj, name, value)
            except Exception as e:
                raise self.error(e, node) from None
            return
        if type(obj) is Class:
            obj.namespace[name] = value
            return
        try:
            builtins.write_attribute(obj, name, value)
        except Exception as e:
            raise self.error(e, node) from None
