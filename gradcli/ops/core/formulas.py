"""What the backward function of every graph node sends to each input, as a formula, for ``gradcli grad --explain``.

Each formula is declared with the op that records the node (``@op(..., formula=...)``, see
:func:`gradcli.ops.core.declare.op`); :data:`FORMULAS` gathers them by PyTorch's grad_fn class name (what a graph
node is called: ``TanhBackward0``), since that is what a node of the graph knows; several ops share one
(``square`` and ``pow`` record ``PowBackward0``), and one of them declares its text. They are written as
PyTorch's ``tools/autograd/derivatives.yaml`` writes them, with its names: one ``name: formula`` per input the
node sends a gradient to, separated by ``;``, where ``input`` is the op's first tensor argument (derivatives.yaml's
``self``), ``other`` its second, the op's other arguments keep their PyTorch names (``alpha``, ``exponent``,
``weight``, ``target``, ``dim``, ``mask``, ``index``, ``source``), ``result`` is the op's output and ``grad`` the
gradient flowing into the node. So ``MulBackward0`` is ``input: grad * other; other: grad * input``: never ``x``
or ``y``, which would read as the program's own variables. Products are elementwise unless written with ``@``,
and a rule that only moves the gradient around says where it goes. The conventions at kinks are PyTorch's:
``relu'(0) = 0``, ``|x|'(0) = 0``, ties of max/min share the gradient.

A node whose name has no formula falls back on the derivative note its op declares (:func:`formula`), with the
same names (:func:`pytorch_names`); the tests check that every backward function the op table records has a
formula. :data:`KINKS` (``kinks=`` of the declarations) names the ops that ``--check`` reports at a kink: points
where the op is continuous but its one-sided derivatives differ, so that a central difference averages them
while PyTorch's rule picks one subgradient (derivatives.yaml's conventions, above). A kink that ``--check`` finds
at a node not listed there is reported as "a point where the one-sided slopes differ".
"""

from __future__ import annotations

import re

from .declare import FORMULAS, KINKS  # noqa: F401  (the tables, gathered from the declarations)


def formula(node) -> str:
    """The local derivative of a graph node (:data:`FORMULAS` by its grad_fn name), else its op's declared
    derivative note, else ``""``."""
    name = node.name()
    text = FORMULAS.get(name)
    if text is not None:
        return text
    note = getattr(getattr(node, "op", None), "note", "") or ""
    return pytorch_names(note)


#: The shorthand some op notes use (``d/dx = 2 * x``) → derivatives.yaml's names.
_RENAMES = {"x": "input", "y": "other", "out": "result", "g": "grad", "self": "input"}
_TOKEN = re.compile(r"\bd/d(x|y|self)\b|\b(x|y|out|g|self)\b")


def pytorch_names(text: str) -> str:
    """``text`` with the single-letter names of an op's note written as derivatives.yaml names them: ``x`` →
    ``input``, ``y`` → ``other`` (or ``result`` in a note of one input), ``out`` → ``result``, ``g`` → ``grad``
    (``d/dx`` → ``d/dinput``), so that they do not read as the program's own ``x`` and ``y``."""
    two_inputs = "d/dy" in text  # (else a note's y is its result, as softmax's "d/dx = y * (g - sum(g * y))")

    def rename(m):
        name = m.group(1) or m.group(2)
        if name == "y" and not two_inputs:
            return "result"
        return ("d/d" if m.group(1) else "") + _RENAMES[name]
    return _TOKEN.sub(rename, text)
