"""``nn.ParameterList`` and ``nn.ParameterDict``: containers of parameters registered on a module, as PyTorch
2.13's ``torch/nn/modules/container.py`` has them.

A tensor put in either container becomes a Parameter (``Parameter(t)``, requiring grad); a Parameter is
registered under its index (``"0"``, ``"1"``, ...) or key, so ``model.parameters()`` / ``named_parameters()``
see them in PyTorch's order and names (``ps.0``, ``pd.a``); any other object is kept (PyTorch keeps it as a plain
attribute) and printed as ``Object of type: int``. ``print`` shows PyTorch's ``extra_repr`` lines: the dtype
(``torch.float32``) for a list, the legacy type (``torch.FloatTensor``) for a dict, as PyTorch does.
"""

from __future__ import annotations

from collections import OrderedDict

from ...engine import limits
from ...engine.tensor import Tensor, is_parameter
from .module import Module, _type_name
from .parameter import Parameter


def _as_parameter(value):
    """PyTorch's rule for both containers: a plain tensor becomes ``Parameter(value)``; others are kept."""
    if isinstance(value, Tensor) and not is_parameter(value):
        return Parameter(value)
    return value


def _line(key, value, type_text) -> str:
    if isinstance(value, Tensor):
        size = "x".join(str(s) for s in value.shape)
        kind = "Parameter" if is_parameter(value) else "Tensor"
        return f"  ({key}): {kind} containing: [{type_text(value)} of size {size}]"
    return f"  ({key}): Object of type: {_type_name(value)}"


class _ParameterStore(Module):
    """The storage both containers share: parameters in ``_parameters``, other objects in ``_others``."""

    def __init__(self):
        super().__init__()
        self.__dict__["_others"] = {}

    def _put(self, name: str, value) -> None:
        value = _as_parameter(value)
        params, others = self.__dict__["_parameters"], self.__dict__["_others"]
        if name not in params and name not in others:
            limits.check_items(len(params) + len(others) + 1, "the items of a parameter container")
        params.pop(name, None)
        others.pop(name, None)
        if is_parameter(value) or value is None:
            params[name] = value
        else:
            others[name] = value

    def _get(self, name: str):
        params = self.__dict__["_parameters"]
        return params[name] if name in params else self.__dict__["_others"][name]

    def _drop(self, name: str) -> None:
        self.__dict__["_parameters"].pop(name, None)
        self.__dict__["_others"].pop(name, None)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"{type(self).__name__} should not be called.")


class ParameterList(_ParameterStore):
    """``nn.ParameterList(values=None)``: a list of parameters (indexing, slicing, ``len``, iteration, append,
    extend, ``+=``), registered under ``"0"``, ``"1"``, ...

    Raises:
        IndexError: an index out of range (PyTorch's message).
        TypeError: ``extend`` with a non-iterable (PyTorch's message).
    """

    program_attributes = Module.program_attributes + ("append", "extend")

    def __init__(self, values=None):
        super().__init__()
        self.__dict__["_size"] = 0
        if values is not None:
            self += values

    def _index(self, idx) -> str:
        if not isinstance(idx, int) or isinstance(idx, bool):
            raise TypeError(f"'{type(idx).__name__}' object cannot be interpreted as an integer")
        size = len(self)
        if not -size <= idx < size:
            raise IndexError(f"index {idx} is out of range")
        return str(idx % size)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = ParameterList()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return self._get(self._index(idx))

    def __setitem__(self, idx, param) -> None:
        self._put(self._index(idx), param)

    def __len__(self) -> int:
        return self.__dict__["_size"]

    def __iter__(self):
        return iter([self[i] for i in range(len(self))])

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def append(self, value):
        """Add ``value`` at the end (a plain tensor becomes a Parameter); returns the list."""
        new = len(self)
        self.__dict__["_size"] = new + 1
        self._put(str(new), value)
        return self

    def extend(self, values):
        """Append each of ``values``; returns the list.

        Raises:
            TypeError: ``values`` is not iterable (or is a tensor), PyTorch's message.
        """
        if isinstance(values, Tensor) or not _iterable(values):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_line(i, p, lambda t: repr(t.dtype)) for i, p in enumerate(self))


def _iterable(value) -> bool:
    """Whether ``value`` can be iterated (``iter(value)`` succeeds)."""
    try:
        iter(value)
    except TypeError:
        return False
    return True


class ParameterDict(_ParameterStore):
    """``nn.ParameterDict(parameters=None)``: an ordered dictionary of parameters by string key (``d[key]``,
    ``d[key] = p``, ``del d[key]``, ``len``, iteration over the keys, ``in``, keys/values/items, get, update, pop,
    popitem, setdefault, clear, copy). As PyTorch's ``update``, a plain dict's items are added in sorted key order,
    an OrderedDict's or a ParameterDict's (or an iterable's pairs) in their own order.

    Raises:
        TypeError: a key that is not a string, or an update element that is not a pair (PyTorch's messages).
        AttributeError: a missing key (PyTorch's message: it reads the key as an attribute).
    """

    program_attributes = Module.program_attributes + ("keys", "values", "items", "update", "pop", "popitem",
                                                      "get", "setdefault", "clear", "copy")

    def __init__(self, parameters=None):
        super().__init__()
        self.__dict__["_keys"] = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _key(key) -> str:
        if not isinstance(key, str):
            raise TypeError("Index given to ParameterDict cannot be used as a key as it is not a string (type is "
                            f"'{type(key).__name__}'). Open an issue on github if you need non-string keys.")
        return key

    def __getitem__(self, key):
        key = self._key(key)
        if key not in self.__dict__["_keys"]:  # PyTorch reads the key as an attribute
            raise AttributeError(f"'ParameterDict' object has no attribute '{key}'")
        return self._get(key)

    def __setitem__(self, key, value) -> None:
        key = self._key(key)
        self._put(key, value)
        self.__dict__["_keys"][key] = None

    def __delitem__(self, key) -> None:
        key = self._key(key)
        del self.__dict__["_keys"][key]
        self._drop(key)

    def __len__(self) -> int:
        return len(self.__dict__["_keys"])

    def __iter__(self):
        return iter(list(self.__dict__["_keys"]))

    def __reversed__(self):
        return reversed(list(self.__dict__["_keys"]))

    def __contains__(self, key) -> bool:
        return key in self.__dict__["_keys"]

    def keys(self):
        """The keys, in insertion order."""
        return list(self.__dict__["_keys"])

    def values(self):
        """The values, in insertion order."""
        return [self._get(k) for k in self.__dict__["_keys"]]

    def items(self):
        """``(key, value)`` pairs, in insertion order."""
        return [(k, self._get(k)) for k in self.__dict__["_keys"]]

    def get(self, key, default=None):
        """The value at ``key``, else ``default``."""
        return self[key] if key in self else default

    def setdefault(self, key, default=None):
        """The value at ``key``, first setting it to ``default`` when missing."""
        if key not in self:
            self[key] = default
        return self[key]

    def pop(self, key):
        """Remove and return the value at ``key``."""
        value = self[key]
        del self[key]
        return value

    def popitem(self):
        """Remove and return the last ``(key, value)`` pair.

        Raises:
            KeyError: the dict is empty (Python's message).
        """
        if not len(self):
            raise KeyError("popitem(): dictionary is empty")
        key = list(self.__dict__["_keys"])[-1]
        return key, self.pop(key)

    def clear(self) -> None:
        """Remove every item."""
        for key in list(self.__dict__["_keys"]):
            del self[key]

    def copy(self):
        """A new ParameterDict holding the same values."""
        return ParameterDict(OrderedDict(self.items()))

    def update(self, parameters) -> None:
        """Add the items of ``parameters`` (see the class's docstring for the order).

        Raises:
            TypeError: not an iterable, or an element that is not a pair (PyTorch's messages).
            ValueError: an element that is not of length 2 (PyTorch's message).
        """
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            pairs = list(parameters.items())
        elif isinstance(parameters, dict):
            pairs = sorted(parameters.items())
        elif not _iterable(parameters):
            raise TypeError("ParametersDict.update should be called with an iterable of key/value pairs, but got "
                            + type(parameters).__name__)
        else:
            pairs = []
            for j, p in enumerate(parameters):
                if not _iterable(p) or isinstance(p, str):
                    raise TypeError(f"ParameterDict update sequence element #{j} should be Iterable; is"
                                    + type(p).__name__)
                p = list(p)
                if len(p) != 2:
                    raise ValueError(f"ParameterDict update sequence element #{j} has length {len(p)}; 2 is "
                                     "required")
                pairs.append(p)
        for key, value in pairs:
            self[key] = value

    def extra_repr(self) -> str:
        return "\n".join(_line(k, p, lambda t: t.type()) for k, p in self.items())


CLASSES = {"ParameterList": ParameterList, "ParameterDict": ParameterDict}
__all__ = sorted(CLASSES)
