"""``gradcli jacobian`` and ``gradcli hessian``: the whole Jacobian of a program's output with respect to each
input, or the Hessian of a scalar output, as a calculator answers them (issue 14, item 3).

The program runs once with its ``-i`` inputs (leaves that require grad) and ``-c`` constants; the function
differentiated maps the inputs to the program's output, and :mod:`gradcli.functional` computes what PyTorch's
``torch.autograd.functional.jacobian``/``hessian`` would (reverse mode: one backward pass per output element).
Shapes are PyTorch's: the Jacobian with respect to an input of shape I of an output of shape O has shape O + I;
``H[a][b]`` has shape I_a + I_b. The element count is checked against the ``elements`` limit before any work.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import limits
from .calculator import GradRequest, prepare, run_context, tensor_info
from .errors import EvalError, InputError
from .result import TensorInfo

MODES = ("reverse", "forward", "auto")


@dataclass
class TransformResult:
    """A Jacobian or Hessian answer: the program's ``output``, ``kind`` ("jacobian" or "hessian"), ``mode``
    (how it was computed: "reverse"), ``inputs`` (the -i names in order, with their shapes), and ``blocks``:
    name → array (Jacobian, shape O + I), or (name a, name b) → array (Hessian, shape I_a + I_b)."""
    kind: str
    output: TensorInfo
    mode: str
    inputs: list = field(default_factory=list)
    blocks: dict = field(default_factory=dict)
    default_dtype: str = "float32"


def compute_transform(req: GradRequest, kind: str, mode: str = "auto", write=None, warn=None) -> TransformResult:
    """Run ``req``'s program and differentiate its output: ``kind`` "jacobian" or "hessian".

    Raises:
        InputError: no -i input, an unknown or unavailable mode (forward mode is not in gradcli yet), or a
            result larger than the ``elements`` limit (exit 2).
        EvalError: the program fails; PyTorch's errors (a Hessian of an output with several elements, exit 1).
    """
    from . import dtypes, functional

    if mode not in MODES:
        raise InputError(f"--mode must be one of {', '.join(MODES)}, got {mode!r}", type="UsageError")
    if mode == "forward":
        raise InputError("--mode forward: gradcli has no forward-mode AD yet; --mode reverse (or auto) computes "
                         "the same Jacobian", type="UsageError")
    with run_context(req.dtype, req.seed, req.anomaly):
        printed = []
        interp, program, named = prepare(req, write or printed.append, warn)
        inputs = [(name, t) for name, t, kind_ in named if kind_ == "input"]
        if not inputs:
            raise InputError(f"{kind} needs an input to differentiate with respect to: -i NAME=SPEC",
                             type="UsageError")
        from .calculator import run_output

        def program_output(*values):
            for (name, _), v in zip(inputs, values):
                interp.globals[name] = v
            return run_output(interp, program)

        first = program_output(*[t for _, t in inputs])
        out_n = int(first.data.size)
        sizes = [int(t.data.size) for _, t in inputs]
        total = out_n * sum(sizes) if kind == "jacobian" else sum(sizes) ** 2
        if total > limits.current.elements:
            raise limits.exceeded("elements", f"the {kind} has {total:,} elements ({out_n:,} output x "
                                              f"{sum(sizes):,} input elements)")
        values = tuple(t for _, t in inputs)
        try:
            if kind == "jacobian":
                res = functional.jacobian(program_output, values)
                blocks = {name: np.array(r.data) for (name, _), r in zip(inputs, res)}
            else:
                res = functional.hessian(program_output, values)
                blocks = {(a, b): np.array(res[i][j].data) for i, (a, _) in enumerate(inputs)
                          for j, (b, _) in enumerate(inputs)}
        except (RuntimeError, TypeError, ValueError) as e:
            raise EvalError.from_exception(e) from None
        return TransformResult(kind=kind, output=tensor_info(first.detach()), mode="reverse",
                               inputs=[(name, tuple(t.shape)) for name, t in inputs], blocks=blocks,
                               default_dtype=dtypes.get_default_dtype().name)
