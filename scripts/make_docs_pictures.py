"""Make the README's pictures in docs/ with the commands the README shows (run from anywhere):

    python scripts/make_docs_pictures.py

Each picture is made by running gradcli as a user would (``python -m gradcli ...`` in the repository's top
folder), so the pictures are what those commands produce. Needs Graphviz's ``dot`` and matplotlib
(``pip install -e '.[plot]'``). tests/pictures/test_docs.py checks that the README shows these same commands.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The commands, as the README writes them (after ``gradcli``), each writing one file of docs/.
COMMANDS = [
    'grad "h = (x * w + b).tanh(); h.sum()" -i "x=[1., 2.]" -i "w=[0.5, -1.]" -i "b=0.1" --graph svg '
    '--graph-values -o docs/graph.svg',
    'plot "x.sin() * x ** 2" --over "x=-3:3" --order 2 -o docs/plot.png',
    'plot "x.relu() - (x - 1).clamp(min=0) * 2" --over "x=-2:3" -o docs/kinks.png',
    'plot "(x ** 2 + y ** 2).sqrt()" --over "x=-2:2" --over "y=-2:2" -o docs/field.png',
]


def main() -> int:
    (ROOT / "docs").mkdir(exist_ok=True)
    for command in COMMANDS:
        args = [sys.executable, "-m", "gradcli", *shlex.split(command)]
        done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            sys.stderr.write(f"gradcli {command}\n{done.stderr}")
            return done.returncode
        print(f"gradcli {command}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
