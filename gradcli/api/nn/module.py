"""``torch.nn.Module``: the base class of layers and models, as PyTorch 2.13's ``torch/nn/modules/module.py``.

Assigning a :class:`~gradcli.api.nn.parameter.Parameter` or a Module to an attribute registers it (in
``_parameters`` / ``_modules``, in assignment order); ``register_buffer`` registers a buffer. Calling a module
runs its forward pre-hooks, ``forward``, its forward hooks and (with full backward hooks) wraps inputs and output
in ``BackwardHookFunctionBackward`` nodes, as PyTorch does. ``parameters()``, ``named_parameters()``,
``children()``, ``modules()``, ``state_dict()``, ``zero_grad()``, ``train()``/``eval()``, ``requires_grad_()``,
``apply()`` and ``print(model)`` follow PyTorch.

A module made for a program's class (``class Net(nn.Module)`` in a ``gradcli run`` program) holds its program
object as ``_owner`` (what the program sees: :meth:`Module._face` hands it out wherever PyTorch would hand out
the module), its class name as ``_name`` and the program's ``forward`` as ``_forward``; gradcli.language sets
them, this module only reads them.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ...engine import autograd, dtypes, limits
from ...engine.hooks import RemovableHandle  # (module hooks and tensor hooks share the engine's handle)
from ...engine.tensor import Tensor, is_parameter
from .naming import TorchClass
from .hooks import BackwardHookState


def _addindent(s: str, n: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * n + line for line in lines)


def core_of(value):
    """The Module behind ``value``: a Module itself, or a program object whose class derives one (its
    ``base``), else None."""
    if isinstance(value, Module):
        return value
    base = getattr(value, "base", None) if type(value).__name__ == "Instance" else None
    return base if isinstance(base, Module) else None


class Module(metaclass=TorchClass):
    """``torch.nn.Module``: see the module's docs. Subclasses define ``forward`` (and may define
    ``extra_repr``)."""

    #: The attributes a program may read besides the registered parameters, buffers and submodules.
    program_attributes = (
        "training", "forward", "parameters", "named_parameters", "buffers", "named_buffers", "children",
        "named_children", "modules", "named_modules", "zero_grad", "train", "eval", "requires_grad_",
        "state_dict", "load_state_dict", "apply", "register_forward_hook", "register_forward_pre_hook",
        "register_full_backward_hook", "register_buffer", "register_parameter", "add_module", "get_submodule",
        "extra_repr", "to", "cpu", "float", "double", "type", "half")

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"Module.__init__() got an unexpected keyword argument '{next(iter(kwargs))}'"
                            if kwargs else "Module.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        d = object.__setattr__
        d(self, "training", True)
        d(self, "_parameters", {})
        d(self, "_buffers", {})
        d(self, "_non_persistent_buffers", set())
        d(self, "_modules", {})
        d(self, "_forward_hooks", {})
        d(self, "_forward_pre_hooks", {})
        d(self, "_backward_hooks", {})

    # ------------------------------------------------------------------------------------ attributes
    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        sub = core_of(value)
        if is_parameter(value):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name)
            limits.check_items(len(params) + 1, "the parameters of a module")
            params[name] = value
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as parameter '{name}' (torch.nn.Parameter "
                                "or None expected)")
            params[name] = None
        elif sub is not None:
            modules = d.get("_modules")
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name)
            limits.check_items(len(modules) + 1, "the submodules of a module")
            modules[name] = sub
        elif name in d.get("_modules", ()):
            if value is not None:
                raise TypeError(f"cannot assign '{_type_name(value)}' as child module '{name}' (torch.nn.Module "
                                "or None expected)")
            d["_modules"][name] = None
        elif name in d.get("_buffers", ()):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_type_name(value)}' as buffer '{name}' (torch.Tensor or None "
                                "expected)")
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str) -> None:
        d = self.__dict__
        d.pop(name, None) if not name.startswith("__") else None
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d:
                d[store].pop(name, None)

    def __getattr__(self, name: str):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                value = d[store][name]
                return value._face() if store == "_modules" and value is not None else value
        raise AttributeError(f"'{self._get_name()}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                del d[store][name]
                return
        object.__delattr__(self, name)

    def _face(self):
        """What a program sees for this module: its program object, or the module itself."""
        owner = self.__dict__.get("_owner")
        return self if owner is None else owner

    def _get_name(self) -> str:
        return self.__dict__.get("_name") or type(self).__name__

    # --------------------------------------------------------------------------------- registration
    def register_parameter(self, name: str, param) -> None:
        """Register ``param`` (a Parameter or None) as ``name``.

        Raises:
            KeyError / TypeError: PyTorch's messages for a bad name or value.
        """
        self._check_name(name, "parameter")
        if param is not None and not is_parameter(param):
            raise TypeError(f"cannot assign '{_type_name(param)}' object to parameter '{name}' (torch.nn.Parameter "
                            "or None required)")
        self._forget(name)
        self.__dict__["_parameters"][name] = param

    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Register ``tensor`` (or None) as the buffer ``name`` (in ``state_dict`` if persistent)."""
        self._check_name(name, "buffer")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_type_name(tensor)}' object to buffer '{name}' (torch Tensor or "
                            "None required)")
        self._forget(name)
        self.__dict__["_buffers"][name] = tensor
        if persistent:
            self.__dict__["_non_persistent_buffers"].discard(name)
        else:
            self.__dict__["_non_persistent_buffers"].add(name)

    def add_module(self, name: str, module) -> None:
        """Register ``module`` (or None) as the submodule ``name``."""
        sub = core_of(module)
        if module is not None and sub is None:
            raise TypeError(f"{_type_name(module)} is not a Module subclass")
        self._check_name(name, "module")
        self._forget(name)
        self.__dict__["_modules"][name] = sub

    def _check_name(self, name, what: str) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {what} before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"{what} name should be a string. Got {_type_name(name)}")
        if "." in name:
            raise KeyError(f'{what} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{what} name can\'t be empty string ""')

    def get_submodule(self, target: str):
        """The submodule at the dotted path ``target`` ("" is the module itself)."""
        mod = self
        if target:
            for item in target.split("."):
                sub = mod.__dict__["_modules"].get(item)
                if sub is None:
                    raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
                mod = sub
        return mod._face()

    # ------------------------------------------------------------------------------------ iteration
    def _named_members(self, store: str, prefix: str, recurse: bool, remove_duplicate: bool = True):
        seen = set()
        mods = self._named_cores(prefix=prefix) if recurse else [(prefix, self)]
        for mod_prefix, mod in mods:
            for k, v in mod.__dict__[store].items():
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(v))
                yield (mod_prefix + ("." if mod_prefix else "") + k, v)

    def _named_cores(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        if memo is None:
            memo = set()
        if id(self) in memo and remove_duplicate:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, module in self.__dict__["_modules"].items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module._named_cores(memo, sub, remove_duplicate)

    def parameters(self, recurse: bool = True):
        """The parameters (a generator; each once), this module's first, then its submodules' in order."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """``(dotted name, parameter)`` pairs (a generator)."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True):
        """The buffers (a generator)."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        """``(dotted name, buffer)`` pairs (a generator)."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def children(self):
        """The direct submodules (a generator)."""
        for _, m in self.named_children():
            yield m

    def named_children(self):
        """``(name, submodule)`` pairs of the direct submodules (a generator)."""
        seen = set()
        for name, m in self.__dict__["_modules"].items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m._face()

    def modules(self):
        """This module and all its submodules, depth first (a generator)."""
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        """``(dotted name, module)`` pairs of this module ("") and all its submodules (a generator)."""
        for name, m in self._named_cores(memo, prefix, remove_duplicate):
            yield name, m._face()

    # ------------------------------------------------------------------------------------ state
    def train(self, mode: bool = True):
        """Set training mode here and in every submodule; returns the module.

        Raises:
            ValueError: for a mode that is not a bool (PyTorch's message).
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        object.__setattr__(self, "training", mode)
        for m in self.__dict__["_modules"].values():
            if m is not None:
                m.train(mode)
        return self._face()

    def eval(self):
        """``train(False)``; returns the module. This is PyTorch's ``Module.eval()``, the training-mode switch (it
        takes no argument: ``m.eval("1 + 1")`` is PyTorch's TypeError). It evaluates nothing: Python's builtin
        ``eval`` is neither called by gradcli (tests/robust/test_safety.py scans the package source) nor a name a
        program can reach."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True):
        """Set ``requires_grad`` of every parameter; returns the module."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self._face()

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the parameters' gradients: to None (the default), or to zeros in place."""
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def apply(self, fn):
        """Call ``fn`` on every submodule (depth first), then on this module; returns the module."""
        for m in self.__dict__["_modules"].values():
            if m is not None:
                m.apply(fn)
        fn(self._face())
        return self._face()

    def state_dict(self, destination=None, prefix: str = "", keep_vars: bool = False):
        """An OrderedDict of every parameter and persistent buffer by dotted name (detached unless
        ``keep_vars``)."""
        out = OrderedDict() if destination is None else destination
        for mod_prefix, mod in self._named_cores(prefix=""):
            head = prefix + mod_prefix + ("." if mod_prefix else "")
            d = mod.__dict__
            for k, v in d["_parameters"].items():
                if v is not None:
                    out[head + k] = v if keep_vars else v.detach()
            for k, v in d["_buffers"].items():
                if v is not None and k not in d["_non_persistent_buffers"]:
                    out[head + k] = v if keep_vars else v.detach()
        return out

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy the values of ``state_dict`` into the parameters and buffers (without recording).

        Raises:
            RuntimeError: PyTorch's message for missing or unexpected keys when ``strict``, or a size mismatch.
        """
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            parts = []
            if missing:
                parts.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
            if unexpected:
                parts.append("Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
            raise RuntimeError(f"Error(s) in loading state_dict for {self._get_name()}:\n\t" + "\n\t".join(parts))
        with autograd.no_grad():
            for k, t in own.items():
                if k in state_dict:
                    src = state_dict[k]
                    if tuple(src.shape) != tuple(t.shape):
                        raise RuntimeError(f"Error(s) in loading state_dict for {self._get_name()}:\n\tsize mismatch "
                                           f"for {k}: copying a param with shape {src.shape} from checkpoint, the "
                                           f"shape in current model is {t.shape}.")
                    t.copy_(src)
        return _IncompatibleKeys(missing, unexpected)

    def _cast(self, dtype):
        d = dtypes.NAMES[dtype] if isinstance(dtype, str) else dtype
        for mod in (m for _, m in self._named_cores()):
            for store in ("_parameters", "_buffers"):
                for k, v in mod.__dict__[store].items():
                    if v is not None and not isinstance(v, Tensor):  # a lazy module's uninitialised one
                        v.np_dtype = d.np
                    elif v is not None and v.data.dtype.kind == "f":
                        v.data = v.data.astype(d.np)
                        if v.grad is not None:
                            v.grad = None
        return self._face()

    def to(self, *args, **kwargs):
        """``to(dtype)`` casts the floating parameters and buffers; a device (gradcli has the CPU only) is kept."""
        for a in list(args) + list(kwargs.values()):
            if isinstance(a, dtypes.DType):
                return self._cast(a)
        return self._face()

    def cpu(self):
        """The module itself (gradcli computes on the CPU)."""
        return self._face()

    def float(self):
        """Cast floating parameters and buffers to float32; returns the module."""
        return self._cast(dtypes.float32)

    def double(self):
        """Cast floating parameters and buffers to float64; returns the module."""
        return self._cast(dtypes.float64)

    def half(self):
        """Cast floating parameters and buffers to float16; returns the module."""
        return self._cast(dtypes.float16)

    def type(self, dst_type):
        """Cast floating parameters and buffers to ``dst_type``; returns the module."""
        return self._cast(dst_type)

    # ------------------------------------------------------------------------------------ hooks
    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` after every forward; a result that is not None replaces the output."""
        return self._add_hook("_forward_hooks", hook, prepend)

    def register_forward_pre_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False):
        """``hook(module, args)`` before every forward; a result that is not None replaces the arguments."""
        return self._add_hook("_forward_pre_hooks", hook, prepend)

    def register_full_backward_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` when the gradients of the module's inputs are computed; a
        result that is not None replaces grad_input."""
        return self._add_hook("_backward_hooks", hook, prepend)

    def _add_hook(self, store: str, hook, prepend: bool) -> RemovableHandle:
        hooks = self.__dict__[store]
        limits.check_items(len(hooks) + 1, "the hooks of a module")
        handle = RemovableHandle(hooks)
        if prepend:
            items = list(hooks.items())
            hooks.clear()
            hooks[handle.id] = hook
            hooks.update(items)
        else:
            hooks[handle.id] = hook
        return handle

    # ------------------------------------------------------------------------------------ calling
    def forward(self, *args, **kwargs):
        """The computation; every module that is called defines it.

        Raises:
            NotImplementedError: PyTorch's message for a module without one.
        """
        raise NotImplementedError(f'Module [{self._get_name()}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        d = self.__dict__
        face = self._face()
        for hook in list(d.get("_forward_pre_hooks", {}).values()):
            r = hook(face, args)
            if r is not None:
                args = r if isinstance(r, tuple) else (r,)
        backward_hooks = d.get("_backward_hooks")
        state = None
        if backward_hooks and autograd.is_grad_enabled():
            state = BackwardHookState(face, backward_hooks)
            args = state.wrap_inputs(args)
        forward = d.get("_forward") or self.forward
        result = forward(*args, **kwargs)
        for hook in list(d.get("_forward_hooks", {}).values()):
            r = hook(face, args, result)
            if r is not None:
                result = r
        if state is not None:
            result = state.wrap_outputs(result)
        return result

    # ------------------------------------------------------------------------------------ printing
    def extra_repr(self) -> str:
        """The module's own line in ``print(module)`` (empty here; layers give their sizes)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = []
        for key, module in self.__dict__.get("_modules", {}).items():
            mod_str = _addindent(repr(module if module is None else module._face()), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


class _IncompatibleKeys(tuple):
    """``load_state_dict``'s result: ``missing_keys`` and ``unexpected_keys``."""

    def __new__(cls, missing, unexpected):
        return super().__new__(cls, (missing, unexpected))

    @property
    def missing_keys(self):
        return self[0]

    @property
    def unexpected_keys(self):
        return self[1]

    def __repr__(self) -> str:
        if not self[0] and not self[1]:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self[0]}, unexpected_keys={self[1]})"


def _type_name(value) -> str:
    if isinstance(value, Tensor):
        return "torch.FloatTensor" if value.data.dtype == np.float32 else "Tensor"
    cls = getattr(value, "cls", None)
    return getattr(cls, "name", None) or type(value).__name__
