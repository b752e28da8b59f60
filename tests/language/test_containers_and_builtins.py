"""Python's built-in containers and builtins in programs, against Python itself: every public method of
``list``, ``dict``, ``set``, ``tuple`` and ``str`` that the language has (gradcli/language/containers.py), read
through an object and through its type (``str.lower``, ``dict.fromkeys``), ``collections`` (``OrderedDict``,
``defaultdict``, ``namedtuple``), ``id``/``dir``/``delattr``, and PyTorch's legacy tensor types
(``torch.FloatTensor``, ``x.type()``). Each program runs under Python with torch and under ``gradcli run`` and
prints the same; the methods that build values stay within the ``items`` limit."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from helpers import HANG_TIMEOUT, python_and_gradcli_stdout

PROGRAMS = {
    "set_methods": """
s = {3, 1}
s.add(2); s.discard(7); s.remove(3)
print(sorted(s), s.union([5, 6], {9}), s.intersection([1, 9]), s.difference({1}), s.issubset({1, 2, 3}),
      s.issuperset([1]), s.isdisjoint([4]), s.symmetric_difference([2, 8]))
t = s.copy(); t.update(range(4), [10]); t.difference_update([0]); t.intersection_update(range(5)); print(sorted(t))
t.symmetric_difference_update({1, 20}); print(sorted(t), t.pop() in {2, 3, 20}); t.clear(); print(t)
try:
    s.remove(99)
except KeyError:
    print("KeyError")
""",
    "dict_list_tuple_methods": """
d = {"a": 1}
print(d.setdefault("b", 2), d.setdefault("a", 5), d, d.popitem(), d.copy(), d.fromkeys("xy", 0))
d.clear(); print(d)
L = [3, 1, 2, -5]
L.sort(); print(L); L.sort(key=lambda v: abs(v), reverse=True); print(L, L.copy(), L.index(1), L.count(2))
L.reverse(); L.remove(1); print(L); L.clear(); print(L)
tp = (1, 2, 2, 3); print(tp.count(2), tp.index(3))
words = ["bb", "a", "ccc"]
words.sort(key=len); print(words)
""",
    "str_methods": """
st = "Hello\\tWorld"
print(st.casefold(), st.swapcase(), st.expandtabs(4), st.partition("l"), st.rpartition("l"), st.removeprefix("He"),
      st.removesuffix("ld"), st.rfind("o"), st.rindex("o"), st.isalnum(), st.isascii(), "12".isdecimal(),
      "ab".isidentifier(), "ab".islower(), "12".isnumeric(), st.isprintable(), " ".isspace(), "Ab".istitle(),
      "AB".isupper(), "{a}-{b}".format_map({"a": 1, "b": 2}), "abc".translate("".maketrans("ab", "xy")))
""",
    "types_read_as_values": """
print(dict.fromkeys(["a", "b"], 0), dict.fromkeys("xy"), str.maketrans("ab", "cd"), list(map(str.upper, ["a", "b"])))
print(str.join("-", ["a", "b"]), list.copy([1]), set.union({1}, [2]), tuple.count((1, 1), 1), dict.get({1: 2}, 1))
try:
    str.lower(1)
except TypeError as e:
    print(e)
""",
    "collections_module": """
import torch
from torch import nn
from collections import OrderedDict, defaultdict, namedtuple
import collections
od = OrderedDict([("x", 1), ("y", 2)]); od["z"] = 3
print(list(od.keys()), od["y"], len(od), isinstance(od, dict), isinstance(od, OrderedDict), type(od))
print(isinstance({}, OrderedDict), isinstance(defaultdict(int), (list, defaultdict)), type(defaultdict(int)))
od2 = collections.OrderedDict(a=torch.tensor(1.0)); print(od2["a"])
dd = defaultdict(list); dd["k"].append(1); dd["k"].append(2); print(dict(dd))
cnt = defaultdict(int)
for w in "abca":
    cnt[w] += 1
print(sorted(cnt.items()))
P = namedtuple("P", "x y")
p = P(1, y=2); print(p, p.x + p.y, p[0])
torch.manual_seed(0)
m = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 3)), ("act", nn.ReLU())]))
print(m, m.fc.weight.shape)
""",
    "id_dir_delattr": """
class A:
    k = 1
    def f(self):
        return 2
a = A(); a.v = 1
print([n for n in dir(a) if not n.startswith("__")])
delattr(a, "v"); print(hasattr(a, "v"), isinstance(id(a), int), id(a) == id(a), id(a) != id(A()))
print("sort" in dir([]), "add" in dir(set()), dir("")[-1], "setdefault" in dir({}), dir(()) == dir(tuple()))
try:
    delattr(a, "v")
except AttributeError as e:
    print(e)
""",
    "legacy_tensor_types": """
import torch
x = torch.tensor([1.5, 2.5])
print(x.type(), x.long().type(), x.double().type(), x.bool().type(), x.to(torch.uint8).type())
print(x.type(torch.LongTensor), x.type('torch.DoubleTensor'), x.type(torch.int32), x.type(dtype=torch.float64))
print(torch.FloatTensor([1, 2]), torch.FloatTensor(2).shape)
print(torch.FloatTensor, isinstance(x, torch.FloatTensor), isinstance(x, torch.LongTensor),
      isinstance(x.long(), (torch.IntTensor, torch.LongTensor)))
print(torch.ByteTensor([1, 2]).type(), torch.IntTensor([3]).dtype, torch.BoolTensor([True]))
try:
    x.type('torch.NoSuchTensor')
except ValueError as e:
    print(e)
""",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_prints_what_python_prints(tmp_path, name):
    want, got = python_and_gradcli_stdout(tmp_path, name, PROGRAMS[name])
    assert got == want


@pytest.mark.parametrize("source, what", [
    ("s = set(range(600))\nt = s.union(range(600, 1200))\n", "set.union()"),
    ("s = set(range(600))\ns.update(range(600, 1200))\n", "set.update()"),
    ("s = set(range(1000))\ns.add(-1)\n", "set.add()"),
    ("s = set()\nt = s.union(range(10 ** 12))\n", "set.union()"),
    ("d = {i: i for i in range(1000)}\nd.setdefault(-1, 0)\n", "dict.setdefault()"),
    ("d = dict.fromkeys(range(10 ** 12))\n", "dict.fromkeys()"),
    ("s = ('\\t' * 100).expandtabs(100)\n", "str.expandtabs()"),
    ("s = ('a' * 500).translate({97: 'bbbb'})\n", "str.translate()"),
])
def test_container_methods_stay_within_the_items_limit(tmp_path, source, what):
    path = tmp_path / "big.py"
    path.write_text(source)
    p = subprocess.run([sys.executable, "-m", "gradcli", "run", str(path), "--limit", "items=1000"],
                       capture_output=True, text=True, timeout=HANG_TIMEOUT,
                       env={k: v for k, v in os.environ.items() if k != "GRADCLI_DEBUG"})
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert f"LimitError: {what}" in p.stderr and "Traceback" not in p.stderr
