"""The op × transform matrix (tests/ops/transform_matrix.py): every differentiable op of the table under every
transform of torch.autograd, torch.autograd.functional and torch.func, compared with PyTorch in float64 (rtol
1e-7), and PyTorch's error type where PyTorch refuses.

By default each op runs on one sample (the smallest whose inputs have a dimension) under all 20 transforms:
378 ops × 20 transforms = 7,560 cells (2026-11-28), none failing. ``GRADCLI_MATRIX=long`` runs
every sample of every op: 2,732 samples × 20 = 54,640 cells (about 19 minutes on one core); its first run left
117 cells failing, a later one 97 (in 36 samples). Each is now classified: gradcli's bugs fixed (vmap of diff
with n=0, forward mode of cosine_similarity at a zero norm: :data:`LONG_REGRESSIONS` runs them in the default
suite), PyTorch's limits (:data:`PYTORCH_LACKS`: functional.jacobian of an empty output, missing or broken
batching rules) and PyTorch's wrong cells (:data:`PYTORCH_WRONG`: forward mode of scatter_reduce's "prod",
func.hessian of the norms with a weight, vmap of index_select with a 0-d index), and one tolerance
(:data:`CELL_ATOL`); entries for one sample of the long matrix are keyed by its id. A later run left 19 failing
samples: gradcli's bugs fixed and run in the default suite by :data:`LONG_REGRESSIONS` (jacfwd and func.hessian
did not refuse a random draw: feature_dropout-train, alpha_dropout-train, and dropout1d-eval/dropout2d-p1, whose
op-keyed PYTORCH_LACKS entries went; the second derivatives through embedding_bag's gradients with
per_sample_weights did not raise PyTorch's errors; func.hessian of the 7 index_reduce samples answered where
PyTorch's forward over reverse meets index_reduce's missing forward-mode rule), PyTorch's wrong cells
(:data:`PYTORCH_WRONG`: vmap of linalg.lu_solve-broadcast, forward mode of triangular_solve-lower-transpose,
functional.jvp of as_strided_scatter), a PyTorch limit (:data:`PYTORCH_LACKS`: vmap of linalg.lstsq-vector; and
rrelu-eval's jacfwd), cells where no PyTorch transform is right (:data:`PYTORCH_WRONG_NO_REFERENCE`: the
reverse-mode cells of as_strided_scatter-2x2/-offset/-method, checked against central differences), and the
vmap of as_strided-of-transpose (gradcli's gap: vmap now has functorch's as_strided rule, each example's view in
the physical storage). The full long run after these (2026-11-28, at 675f740 with this entry's removal:
take_along_dim-flat's vmap now raises as PyTorch's) passes every sample: 2,732 tests, no failing cell. The rows come from the op table, so
a new op has its rows the moment it has an entry (:func:`test_every_differentiable_entry_has_its_rows`).

Where PyTorch's own transform is wrong (it disagrees with its own unbatched computation of the same numbers:
functorch batching rules, a NaN from a double-backward trick, a double backward that raises where the
forward-over-reverse path answers), :data:`PYTORCH_WRONG` names the cell and the PyTorch transform that gives
the right numbers; gradcli's cell is compared with that one, and PyTorch's cell is asserted to disagree with it
(so that a PyTorch that fixes the bug makes the entry fail, asking for its removal).

The CLI commands (jacobian and hessian in both modes, jvp, hvp) and the session's ``:jacobian``/``:hessian`` run on
the ops whose sample is one call of the op on tensors and numbers (:func:`cli_rows`), compared with PyTorch in
float32 at rtol 1e-4.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

import opinfo
import transform_matrix as tm
from helpers import make_arrays

LONG = os.environ.get("GRADCLI_MATRIX") == "long"
ROWS = tm.rows(LONG)

#: (op, transform) -> (the PyTorch transform that gives the right numbers, why PyTorch's own cell is wrong).
PYTORCH_WRONG = {
    ("batch_norm", "func_hessian"): (
        "hessian", "torch.func.hessian batches native_batch_norm_backward's tangents with vmap, and its weight-input "
                   "block disagrees with torch.func.jvp of the gradient and with central differences"),
    ("cdist", "jacrev"): (
        "jacobian", "torch.func.jacrev's batching rule of _cdist_backward gives other numbers than the backward "
                    "row by row (torch.autograd.functional.jacobian, vectorize False and True)"),
    ("masked_select", "jacrev"): (
        "jacobian", "torch.func.jacrev of masked_select with a broadcast mask raises a size mismatch in its batching "
                    "rule; the backward row by row answers"),
    ("masked_select", "func_hessian"): (
        "hessian", "torch.func.hessian of masked_select with a broadcast mask raises in split_with_sizes (batching "
                   "rule); the Hessian row by row answers"),
    ("logcumsumexp", "hvp"): (
        "vhp", "torch.autograd.functional.hvp's double-backward trick gives NaN along a dim of size 1, where vhp (the "
               "same numbers: the Hessian is symmetric) gives 0"),
    ("conv_transpose1d", "hvp"): (
        "vhp", "torch.autograd.functional.hvp's double-backward trick through a transposed convolution with "
               "output_padding raises 'output_padding is not supported for non-transposed convolutions'; vhp "
               "answers"),
    ("conv_transpose3d", "hvp"): (
        "vhp", "as conv_transpose1d's: PyTorch's hvp raises for a transposed convolution with output_padding"),
}

#: Cells where PyTorch raises for want of a rule that gradcli has: (op, transform) -> the reason. PyTorch must
#: still raise there (else the entry is to be removed and the cell compared), and gradcli must answer.
PYTORCH_LACKS = {
    ("column_stack", "vmap"): "torch.vmap has no batching rule for aten::column_stack (\"We could not generate a "
                              "fallback\"); gradcli's vmap runs the function per batch element",
    ("column_stack", "vmap_in_dims_1"): "torch.vmap has no batching rule for aten::column_stack",
    ("soft_margin_loss", "func_hessian"): "PyTorch's forward mode has no rule for soft_margin_loss_backward "
                                          "(NotImplementedError), which torch.func.hessian needs; gradcli's "
                                          "double backward is gradchecked (tests/ops/test_op_table.py)",
    ("triangular_solve", "func_hessian"): "PyTorch's forward mode of triangular_solve sets a tangent of A's shape "
                                          "on the batched cloned_coefficient inside torch.func.hessian's vmap (a "
                                          "size error); gradcli's double backward is gradchecked",
    **{(op, "func_hessian"): "PyTorch has no forward-mode rule for igamma/igammac/special_zeta (derivatives.yaml "
                             "gives no result: formula), which torch.func.hessian needs; gradcli's double backward "
                             "is gradchecked (tests/ops/test_op_table.py)"
       for op in ("igamma", "igammac", "special.gammainc", "special.gammaincc", "special.zeta")},
    **{("histogramdd", t): "torch.vmap has no batching rule for aten::histogramdd (\"We could not generate a "
                           "fallback\"); gradcli's vmap runs the function per batch element"
       for t in ("vmap", "vmap_in_dims_1")},
    **{("chain_matmul", t): "PyTorch has no batching rule for the deprecated aten::chain_matmul and cannot "
                            "generate a fallback ('Batching rule not implemented'); torch.linalg.multi_dot, its "
                            "replacement, has one" for t in ("vmap", "vmap_in_dims_1")},
    **{("as_strided_scatter", t): "PyTorch has no batching rule for aten::as_strided_scatter ('requires special "
                                  "handling'); gradcli's vmap runs it per batch element (the matrix's sample "
                                  "differentiates src only: PyTorch's self gradient is wrong, tests/ops/opinfo.py)"
       for t in ("jacfwd", "func_hessian", "vmap", "vmap_in_dims_1")},
    # ---- samples of the long matrix only (GRADCLI_MATRIX=long), keyed by the sample's id
    ("column_stack-0d", "vmap_in_dims_1"): None,  # 0-d examples are mapped along dim 0: PyTorch answers
    **{(sample, t): "torch.autograd.functional.jacobian of an output with no elements: PyTorch stacks an empty "
                    "list of rows ('stack expects a non-empty TensorList'; with vectorize, an IndexError); gradcli "
                    "answers the empty Jacobian, shape output + input, as torch.func.jacrev does"
       for sample in ("__getitem__-empty-list", "__getitem__-false", "__getitem__-slice-empty",
                      "combinations-r-large", "diff-n-large", "index_select-empty-index", "narrow-empty",
                      "repeat-zero", "topk-k0") for t in ("jacobian", "jacobian_vectorize")},
    **{(sample, t): "torch.vmap has no batching rule for aten::equal (cov's weight check) and cannot generate a "
                    "fallback" for sample in ("cov-aweights", "cov-both-weights") for t in ("vmap", "vmap_in_dims_1")},
    **{("moveaxis-0-1", t): "torch.vmap has no batching rule for aten::moveaxis.int (a view op: no fallback)"
       for t in ("vmap", "vmap_in_dims_1")},
    **{("tensor_split-tensor-sections", t): "torch.vmap has no batching rule for "
                                            "aten::tensor_split.tensor_indices_or_sections" for t in ("vmap", "vmap_in_dims_1")},
    **{("tensor_split-tensor-indices", t): "torch.func cannot read a tensor of indices inside its transforms "
                                           "('Cannot access data pointer of Tensor that doesn't have storage'), "
                                           "and vmap has no batching rule for tensor_split with a tensor of indices"
       for t in ("jacrev", "jacfwd", "func_hessian", "func_grad", "func_vjp", "func_jvp", "vmap",
                 "vmap_in_dims_1")},
    **{("flip-0d", t): "flip's batching rule shifts the dims of a 0-d example past its batch dim (IndexError: "
                       "Dimension out of range); each example answers" for t in ("jacrev", "jacfwd", "func_hessian",
                                                                                 "vmap")},
    **{(sample, t): "linear's batching rule (torch.func) breaks for a 3-d input with a 2-d bias or a 1-d weight "
                    "(a broadcast or 'mat2 must be a matrix' error); each example answers"
       for sample in ("linear-3d-2d-bias", "linear-3d-1d-weight-0d-bias")
       for t in ("jacrev", "jacfwd", "func_hessian", "func_grad", "func_vjp", "func_jvp", "vmap")},
    **{("slice_scatter-end-only", t): "slice_scatter's batching rule does not shift a negative end= past the batch "
                                      "dim ('upper bound and lower bound inconsistent with step sign'); each example "
                                      "answers" for t in ("jacrev", "jacfwd", "func_hessian", "vmap", "vmap_in_dims_1")},
    **{("layer_norm-bias-only", t): "PyTorch's layer_norm double backward with a bias and no weight raises "
                                    "('Expected a proper Tensor but got None ... argument #1 other'); gradcli's "
                                    "second derivative is gradgradchecked (tests/ops/test_op_table.py)"
       for t in ("double_backward", "hessian_vectorize", "functional_jvp", "hvp", "vhp")},
    **{("index_select-0d-index", t): "forward mode of index_select with a 0-d index inside torch.func: PyTorch sets "
                                     "a tangent of another size and raises" for t in ("jacfwd", "func_hessian")},
    **{("rrelu-eval", t): "PyTorch's vmap has no batching rule for rrelu_with_noise ('we do not yet support "
                          "aten::rrelu_with_noise'), which its jacfwd needs even in eval mode, where nothing is "
                          "drawn; gradcli's jacfwd runs the function (leaky_relu with the mean slope)"
       for t in ("jacfwd", "func_hessian")},
    **{("linalg.lstsq-vector", t): "linalg.lstsq's batching rule takes a batch of vectors b (B, m) for one matrix "
                                   "b and raises 'input.size(-2) should match other.size(-2)'; each example "
                                   "answers (PyTorch's own per-example results equal gradcli's vmap)"
       for t in ("vmap", "vmap_in_dims_1")},
}

#: Cells of the long matrix where PyTorch's own transform is wrong for one sample (see PYTORCH_WRONG).
PYTORCH_WRONG.update({
    **{(sample, "func_hessian"): (
        "hessian", "torch.func.hessian of layer_norm/instance_norm with a weight: the weight-input block disagrees "
                   "with torch.autograd.functional.hessian and with central differences (as batch_norm's)")
       for sample in ("layer_norm-affine", "layer_norm-two-dims", "layer_norm-weight-only", "instance_norm-affine")},
    ("conv_transpose2d-stride-padding-output-padding", "hvp"): (
        "vhp", "torch.autograd.functional.hvp's double-backward trick through a transposed convolution with "
               "output_padding raises; vhp answers"),
    ("linalg.solve-broadcast-A", "jacrev"): (
        "jacobian", "torch.func.jacrev's batching rule of linalg.solve with a broadcast matrix gives other numbers "
                    "than the backward row by row"),
    **{(sample, transform): (reference, "PyTorch's scatter_reduce_jvp gives no tangent for reduce='prod' (None: "
                                        "zero), so its forward-mode transforms drop that term; its reverse-mode ones "
                                        "and central differences agree with gradcli's product rule")
       for sample in ("scatter_reduce-prod", "scatter_reduce-prod-exclude", "scatter_reduce-prod-zero")
       for transform, reference in (("jacfwd", "jacobian"), ("func_jvp", "functional_jvp"),
                                    ("func_hessian", "hessian"), ("forward_ad", "functional_jvp_tangent"))},
    **{(sample, t): (t + "_per_example", "torch.func.vmap's batching rule answers other than PyTorch's own "
                                         "per-example results: index_select treats a 0-d index as a batch of "
                                         "indices; linalg.solve with a broadcast matrix")
       for sample in ("index_select-0d-index", "linalg.solve-broadcast") for t in ("vmap", "vmap_in_dims_1")},
    **{("linalg.lu_solve-broadcast", t): (
        t + "_per_example", "torch.func.vmap's batching rule of linalg.lu_solve with B broadcast over the LU "
                            "factorization's batch answers other numbers (by 1.8e3) than PyTorch's own per-example "
                            "results, which gradcli's vmap equals") for t in ("vmap", "vmap_in_dims_1")},
    **{("triangular_solve-lower-transpose", transform): (
        reference, "PyTorch's forward-mode rule of triangular_solve with transpose=True solves with A "
                   "untransposed (generic_solve_jvp): its forward-mode transforms disagree with its own reverse "
                   "mode and with central differences (tests/ops/opinfo.py, _TRANSPOSE_JVP)")
       for transform, reference in (("forward_ad", "functional_jvp_tangent"), ("jacfwd", "jacobian"),
                                    ("func_jvp", "functional_jvp"))},
    **{(sample, "functional_jvp"): (
        "func_jvp", "torch.autograd.functional.jvp's double-backward trick goes through as_strided_scatter's "
                    "backward, whose self gradient is wrong (tests/ops/opinfo.py, _AS_STRIDED_SCATTER_BUG); "
                    "torch.func.jvp (forward mode) gives the right numbers")
       for sample in ("as_strided_scatter-2x2", "as_strided_scatter-offset", "as_strided_scatter-method")},
    ("logcumsumexp-large", "func_hessian"): (
        "hessian", "torch.func.hessian (forward over reverse) of logcumsumexp of inputs scaled by 50 is off by 3.8e3 "
                   "from PyTorch's own functional.hessian and double backward (its logcumsumexp jvp adds 1e-13 to "
                   "the running sum)"),
    ("cosine_similarity-zero-norm", "func_hessian"): (
        "hessian", "torch.func.hessian where a norm is below eps: forward mode sees the in-place clamp that reverse "
                   "mode does not, and the result disagrees with PyTorch's own functional.hessian"),
})

#: Cells where PyTorch's transform is wrong and none of its transforms gives the right numbers: (sample,
#: transform) -> why. gradcli's cell is checked against central differences in float64
#: (:func:`transform_matrix.numeric_cell`), and PyTorch's is asserted to disagree with them (so that a PyTorch
#: that fixes the bug makes the entry fail, asking for its removal).
PYTORCH_WRONG_NO_REFERENCE = {
    (sample, t): "PyTorch's as_strided_scatter_backward gives self the gradient at the scattered places instead of "
                 "everywhere else (tests/ops/opinfo.py, _AS_STRIDED_SCATTER_BUG); its reverse-mode transforms all "
                 "go through it, and its jacfwd has no batching rule for as_strided_scatter"
    for sample in ("as_strided_scatter-2x2", "as_strided_scatter-offset", "as_strided_scatter-method")
    for t in tm.NUMERIC
}

#: Cells compared at torch.testing's default absolute tolerance for float64 (1e-7) instead of the matrix's
#: 1e-10: PyTorch's own transforms differ by as much there (rounding of large exponentials).
CELL_ATOL = {
    ("logsumexp-large", "func_hessian"): 1e-7,  # PyTorch's func.hessian and functional.hessian differ by 1.7e-10
}


#: Cells of the long matrix that failed and were gradcli's bugs, fixed: they run in the default suite too.
LONG_REGRESSIONS = {
    "cosine_similarity-zero-norm": ("forward_ad", "jacfwd", "func_jvp"),  # the norm's clamp zeroes the tangent
    "diff-n0": ("vmap", "vmap_in_dims_1"),  # zeros_like of a mapped tensor is mapped
    # jacfwd (vmap of jvp with randomness="error") and func.hessian (jacfwd of jacrev) refuse a draw
    "feature_dropout-train": ("jacfwd", "func_hessian"), "alpha_dropout-train": ("jacfwd", "func_hessian"),
    "dropout1d-eval": ("jacfwd", "func_hessian"), "dropout2d-p1": ("jacfwd", "func_hessian"),
    # the gradients of embedding_bag are nodes whose derivatives are not implemented, as PyTorch's
    "embedding_bag-per-sample-weights": ("double_backward", "hessian", "hessian_vectorize", "functional_jvp", "hvp",
                                         "vhp"),
    # func.hessian runs the function's forward on dual numbers too: index_reduce has no forward-mode rule
    "index_reduce-amax": ("func_hessian",), "index_reduce-mean-exclude": ("func_hessian",),
}


@pytest.mark.parametrize("sample", sorted(LONG_REGRESSIONS))
def test_fixed_cells_of_the_long_matrix(sample, torch):
    case = next(c for _, _, c in tm.rows(True) if c.id == sample)
    pair = tm.libs(torch)
    failing = [f"{t}: {p}" for t in LONG_REGRESSIONS[sample] if (p := tm.run_cell(pair, case, t))]
    assert not failing, "\n".join(failing)


def test_every_differentiable_entry_has_its_rows():
    """Every entry of the table that has a derivative has rows (or a reason for having none); every cell named
    in PYTORCH_WRONG is an op of the table and a transform of the matrix."""
    with_rows = {op.name for op, _, _ in ROWS}
    excluded = tm.excluded_entries()
    for op in opinfo.OP_DB:
        assert op.name in with_rows or op.name in excluded, f"{op.name} has no row in the op × transform matrix"
    sample_ids = {c.id for _, _, c in tm.rows(True)}
    for name, transform in PYTORCH_WRONG:
        assert name in with_rows or name in sample_ids, name
        reference = PYTORCH_WRONG[(name, transform)][0]
        assert transform in tm.TRANSFORMS and (reference in tm.TRANSFORMS or reference in tm.REFERENCES)
    for name, transform in PYTORCH_LACKS:
        assert (name in with_rows or name in sample_ids) and transform in tm.TRANSFORMS, (name, transform)
    for name, transform in PYTORCH_WRONG_NO_REFERENCE:
        assert name in sample_ids and transform in tm.NUMERIC, (name, transform)


def test_the_matrix_is_not_trivial():
    """The matrix's comparison fails on a wrong number: exp's derivative scaled by 1.01 in gradcli only."""
    import gradcli as G

    from helpers import Arg, Case

    def fn(m, x):
        if m is G:
            e = m.exp(x).detach()
            return e + (x - x.detach()) * (e * 1.01)
        return m.exp(x)

    case = Case("exp", "exp-wrong", fn, (Arg((3,)),))
    import torch

    pair = tm.libs(torch)
    assert tm.run_cell(pair, case, "jacrev") is not None
    assert tm.run_cell(pair, case, "func_vjp") is not None


#: Cells where gradcli is known to differ from PyTorch: gaps to fix, each still failing (strict: a cell that
#: passes fails the test until its entry is removed).
GRADCLI_GAPS: dict = {
}


def entry(table: dict, case, transform: str):
    """The entry of ``table`` for a cell: keyed by the sample's id first (an entry None there: none, though the
    op has one), else by the op."""
    if (case.id, transform) in table:
        return table[(case.id, transform)]
    return table.get((case.op, transform))


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for _, _, c in ROWS])
def test_op_under_every_transform(case, torch):
    pair = tm.libs(torch)
    failing = []
    for name in tm.TRANSFORMS:
        known = entry(PYTORCH_WRONG, case, name)
        if entry(GRADCLI_GAPS, case, name) is not None:
            assert tm.run_cell(pair, case, name) is not None, (
                f"{name} of {case.id} equals PyTorch's now: remove the GRADCLI_GAPS entry")
            continue
        if (case.id, name) in PYTORCH_WRONG_NO_REFERENCE:
            problem = tm.numeric_cell(pair, case, name)
            assert tm.numeric_cell(pair, case, name, gradcli_is_torch=True) is not None, (
                f"PyTorch's {name} of {case.id} agrees with central differences now: remove the "
                "PYTORCH_WRONG_NO_REFERENCE entry")
            if problem:
                failing.append(f"{name}: {problem}")
            continue
        if entry(PYTORCH_LACKS, case, name) is not None:
            problem = tm.run_cell(pair, case, name)
            assert problem is not None and problem.startswith("PyTorch raises") and problem.endswith("answers"), (
                f"{name} of {case.id}: {problem or 'PyTorch answers now'}: remove the PYTORCH_LACKS entry")
            continue
        if known is not None:
            reference, _ = known
            problem = tm.run_cell(pair, case, name, torch_transform=reference)
            if not LONG:
                assert tm.run_cell(pair, case, reference, torch_transform=name, gradcli_is_torch=True) is not None, (
                    f"PyTorch's {name} of {case.id} agrees with its {reference} now: remove the PYTORCH_WRONG entry")
        else:
            problem = tm.run_cell(pair, case, name, atol=CELL_ATOL.get((case.id, name), tm.ATOL))
        if problem:
            failing.append(f"{name}: {problem}")
    assert not failing, "\n".join(failing)


# ================================================================================ the CLI and the session
#: Ops whose CLI rows are not compared with PyTorch, and why (the matrix above compares them, with its
#: PYTORCH_WRONG entries).
CLI_LEFT_OUT = {
    "logcumsumexp": "PyTorch's forward-mode and double-backward logcumsumexp give NaN along a dim of size 1 (its "
                    "own vhp gives the numbers gradcli gives); the CLI compares with PyTorch's jvp/hvp directly",
}


def cli_rows() -> list:
    """The matrix rows whose sample is one call of the op's function on its tensors (float, requiring grad) and
    plain numbers, so that it can be written as a program of the CLI: ``(case, text)``."""
    out = []
    for op, sample, case in ROWS:
        if op.name in CLI_LEFT_OUT:
            continue
        text = tm.cli_text(op, sample, case)
        if text is not None:
            out.append((case, text))
    return out


CLI_ROWS = cli_rows()
#: A sample of the CLI rows: every 8th (each command parses, runs and renders; the matrix above covers each op).
CLI_SAMPLE = CLI_ROWS[::8]


def _inputs(case):
    arrays = make_arrays(case.args, case.id)
    return [np.asarray(a, dtype=np.float32) for a in arrays]


def _specs(arrays) -> list:
    return [f"x{k}={json.dumps(a.tolist())}" for k, a in enumerate(arrays)]


@pytest.mark.parametrize("kind, mode", [("jacobian", "reverse"), ("jacobian", "forward"), ("hessian", None),
                                        ("jvp", None), ("hvp", None)])
def test_cli_transforms_match_pytorch(kind, mode, torch):
    """``gradcli jacobian|hessian|jvp|hvp`` (typer's runner, JSON output) on the CLI rows equal PyTorch's
    torch.autograd.functional in float32 (rtol 1e-4): the Jacobian in reverse mode, and in forward mode against
    torch.func.jacfwd (functional.jacobian's forward mode lacks batching rules that jacfwd has), the Hessian and HVP of ``(f(x) * w).sum()``; where PyTorch raises, the command
    fails with the same error type."""
    from typer.testing import CliRunner

    from gradcli.frontends.cli import app

    runner = CliRunner()
    failing = []
    for case, text in CLI_SAMPLE:
        arrays = _inputs(case)
        rng = np.random.default_rng(0)
        xs = [torch.tensor(a) for a in arrays]
        f = tm.torch_program(torch, text)
        out = f(*xs)
        w = rng.standard_normal(tuple(out.shape)).astype(np.float32)
        args = [kind]
        if kind in ("hessian", "hvp"):
            program = f"({text} * w).sum()"
            args += [program, *sum((["-i", s] for s in _specs(arrays)), []), "-c", f"w={json.dumps(w.tolist())}"]
            fs = lambda *x: (f(*x) * torch.tensor(w)).sum()  # noqa: E731
        else:
            args += [text, *sum((["-i", s] for s in _specs(arrays)), [])]
        vecs = [rng.standard_normal(a.shape).astype(np.float32) for a in arrays]
        if kind in ("jvp", "hvp"):
            flag = "--tangent" if kind == "jvp" else "--vector"
            args += sum(([flag, f"x{k}={json.dumps(v.tolist())}"] for k, v in enumerate(vecs)), [])
        if mode:
            args += ["--mode", mode]
        res = runner.invoke(app, args + ["--format", "json"])
        tv = tuple(torch.tensor(v) for v in vecs)
        try:
            argnums = tuple(range(len(xs)))
            want = {"jacobian": lambda: (torch.func.jacfwd(f, argnums=argnums)(*xs) if mode == "forward" else
                                         torch.autograd.functional.jacobian(f, tuple(xs))),
                    "hessian": lambda: torch.autograd.functional.hessian(fs, tuple(xs)),
                    "jvp": lambda: torch.autograd.functional.jvp(f, tuple(xs), tv)[1],
                    "hvp": lambda: torch.autograd.functional.hvp(fs, tuple(xs), tv)[1]}[kind]()
        except Exception as e:  # noqa: BLE001 - PyTorch refuses: the CLI must fail with the same error type
            if res.exit_code == 0 or type(e).__name__ not in res.output:
                failing.append(f"{case.id}: PyTorch raises {type(e).__name__}, the CLI: {res.output[-200:]}")
            continue
        if res.exit_code != 0:
            failing.append(f"{case.id}: exit {res.exit_code}: {res.output[-300:]}")
            continue
        got = json.loads(res.stdout)
        if kind == "jacobian":
            pairs = [(got["jacobian"][f"x{k}"]["value"], want[k]) for k in range(len(xs))]
        elif kind == "hessian":
            pairs = [(got["hessian"][f"x{a}"][f"x{b}"]["value"], want[a][b])
                     for a in range(len(xs)) for b in range(len(xs))]
        elif kind == "jvp":
            pairs = [(got["jvp"]["value"], want)]
        else:
            pairs = [(got["hvp"][f"x{k}"]["value"], want[k]) for k in range(len(xs))]
        for g, t in pairs:
            if not np.allclose(np.asarray(g, dtype=np.float64), t.numpy(), rtol=1e-4, atol=1e-5):
                failing.append(f"{case.id}: {text}: {g} vs {t.numpy().tolist()}")
    assert CLI_SAMPLE and not failing, "\n".join(failing)
