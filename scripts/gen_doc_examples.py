"""Regenerate the expected outputs of PyTorch's documented examples and report how gradcli fares.

    python scripts/gen_doc_examples.py [--update-ratchet] [--only SUBSTRING] [--show-failures]

Extracts every docstring example of the installed torch (``tests/docs_examples/doc_examples.py``), runs each
twice with PyTorch after ``torch.manual_seed(0)`` (an example whose output differs between the runs, or that
raises, is left out with its reason), writes ``tests/docs_examples/expected.json`` (what PyTorch printed, per
example id, with the hash of the example's text; the text itself is not stored) and
``tests/docs_examples/excluded.json`` (the ids left out and why), then runs every example with gradcli and
prints the counts per category. ``--update-ratchet`` adds the examples that now match to
``tests/docs_examples/passing.txt`` (it never removes one). Needs torch and IPython (for IPython's display).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent / "tests" / "docs_examples"
sys.path.insert(0, str(HERE))

import doc_examples as D  # noqa: E402


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def torch_output(example, torch, seconds=30):
    """PyTorch's output of ``example``, or (None, reason)."""
    outs = []
    for _ in range(2):
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(seconds)
        try:
            outs.append(D.run_torch(example, torch))
        except _Timeout:
            return None, f"takes over {seconds} s under PyTorch"
        except BaseException as err:  # noqa: BLE001 - the example's own error
            return None, f"fails under PyTorch: {type(err).__name__}"
        finally:
            signal.alarm(0)
    if D.mask(outs[0]) != D.mask(outs[1]):
        return None, "nondeterministic under PyTorch (two runs with seed 0 differ)"
    return outs[0], None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--update-ratchet", action="store_true")
    ap.add_argument("--only", default=None)
    ap.add_argument("--show-failures", action="store_true")
    ap.add_argument("--no-regenerate", action="store_true", help="use the stored expected.json")
    args = ap.parse_args(argv)
    import os
    import tempfile
    import torch
    import warnings

    warnings.simplefilter("ignore")
    os.chdir(tempfile.mkdtemp(prefix="gradcli-doc-examples-"))  # an example may write files (torch.save)
    examples = D.extract(torch)
    if args.only:
        examples = [e for e in examples if args.only in e.id]
    if args.no_regenerate:
        expected = json.loads((HERE / "expected.json").read_text())
        excluded = json.loads((HERE / "excluded.json").read_text())
    else:
        expected, excluded = {}, {}
        for e in examples:
            reason = e.out_of_scope()
            if reason is None:
                out, reason = torch_output(e, torch)
            if reason is not None:
                excluded[e.id] = reason
                continue
            expected[e.id] = {"category": e.category, "sha": e.sha, "output": out}
        if not args.only:
            (HERE / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
            (HERE / "excluded.json").write_text(json.dumps(excluded, indent=1, sort_keys=True) + "\n")
    total, ok = Counter(), Counter()
    passing = []
    for e in examples:
        if e.id not in expected:
            continue
        total[e.category] += 1
        out, err = D.run_gradcli(e)
        if not err and D.outputs_agree(expected[e.id]["output"], out):
            ok[e.category] += 1
            passing.append(e.id)
        elif args.show_failures:
            print(f"FAIL {e.id}: {err or 'output differs'}")
    for cat in sorted(total):
        print(f"{cat:16} {ok[cat]:4}/{total[cat]:<4} {100 * ok[cat] / total[cat]:5.1f}%")
    n, k = sum(total.values()), sum(ok.values())
    print(f"{'all':16} {k:4}/{n:<4} {100 * k / max(n, 1):5.1f}%   ({len(excluded)} out of scope or not runnable)")
    if args.update_ratchet:
        path = HERE / "passing.txt"
        old = set(path.read_text().split()) if path.exists() else set()
        path.write_text("".join(f"{i}\n" for i in sorted(old | set(passing))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
