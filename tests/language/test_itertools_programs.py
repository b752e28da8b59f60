"""Python's ``itertools`` in programs, run as a user runs them (``gradcli run FILE`` in a subprocess): what each
function gives equals what Python prints for the same program, and hostile uses end at the limits (``items``:
an endless or huge iterator read by a builtin that loops in C; ``steps``: a program's endless loop) with a
LimitError, exit 1, and no traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from helpers import HANG_TIMEOUT

#: A program that uses every function of the module, printable by Python and by gradcli alike.
PROGRAM = """\
import itertools
from itertools import chain, product
print(list(itertools.product([1, 2, 3], [4, 5])))
print(list(product('ab', repeat=2)))
print(list(itertools.permutations('abc', 2)), list(itertools.permutations([1, 2, 3])))
print(list(itertools.combinations(range(4), 2)), list(itertools.combinations_with_replacement('ab', 2)))
print(list(itertools.combinations([1, 2], 3)))
print(list(chain([1], (2, 3), 'ab')), list(chain.from_iterable([[1], [2, 3]])))
print(list(itertools.islice(itertools.count(5, 2), 3)), list(itertools.islice('abcdefg', 1, 6, 2)))
print(list(itertools.repeat('x', 3)), itertools.repeat('x', 2), itertools.count(5, 2))
print(list(itertools.islice(itertools.cycle('ab'), 5)))
print(list(itertools.accumulate([1, 2, 3])), list(itertools.accumulate([[1], [2]])))
print(list(itertools.accumulate([1, 2, 3], lambda a, b: a * b, initial=10)), list(itertools.accumulate(['a', 'b'])))
print(list(itertools.zip_longest([1, 2], 'abc', fillvalue='-')))
print([(k, list(g)) for k, g in itertools.groupby('aabbbc')])
print([(k, len(list(g))) for k, g in itertools.groupby([1, 3, 2, 4, 5], key=lambda v: v % 2)])
print(list(itertools.starmap(lambda a, b: a + b, [(2, 3), (3, 2)])))
print(list(itertools.takewhile(lambda x: x < 3, [1, 2, 5, 1])), list(itertools.dropwhile(lambda x: x < 3, [1, 2, 5, 1])))
print(list(itertools.pairwise('abcd')), list(itertools.compress('abcd', [1, 0, 1, 0])))
print(list(itertools.filterfalse(lambda x: x % 2, range(6))))
a, b, c = itertools.tee([1, 2, 3], 3)
print(list(a), next(b), list(b), list(c))
total = 0
for i in itertools.count(1):
    if i > 4:
        break
    total += i
print(total, sum(itertools.repeat(2, 5)), max(itertools.islice(itertools.count(), 10)))
print(dict(zip(itertools.count(), 'xyz')), sorted(itertools.chain([3, 1], [2])))
def gen():
    yield 1
    yield 2
print(list(itertools.product(gen(), [0])))
"""


def run(source: str, tmp_path, *options):
    path = tmp_path / "prog.py"
    path.write_text(source)
    return subprocess.run([sys.executable, "-m", "gradcli", "run", str(path), *options], capture_output=True,
                          text=True, timeout=HANG_TIMEOUT, cwd=tmp_path)


def test_every_function_prints_what_python_prints(tmp_path):
    p = run(PROGRAM, tmp_path)
    assert p.returncode == 0, p.stderr
    want = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=HANG_TIMEOUT)
    assert want.returncode == 0, want.stderr
    assert p.stdout == want.stdout


def test_pytorch_s_cartesian_prod_example(tmp_path):
    """The example of torch.cartesian_prod's documentation: itertools.product beside the tensor op."""
    torch = pytest.importorskip("torch")
    source = ("import itertools\nimport torch\na = [1, 2, 3]\nb = [4, 5]\nprint(list(itertools.product(a, b)))\n"
              "print(torch.cartesian_prod(torch.tensor(a), torch.tensor(b)))\n")
    p = run(source, tmp_path)
    assert p.returncode == 0, p.stderr
    import itertools

    assert p.stdout == f"{list(itertools.product([1, 2, 3], [4, 5]))}\n" \
                       f"{torch.cartesian_prod(torch.tensor([1, 2, 3]), torch.tensor([4, 5]))}\n"


def test_python_s_errors_are_the_program_s(tmp_path):
    source = ("import itertools\n"
              "try:\n    itertools.product([1], repeat=-1)\nexcept ValueError as e:\n    print('ValueError', e)\n"
              "try:\n    itertools.combinations([1], 'x')\nexcept TypeError as e:\n    print('TypeError')\n"
              "try:\n    next(itertools.islice([], 2))\nexcept StopIteration:\n    print('StopIteration')\n")
    p = run(source, tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "ValueError repeat argument cannot be negative\nTypeError\nStopIteration\n"


# (program, the limit's name in the message, options): each ends with exit 1 and the limit's LimitError
HOSTILE = {
    "product consumed into a list": (
        "import itertools\nx = list(itertools.product(range(10**6), repeat=10))\n",
        "LimitError: itertools.product() would give more than 10,000,000 items", ()),
    "endless count in a loop": (
        "import itertools\nfor i in itertools.count():\n    pass\n", "StepLimitError", ()),
    "endless count in a while loop": (
        "import itertools\nc = itertools.count()\nwhile True:\n    next(c)\n", "StepLimitError", ("--max-steps", "100000")),
    "endless repeat searched in C": (
        "import itertools\nprint(5 in itertools.repeat(0))\n", "LimitError: itertools.repeat() would give more", ()),
    "endless cycle summed": (
        "import itertools\nprint(sum(itertools.cycle([1, 2])))\n", "items", ("--limit", "items=100000")),
    "endless chain of repeats into any": (
        "import itertools\nprint(any(itertools.chain(itertools.repeat(0), [1])))\n",
        "LimitError: itertools.repeat() would give more", ("--limit", "items=100000")),
    "dropwhile over count with a builtin predicate": (
        "import itertools\nprint(next(itertools.dropwhile(bool, itertools.count(1))))\n",
        "LimitError: itertools.count() would give more", ("--limit", "items=100000")),
    "a huge repeat width": (
        "import itertools\nitertools.product([0], repeat=10**9)\n", "LimitError: itertools.product() would have", ()),
    "a huge permutation length": (
        "import itertools\nitertools.permutations([0], 10**9)\n", "LimitError: itertools.permutations() would have",
        ()),
    "accumulate concatenating lists": (
        "import itertools\nx = list(itertools.accumulate([[0] * 6000000, [0] * 6000000]))\n",
        "LimitError: the concatenation would have", ()),
    "tee of many": (
        "import itertools\nitertools.tee([1], 10**9)\n", "LimitError: itertools.tee() would have", ()),
    "zip_longest of endless counts": (
        "import itertools\nx = dict(itertools.zip_longest(itertools.count(), [1]))\n",
        "LimitError: itertools.zip_longest() would give more", ("--limit", "items=100000")),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_uses_end_at_the_limits(name, tmp_path):
    source, message, options = HOSTILE[name]
    p = run(source, tmp_path, *options)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert message in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr, p.stderr
