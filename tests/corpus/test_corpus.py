"""The corpus of PyTorch autograd programs, run with `gradcli run`.

Every program in `programs/` is run once, all in parallel, by the installed gradcli (`python -m gradcli run`),
and its standard output is compared with `expected/NAME.out`, which PyTorch 2.13 printed
(`scripts/gen_corpus_expected.py`). A program matches when gradcli exits 0 and prints exactly that output;
the programs of `ROUNDING_SENSITIVE` match when their numbers agree to rtol 1e-4 (see `outputs_agree`).

The ratchet: every program named in `PASSING` must match (a regression fails the suite). Any other program
is still run and compared; one that does not match yet is reported as XFAIL with the first reason
(`pytest -rA` or `-rx` lists it), and one that matches passes with a warning to add it to `PASSING`.
`test_pass_rate` prints "corpus: N/M programs match". Nothing is skipped.

`python tests/corpus/test_corpus.py` prints one line per program (status and first reason) without pytest,
which is how `FAILURES.md` is kept up to date.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

# pytest-xdist (the suite runs with -n auto): this module's tests run in one worker, so that corpus_runs (module-
# scoped) runs every corpus program once.
pytestmark = pytest.mark.xdist_group("corpus")

HERE = Path(__file__).resolve().parent
PROGRAMS_DIR = HERE / "programs"
EXPECTED_DIR = HERE / "expected"
PROGRAMS = sorted(p.stem for p in PROGRAMS_DIR.glob("[0-9][0-9][0-9]_*.py"))

# Seconds one program may run before it counts as hung (and failed): a guard against hangs, not a speed check,
# since a loaded machine runs a program many times slower than an idle one (gradcli's step limit ends runaway
# loops long before this).
TIMEOUT = 600.0
RTOL = 1e-4
ATOL = 1e-6

# The ratchet: programs that match and must keep matching. Add a program here as soon as it matches.
PASSING: list[str] = [
    "001_requires_grad_basics",
    "002_requires_grad_inplace_flag",
    "003_vjp_and_no_grad",
    "004_jacobian_rows",
    "005_retain_graph_accumulation",
    "006_linear_regression_manual",
    "007_polynomial_autograd",
    "008_custom_function_exp",
    "009_custom_function_legendre",
    "011_higher_order_gradients",
    "012_autograd_grad_options",
    "013_hessian_rosenbrock",
    "014_functional_api",
    "015_tensor_hooks",
    "016_post_accumulate_and_node_hooks",
    "017_graph_walk",
    "018_saved_tensors",
    "019_forward_mode_ad",
    "020_torch_func_transforms",
    "021_dynamic_control_flow",
    "022_retain_grad_nonleaf",
    "023_inplace_errors",
    "024_softmax_jacobian",
    "025_legacy_variable",
    "026_gradcheck",
    "027_leaf_table",
    "028_grad_mode_decorators",
    "029_two_layer_net_tensors",
    "030_two_layer_net_autograd",
    "039_functional_losses",
    "046_functional_mlp",
    "048_test_style_checks",
    "050_generator_minibatches",
    "052_seeded_property_check",
    "053_setup_context_double_backward",
    # torch.nn and torch.optim
    "010_custom_function_outputs",
    "031_nn_sequential_polynomial",
    # 032_optim_rmsprop: matches on AVX2 CPUs, not on AVX-512 ones (FAILURES.md, "Depends on the CPU")
    "033_custom_module",
    "034_dynamic_net",
    "035_linear_regression_nn",
    "036_logistic_regression",
    "037_mlp_cross_entropy_adam",
    "038_xor_mlp",
    "040_clip_grad_weight_decay",
    "041_lr_scheduler",
    "042_module_hooks",
    "043_freeze_and_count",
    "044_straight_through_estimator",
    "045_gradient_penalty",
    "047_adam_rosenbrock",
    "049_batchnorm_train_eval",
    "051_embedding_numpy_grads",
]

# Programs whose printed numbers depend on float32 rounding order (reductions, transcendental kernels,
# many optimizer steps, full-precision `.item()` prints): compared to rtol 1e-4. Each is listed with its
# reason in README.md ("Rounding-sensitive programs"); test_rounding_list_documented checks that.
ROUNDING_SENSITIVE: dict[str, str] = {
    "006_linear_regression_manual": "prints a float32 .item() at full precision after 20 gradient steps",
    "007_polynomial_autograd": "prints float32 .item() at full precision: sums of 200 terms over 500 steps",
    "009_custom_function_legendre": "loss rounded to 6 digits after 300 steps of sums over 50 points",
    "025_legacy_variable": "prints float32 .item() of a loss at full precision",
    "029_two_layer_net_tensors": "loss rounded to 5 digits after 50 steps of matmuls",
    "030_two_layer_net_autograd": "loss rounded to 5 digits after 50 steps of matmuls",
    "031_nn_sequential_polynomial": "300 SGD steps on sums of 100 terms of x**3",
    "032_optim_rmsprop": "200 RMSprop steps (sqrt of running averages) on sums of 100 terms",
    "033_custom_module": "400 SGD steps on sums of 100 terms of x**3",
    "034_dynamic_net": "300 steps of SGD with momentum; prints 5-digit losses near 1e-3",
    "035_linear_regression_nn": "60 SGD steps of a mean over 8 samples",
    "036_logistic_regression": "100 SGD steps through sigmoid and log (float32 kernels)",
    "037_mlp_cross_entropy_adam": "60 Adam steps through log_softmax; prints 6 decimals",
    "038_xor_mlp": "200 momentum steps through tanh, sigmoid and log",
    "040_clip_grad_weight_decay": "a norm over all parameters and 5 clipped steps",
    "043_freeze_and_count": "prints a loss rounded to 5 digits after Linear layers (matmuls) and 3 SGD steps",
    "045_gradient_penalty": "double backward through leaky_relu and a norm; 5-digit prints",
    "046_functional_mlp": "prints cross_entropy losses to 6 decimals over 5 steps",
    "047_adam_rosenbrock": "500 Adam steps; prints 5 decimals",
    "050_generator_minibatches": "prints mean squared errors with 6 decimals after 12 SGD steps",
}

# A number as Python and PyTorch print it (ints, decimals, exponents, nan and inf).
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?\b(?:nan|inf)\b")


@dataclass(frozen=True)
class Run:
    """What `gradcli run` did with one program."""

    returncode: int | None  # None: killed after TIMEOUT seconds
    stdout: str
    stderr: str
    seconds: float


def run_program(name: str, cwd: str) -> Run:
    """Run one corpus program with `python -m gradcli run` in `cwd`; never raises for the program's failure."""
    env = dict(os.environ, NO_COLOR="1", PYTHONIOENCODING="utf-8", PYTHONHASHSEED="0")
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "gradcli", "run", str(PROGRAMS_DIR / f"{name}.py")],
                              cwd=cwd, env=env, capture_output=True, text=True, encoding="utf-8",
                              errors="replace", timeout=TIMEOUT)
    except subprocess.TimeoutExpired as stopped:
        out = stopped.stdout.decode("utf-8", "replace") if isinstance(stopped.stdout, bytes) else stopped.stdout
        return Run(None, out or "", f"timed out after {TIMEOUT:.0f} s", time.perf_counter() - start)
    return Run(done.returncode, done.stdout, done.stderr, time.perf_counter() - start)


def run_all(names: list[str]) -> dict[str, Run]:
    """Run the programs in parallel, one worker per core; returns {name: Run}."""
    with tempfile.TemporaryDirectory(prefix="gradcli-corpus-") as cwd:
        with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
            runs = pool.map(lambda name: run_program(name, cwd), names)
            return dict(zip(names, runs))


def _split_numbers(text: str) -> tuple[list[str], list[float]]:
    """The text between numbers (whitespace runs collapsed, as column widths follow the numbers) and the numbers."""
    parts = NUMBER.split(text)
    numbers = [float(m) for m in NUMBER.findall(text)]
    return [" ".join(p.split()) for p in parts], numbers


def outputs_agree(actual: str, expected: str, rounding_sensitive: bool) -> bool:
    """Exact equality; for a rounding-sensitive program, the same text with every number within rtol 1e-4.

    The numeric comparison uses `math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-6)` pairwise over the numbers
    found in both outputs (the absolute floor lets values printed near 0, such as -0.0000 against 0.0000,
    agree); the text between the numbers must be the same up to whitespace.
    """
    if actual == expected:
        return True
    if not rounding_sensitive:
        return False
    text_a, num_a = _split_numbers(actual)
    text_e, num_e = _split_numbers(expected)
    if text_a != text_e or len(num_a) != len(num_e):
        return False
    return all(math.isclose(a, e, rel_tol=RTOL, abs_tol=ATOL) or (math.isnan(a) and math.isnan(e))
               for a, e in zip(num_a, num_e))


def expected_text(name: str) -> str:
    return (EXPECTED_DIR / f"{name}.out").read_text(encoding="utf-8")


def matches(name: str, run: Run) -> bool:
    """True when gradcli exited 0 and printed PyTorch's output (to rtol 1e-4 for rounding-sensitive ones)."""
    return run.returncode == 0 and outputs_agree(run.stdout, expected_text(name), name in ROUNDING_SENSITIVE)


def first_reason(name: str, run: Run) -> str:
    """A one-line reason why the program does not match: gradcli's error, or where the output first differs."""
    if run.returncode is None:
        return f"timeout: no result within {TIMEOUT:.0f} s"
    if run.returncode != 0:
        lines = [line for line in run.stderr.splitlines() if line.strip()]
        location = next((line.rstrip(":") for line in lines if re.match(r"^\S.*:\d+:\d+:$", line)), "")
        error = next((line for line in lines if re.match(r"^[A-Za-z_.]*(Error|Exception|Interrupt)\b", line)
                      or line.startswith("gradcli:")), lines[-1] if lines else "no message")
        where = location.rsplit("/", 1)[-1] if location else ""
        return f"exit {run.returncode}: {error}" + (f" (at {where})" if where else "")
    got, want = run.stdout.splitlines(), expected_text(name).splitlines()
    for i, (g, w) in enumerate(zip(got, want), start=1):
        if g != w:
            return f"wrong output at line {i}: got {g!r}, PyTorch printed {w!r}"
    return f"wrong output: {len(got)} lines, PyTorch printed {len(want)}"


@pytest.fixture(scope="module")
def corpus_runs() -> dict[str, Run]:
    return run_all(PROGRAMS)


def test_corpus_files_consistent():
    """Every program has its expected output and a provenance header, and the lists name real programs."""
    assert len(PROGRAMS) >= 45, f"the corpus holds {len(PROGRAMS)} programs; it must hold at least 45"
    outputs = sorted(p.stem for p in EXPECTED_DIR.glob("*.out"))
    assert outputs == PROGRAMS, "run scripts/gen_corpus_expected.py: programs and expected/*.out differ"
    for name in PROGRAMS:
        header = (PROGRAMS_DIR / f"{name}.py").read_text(encoding="utf-8").splitlines()[:8]
        assert any(line.startswith("# Source:") for line in header), f"{name}.py: no '# Source:' header"
    unknown = (set(PASSING) | set(ROUNDING_SENSITIVE)) - set(PROGRAMS)
    assert not unknown, f"PASSING/ROUNDING_SENSITIVE name programs that do not exist: {sorted(unknown)}"
    assert len(PASSING) == len(set(PASSING))


def test_rounding_list_documented():
    """Each rounding-sensitive program is listed, with its reason, in the corpus README."""
    readme = (HERE / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Rounding-sensitive programs", 1)[-1]
    missing = [name for name in ROUNDING_SENSITIVE if name not in section]
    assert not missing, f"README.md's 'Rounding-sensitive programs' does not list {missing}"


def test_outputs_agree_rules():
    """Exact unless rounding-sensitive; then numbers to rtol 1e-4, the text between them equal up to spaces."""
    assert outputs_agree("tensor([1., 2.])\n", "tensor([1., 2.])\n", rounding_sensitive=False)
    assert not outputs_agree("13.257688522338867\n", "13.25768756866455\n", rounding_sensitive=False)
    assert outputs_agree("13.257688522338867\n", "13.25768756866455\n", rounding_sensitive=True)
    assert outputs_agree("tensor([-0.0000,  1.0000])\n", "tensor([0.0000, 1.0000])\n", rounding_sensitive=True)
    assert not outputs_agree("loss 1.001\n", "loss 1.002\n", rounding_sensitive=True)
    assert not outputs_agree("loss 1.0\n", "cost 1.0\n", rounding_sensitive=True)
    assert not outputs_agree("1.0 2.0\n", "1.0\n", rounding_sensitive=True)


@pytest.mark.parametrize("name", PROGRAMS)
def test_program(name: str, corpus_runs: dict[str, Run]):
    run = corpus_runs[name]
    if matches(name, run):
        if name not in PASSING:
            warnings.warn(f"corpus program {name} matches now: add it to PASSING in {Path(__file__).name}",
                          stacklevel=1)
        return
    reason = first_reason(name, run)
    if name in PASSING:
        pytest.fail(f"regression: {name} matched before and does not now: {reason}\n"
                    f"--- stderr ---\n{run.stderr[-2000:]}", pytrace=False)
    pytest.xfail(reason)


def test_pass_rate(corpus_runs: dict[str, Run]):
    """Prints the pass rate (shown by -rA or -s) and keeps the whole corpus run within its time budget."""
    matched = [name for name in PROGRAMS if matches(name, corpus_runs[name])]
    slowest = max(corpus_runs.items(), key=lambda item: item[1].seconds)
    print(f"corpus: {len(matched)}/{len(PROGRAMS)} programs match "
          f"(ratchet: {len(PASSING)} must; slowest {slowest[0]} {slowest[1].seconds:.1f} s)")
    assert set(PASSING) <= set(matched), "see the failing test_program cases"


def main() -> int:
    """Print each program's status and first reason (the worklist behind FAILURES.md)."""
    start = time.perf_counter()
    runs = run_all(PROGRAMS)
    matched = 0
    for name in PROGRAMS:
        run = runs[name]
        ok = matches(name, run)
        matched += ok
        status = "match" if ok else "FAIL "
        print(f"{status} {name:40s} {run.seconds:5.1f}s  {'' if ok else first_reason(name, run)}")
    print(f"corpus: {matched}/{len(PROGRAMS)} programs match ({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
