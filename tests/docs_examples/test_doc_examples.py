"""PyTorch's documented examples under ``gradcli run --seed 0 --notebook`` print what PyTorch prints.

The examples are extracted from the installed torch's docstrings (:mod:`doc_examples`); what PyTorch printed is
``expected.json``, regenerated with ``scripts/gen_doc_examples.py`` (which also says why an example is left
out: ``excluded.json``). The ratchet, ``passing.txt``, names the examples that match: each must keep matching.
Every other in-scope example is run too and counted, and ``test_report`` prints the counts per category
(``pytest -s`` or ``-rA`` shows them); an example that matches but is not in the ratchet passes with a warning
to add it (``scripts/gen_doc_examples.py --update-ratchet``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="the documented examples are read from the installed torch")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import doc_examples as D  # noqa: E402

# pytest-xdist (the suite runs with -n auto): this module's tests run in one worker, so that test_report counts the
# results of the examples this process has run and runs only the others.
pytestmark = pytest.mark.xdist_group("doc_examples")

HERE = Path(__file__).resolve().parent
EXPECTED = json.loads((HERE / "expected.json").read_text())
PASSING = set((HERE / "passing.txt").read_text().split())
HANG_TIMEOUT = 600


def _examples():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {e.id: e for e in D.extract(torch)}


EXAMPLES = _examples()
_RESULTS: dict[str, bool] = {}


def _check(example_id: str) -> tuple[bool, str]:
    example = EXAMPLES.get(example_id)
    if example is None:
        return False, f"{example_id}: the installed torch has no such example (regenerate expected.json)"
    want = EXPECTED[example_id]
    if example.sha != want["sha"]:
        return False, f"{example_id}: the installed torch's example changed (regenerate expected.json)"
    out, err = D.run_gradcli(example)
    ok = not err and D.outputs_agree(want["output"], out)
    _RESULTS[example_id] = ok
    return ok, f"{example_id}: {err or 'output differs'}\n--- PyTorch\n{want['output']}--- gradcli\n{out}"


def test_expected_outputs_are_for_in_scope_examples_only():
    excluded = json.loads((HERE / "excluded.json").read_text())
    assert not set(excluded) & set(EXPECTED)
    for example_id in EXPECTED:
        example = EXAMPLES.get(example_id)
        assert example is None or example.out_of_scope() is None, example_id


def test_ratchet_names_only_expected_examples():
    assert PASSING <= set(EXPECTED), sorted(PASSING - set(EXPECTED))


@pytest.mark.parametrize("example_id", sorted(PASSING))
def test_passing_example_still_matches(example_id):
    ok, why = _check(example_id)
    assert ok, why


def test_report():
    """Run the in-scope examples outside the ratchet too, and print the counts per category."""
    total, matched = Counter(), Counter()
    newly = []
    for example_id, want in sorted(EXPECTED.items()):
        if example_id not in _RESULTS:
            ok, _ = _check(example_id)
        ok = _RESULTS.get(example_id, False)
        total[want["category"]] += 1
        matched[want["category"]] += ok
        if ok and example_id not in PASSING:
            newly.append(example_id)
    lines = [f"{cat}: {matched[cat]}/{total[cat]}" for cat in sorted(total)]
    print("documented examples: " + f"{sum(matched.values())}/{sum(total.values())} match; " + ", ".join(lines))
    if newly:
        warnings.warn(f"documented examples that match but are not in passing.txt: {newly}")
    assert sum(matched.values()) >= len(PASSING)


def test_the_command_line_prints_the_same():
    """A few ratchet examples through the real command, as a user runs them."""
    for example_id in sorted(PASSING)[:: max(1, len(PASSING) // 4)][:4]:
        example = EXAMPLES[example_id]
        proc = subprocess.run([sys.executable, "-m", "gradcli", "run", "--seed", "0", "--notebook", "-"],
                              input=example.program(), capture_output=True, text=True, timeout=HANG_TIMEOUT)
        assert proc.returncode == 0, (example_id, proc.stderr)
        assert D.outputs_agree(EXPECTED[example_id]["output"], proc.stdout), (example_id, proc.stdout)
