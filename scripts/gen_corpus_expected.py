"""Generate the expected standard output of the corpus programs with real PyTorch.

Usage (from the repository root, in a venv with torch 2.13 installed):

    python scripts/gen_corpus_expected.py              # every program in tests/corpus/programs/
    python scripts/gen_corpus_expected.py 007 015      # only programs whose name starts with these
    python scripts/gen_corpus_expected.py --check      # compare with the stored files, write nothing

Each program runs twice as `python PROGRAM` (in a fresh temporary directory, one thread, the second run with
another PYTHONHASHSEED), and its standard output is written to `tests/corpus/expected/NAME.out`. A program is
refused (nothing written, exit 1) when:

- it exits with a non-zero status (a corpus program must run under PyTorch as it is);
- the two runs print different output (time, hash order or anything else nondeterministic);
- its output holds a memory address (`0x7f...`, `object at ...`), which gradcli cannot reproduce;
- the torch imported is not 2.13 (the expected files are PyTorch 2.13's output; `--any-torch` overrides).

Standard error (warnings) is not recorded: the corpus test compares standard output only.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = ROOT / "tests" / "corpus" / "programs"
EXPECTED = ROOT / "tests" / "corpus" / "expected"
TORCH_VERSION = "2.13"
TIMEOUT = 300  # seconds per run; the programs take a few seconds under torch

# An address as CPython or PyTorch prints it: `<... object at 0x7f3a2c1e4d90>`, `0x55d0c3a2b6f0`.
ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}|\bobject at\b")


def torch_version() -> str:
    """The version string of the torch this interpreter imports (a subprocess, so this script stays light)."""
    out = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def run_once(program: Path, hashseed: str) -> subprocess.CompletedProcess:
    """Run `python program` in an empty temporary directory with one CPU thread; returns the finished process."""
    env = dict(os.environ, PYTHONHASHSEED=hashseed, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONIOENCODING="utf-8", PYTHONDONTWRITEBYTECODE="1")
    with tempfile.TemporaryDirectory(prefix="corpus-") as cwd:
        return subprocess.run([sys.executable, str(program)], cwd=cwd, env=env, capture_output=True,
                              text=True, encoding="utf-8", timeout=TIMEOUT)


def expected_output(program: Path) -> tuple[str | None, str]:
    """(stdout, "") when the program is deterministic and address-free, else (None, the reason)."""
    first = run_once(program, "0")
    if first.returncode != 0:
        tail = "\n".join(first.stderr.strip().splitlines()[-5:])
        return None, f"exit status {first.returncode} under torch:\n{tail}"
    found = ADDRESS.search(first.stdout)
    if found:
        return None, f"the output holds a memory address ({found.group(0)!r}), which no other run reproduces"
    second = run_once(program, "1")
    if second.returncode != 0 or second.stdout != first.stdout:
        return None, "two runs printed different output: the program is not deterministic"
    return first.stdout, ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("only", nargs="*", help="name prefixes of the programs to run (default: all)")
    parser.add_argument("--check", action="store_true", help="compare with the stored files; write nothing")
    parser.add_argument("--any-torch", action="store_true", help=f"allow a torch other than {TORCH_VERSION}")
    args = parser.parse_args(argv)

    version = torch_version()
    if not version.startswith(TORCH_VERSION + ".") and not args.any_torch:
        print(f"torch {version} is installed; the expected output is torch {TORCH_VERSION}'s "
              f"(pip install torch=={TORCH_VERSION}.0, or --any-torch)", file=sys.stderr)
        return 2

    programs = sorted(PROGRAMS.glob("[0-9][0-9][0-9]_*.py"))
    if args.only:
        programs = [p for p in programs if any(p.stem.startswith(prefix) for prefix in args.only)]
    if not programs:
        print("no program matches", file=sys.stderr)
        return 2

    EXPECTED.mkdir(parents=True, exist_ok=True)
    problems = 0
    for program in programs:
        target = EXPECTED / f"{program.stem}.out"
        out, reason = expected_output(program)
        if out is None:
            problems += 1
            print(f"REFUSED {program.name}: {reason}", file=sys.stderr)
            continue
        if args.check:
            stored = target.read_text(encoding="utf-8") if target.exists() else None
            if stored != out:
                problems += 1
                print(f"STALE   {program.name}: {target.name} differs from torch {version}'s output",
                      file=sys.stderr)
            else:
                print(f"ok      {program.name}")
            continue
        target.write_text(out, encoding="utf-8", newline="\n")
        print(f"wrote   {target.relative_to(ROOT)} ({len(out.splitlines())} lines)")

    if not args.only and not args.check:
        names = {p.stem for p in programs}
        for orphan in sorted(EXPECTED.glob("*.out")):
            if orphan.stem not in names:
                problems += 1
                print(f"ORPHAN  {orphan.name}: no program of that name (delete it)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
