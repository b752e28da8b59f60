"""The in-place forms of the unary elementwise functions: ``x.sin_()``, ``x.exp_()``, ``x.sqrt_()``, ...

Each is its out-of-place op written into the tensor's memory by :func:`gradcli.ops.shape.inplace.apply` (the
checks, views, version counter and history of every in-place op: ``x.sin_()`` records SinBackward0, as
PyTorch's ``sin_``), so there is nothing to declare but the names. An integer or bool tensor cannot hold a
floating result: PyTorch's "result type Float can't be cast to the desired output type Long".
"""

from __future__ import annotations

from ..core.declare import REGISTRY, tensor_method
from ..shape.inplace import apply

#: The unary functions of torch whose Tensor has an in-place method ``<name>_`` taking no other argument.
NAMES = ("abs", "absolute", "neg", "negative", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
         "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
         "asinh", "acosh", "atanh", "arcsinh", "arccosh", "arctanh", "sigmoid", "erf", "erfc", "erfinv",
         "reciprocal", "sign", "square", "digamma", "lgamma", "i0", "sinc")


def _inplace(name: str):
    fn = REGISTRY[name]

    def method(self):
        return apply(self, fn)

    method.__name__ = name + "_"
    method.__doc__ = (f"``self.{name}_()``: torch.{name} in place; returns self. Matches torch.Tensor.{name}_ "
                      f"(the grad_fn of torch.{name}).")
    return tensor_method(name + "_")(method)


for _name in NAMES:
    if _name in REGISTRY:
        _inplace(_name)
