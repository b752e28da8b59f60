"""``gradcli jacobian``, ``hessian``, ``jvp`` and ``hvp``: the whole Jacobian of a program's output with respect
to each input, the Hessian of a scalar output, the Jacobian-vector product with a tangent, and the
Hessian-vector product with a vector, as a calculator answers them.

The program runs once with its ``-i`` inputs (leaves that require grad) and ``-c`` constants; the function
differentiated maps the inputs to the program's output, and :mod:`gradcli.api.autograd_functional` computes what PyTorch's
``torch.autograd.functional`` would. Shapes are PyTorch's: the Jacobian with respect to an input of shape I of
an output of shape O has shape O + I; ``H[a][b]`` has shape I_a + I_b; the JVP has the output's shape; the HVP
one block per input, of its shape. The element count is checked against the ``elements`` limit before any work.

A Jacobian's (or Hessian's) program may end in a tuple of tensors, as PyTorch's function may return one: the
Jacobian is then one block per output and input, keyed ``(output index, input name)`` (PyTorch's tuple of
tuples); ``strict`` is PyTorch's ``strict=True`` (an output independent of an input is an error), computed row
by row in reverse mode as PyTorch computes it (PyTorch has it neither with ``vectorize=True`` nor in forward
mode, and says so).

Modes: a Jacobian is computed in reverse mode (rows: vector-Jacobian products batched through the engine) or
forward mode (columns: one forward-mode JVP per input element); ``auto`` chooses forward when the inputs have
fewer elements than the output. A JVP is forward mode, an HVP reverse over reverse, a Hessian reverse over
reverse.

``--check`` compares the answer with central differences in float64: ``(f(x + eps v) - f(x - eps v)) / 2 eps``
for the JVP (and along each input element for the Jacobian), the same of the gradient for the HVP (and the
Hessian), with ``torch.autograd.gradcheck``'s criterion.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..api import autograd_functional as functional
from ..engine import autograd
from ..engine.errors import EvalError, InputError
from ..engine.lazy import lazy
from ..engine.printing import format_tensor
from ..engine.tensor import Tensor
from ..language.specs import evaluate_spec, make_spec
from .stages import GradRequest, prepare, run_context, run_output
from .result import TensorInfo

finite_differences = lazy("gradcli.app.finite_differences")  # --check only

MODES = ("reverse", "forward", "auto")

#: The kinds of transform: the option naming their vectors (None: none), and how their blocks are keyed.
KINDS = {
    "jacobian": {"vector": None},
    "hessian": {"vector": None},
    "jvp": {"vector": "--tangent"},
    "hvp": {"vector": "--vector"},
}


@dataclass
class TransformResult:
    """A transform's answer: the program's ``output`` (a TensorInfo; a tuple of them for a Jacobian of several
    outputs), ``kind`` (a key of :data:`KINDS`), ``mode`` (how it was
    computed: "reverse" or "forward"), ``inputs`` (the -i names in order, with their shapes), and ``blocks``:
    name → array (Jacobian, shape O + I; HVP, shape I), (output index, name) → array (Jacobian of a tuple of
    outputs), (name a, name b) → array (Hessian, shape I_a + I_b),
    or None → array (JVP, shape O). ``check``: the :class:`~gradcli.app.finite_differences.CheckResult` of ``--check``."""
    kind: str
    output: TensorInfo
    mode: str
    inputs: list = field(default_factory=list)
    blocks: dict = field(default_factory=dict)
    default_dtype: str = "float32"
    check: object = None


def block_label(kind: str, key) -> str:
    """How the tables and compact lines name a block: ``d output/d x`` (jacobian; ``d output[1]/d x`` for the
    second of a tuple of outputs), ``d2 output/d x d y`` (hessian), ``jvp`` (J v), ``hvp x`` (the HVP's block of
    input x)."""
    if kind == "jacobian":
        return f"d output[{key[0]}]/d {key[1]}" if isinstance(key, tuple) else f"d output/d {key}"
    if kind == "hessian":
        return f"d2 output/d {key[0]} d {key[1]}"
    return kind if key is None else f"{kind} {key}"


def vectors(kind: str, specs, inputs, interp) -> tuple:
    """The ``--tangent``/``--vector`` values, one per input, of the input's shape and dtype.

    Raises:
        InputError: a missing, unknown or repeated name, or a shape that is not the input's (exit 2).
    """
    option = KINDS[kind]["vector"]
    given = {}
    for item in specs or []:
        spec = make_spec(item, False)
        spec.option = option
        if spec.name in given:
            raise InputError(f"{option} {spec.name} is given twice", type="InputSpecError")
        if spec.name not in dict(inputs):
            raise InputError(f"{option} {spec.name}: not an -i input (inputs: {', '.join(n for n, _ in inputs)})",
                             type="InputSpecError")
        given[spec.name] = evaluate_spec(spec, interp)
    out = []
    for name, t in inputs:
        if name not in given:
            raise InputError(f"{kind} needs {option} {name}=SPEC for every -i input (missing: {name})",
                             type="UsageError")
        v = given[name]
        if tuple(v.shape) != tuple(t.shape):
            raise InputError(f"{option} {name} has shape {list(v.shape)} but the input {name} has shape "
                             f"{list(t.shape)}", type="InputSpecError")
        out.append(v.detach().to(t.dtype))
    return tuple(out)


def outputs_of(output) -> tuple:
    """The output tensors of a program's output: ``(output,)``, or the tuple itself."""
    return output if isinstance(output, tuple) else (output,)


def output_info(output, info):
    """``info`` (a Tensor → TensorInfo function) of the detached output, or a tuple of them for a tuple of
    outputs (whose items that are not Tensors PyTorch has refused before this is called)."""
    if isinstance(output, tuple):
        return tuple(info(o.detach()) for o in output)
    return info(output.detach())


def output_text(output, default_dtype, **kw) -> str:
    """The output (a TensorInfo, or a tuple of them) as PyTorch prints it: ``tensor(...)``, or
    ``(tensor(...), tensor(...))`` for a tuple; ``kw`` goes to :func:`gradcli.engine.printing.format_tensor`."""
    if isinstance(output, tuple):
        return "(" + ", ".join(format_tensor(o.value, default_dtype=default_dtype) for o in output) + \
            ("," if len(output) == 1 else "") + ")"
    return format_tensor(output.value, default_dtype=default_dtype, **kw)


def choose_mode(kind: str, mode: str, in_elements: int, out_elements: int, strict: bool = False) -> str:
    """The mode a transform is computed in: jacobian's ``mode`` ("auto": forward when the inputs have fewer
    elements than the output, reverse with ``strict``, which PyTorch has only in reverse mode); jvp forward,
    hessian and hvp reverse.

    Raises:
        InputError: an unknown mode, or a mode other than the transform's own (exit 2).
    """
    if mode not in MODES:
        raise InputError(f"--mode must be one of {', '.join(MODES)}, got {mode!r}", type="UsageError")
    own = {"jvp": "forward", "hessian": "reverse", "hvp": "reverse"}.get(kind)
    if own is not None:
        if mode not in ("auto", own):
            raise InputError(f"{kind} is computed in {own} mode (--mode {mode} is not available)", type="UsageError")
        return own
    if mode == "auto":
        return "forward" if in_elements < out_elements and not strict else "reverse"
    return mode


def transform_blocks(kind: str, mode: str, f, values, vs=(), names=(), strict: bool = False) -> dict:
    """The blocks of a transform of ``f`` at ``values`` (Tensors; ``names`` theirs, ``vs`` the tangents or
    vectors): by :mod:`gradcli.api.autograd_functional`, in ``mode`` (jacobian); keyed as
    :class:`TransformResult.blocks`. ``strict``: PyTorch's ``strict=True``, with ``vectorize=False`` in
    reverse mode (PyTorch refuses it with ``vectorize=True``); in forward mode PyTorch's refusal.

    Raises:
        RuntimeError, TypeError, ValueError: PyTorch's errors (a Hessian of an output with several elements, an
            output independent of an input in strict mode, an output that is not a Tensor).
    """
    if kind == "jacobian":
        forward = mode == "forward"
        res = functional.jacobian(f, values, strict=strict, vectorize=forward or not strict,
                                  strategy="forward-mode" if forward else "reverse-mode")
        if isinstance(res[0], (tuple, list)):  # a tuple of outputs: one tuple of blocks per output
            return {(i, name): np.array(r.data) for i, per in enumerate(res) for name, r in zip(names, per)}
        return {name: np.array(r.data) for name, r in zip(names, res)}
    if kind == "hessian":
        res = functional.hessian(f, values, strict=strict)
        return {(a, b): np.array(res[i][j].data) for i, a in enumerate(names) for j, b in enumerate(names)}
    if kind == "jvp":
        _, jv = functional.jvp_forward(f, values, vs)
        return {None: np.array(jv.data)}
    _, hv = functional.hvp(f, values, vs)
    return {name: np.array(h.data) for name, h in zip(names, hv)}


def check_transform(req: GradRequest, result: TransformResult, base, vectors, eps: float, atol: float,
                    rtol: float):
    """``--check``: central differences in float64 at the inputs' values ``base`` (float64 arrays), compared
    with the answer by :mod:`gradcli.app.finite_differences`'s criterion, one entry per block. The JVP: the output along the
    tangents; the HVP: the gradient along the vector (two runs of the program each); the Jacobian: the output
    along each input element in turn (a column each); the Hessian: the gradient along each input element (two
    runs and backward passes per element).

    Raises:
        InputError: non-positive eps or negative tolerances (exit 2).
        EvalError: the program fails in float64 (exit 1).
    """
    from dataclasses import replace

    if not (eps > 0 and atol >= 0 and rtol >= 0):
        raise InputError(f"--check needs eps > 0 and atol, rtol >= 0 (got eps={eps}, atol={atol}, rtol={rtol})",
                         type="UsageError")
    req64 = replace(req, dtype="float64")
    names = [n for n, _ in result.inputs]
    of_output = result.kind in ("jvp", "jacobian")  # differences of the output, else of the gradient

    def at(direction, sign: float):
        with run_context(req64.dtype, req64.seed):
            interp, program, _ = prepare(req64, _discard, _discard)
            xs = [Tensor(b + sign * eps * v).requires_grad_(True) for b, v in zip(base, direction)]
            for n, x in zip(names, xs):
                interp.globals[n] = x
            out = run_output(interp, program, tuples=of_output)
            if of_output:
                return [np.asarray(o.data, np.float64) for o in outputs_of(out)]
            gs = autograd.grad([out], xs, allow_unused=True)
            return [np.zeros(b.shape) if g is None else np.asarray(g.data, np.float64) for g, b in zip(gs, base)]

    def along(direction) -> list:
        plus, minus = at(direction, 1.0), at(direction, -1.0)
        return [(p - m) / (2 * eps) for p, m in zip(plus, minus)]

    def basis(i: int, k: int) -> list:
        direction = [np.zeros(b.shape) for b in base]
        direction[i].reshape(-1)[k] = 1.0
        return direction

    try:
        if result.kind in ("jvp", "hvp"):
            numeric = dict(zip(list(result.blocks), along(vectors)))
        elif result.kind == "jacobian":  # column k of each output's block: the outputs along element k
            numeric = {}
            several = isinstance(result.output, tuple)
            for i, name in enumerate(names):
                cols = [along(basis(i, k)) for k in range(base[i].size)]
                for o in range(len(cols[0]) if cols else len(outputs_of(result.output))):
                    key = (o, name) if several else name
                    block = np.stack([c[o].reshape(-1) for c in cols], axis=-1) if cols else np.zeros(0)
                    numeric[key] = block.reshape(np.shape(result.blocks[key]))
        else:  # hessian: the gradient's change along each element of input b is column k of H[a][b]
            numeric = {}
            for j, b in enumerate(names):
                cols = [along(basis(j, k)) for k in range(base[j].size)]
                for i, a in enumerate(names):
                    block = np.stack([c[i].reshape(-1) for c in cols], axis=-1)
                    numeric[(a, b)] = block.reshape(np.shape(result.blocks[(a, b)]))
    except (RuntimeError, TypeError, ValueError) as e:
        raise EvalError.from_exception(e) from None
    evaluations = 2 * (1 if result.kind in ("jvp", "hvp") else sum(b.size for b in base))
    out = finite_differences.CheckResult(eps=eps, atol=atol, rtol=rtol, evaluations=evaluations)
    for key in result.blocks:
        label = (result.kind if key is None else key if isinstance(key, str) else f"output[{key[0]}],{key[1]}"
                 if isinstance(key[0], int) else f"{key[0]},{key[1]}")
        out.inputs.append(finite_differences.compare_arrays(label, np.asarray(result.blocks[key], np.float64),
                                                            numeric[key], atol, rtol))
    return out


def _discard(*_args, **_kwargs) -> None:
    return None
