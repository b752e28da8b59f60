"""Classes, decorators, *args/**kwargs, global/nonlocal/del and custom autograd Functions:
programs run with ``gradcli run`` print what Python with PyTorch prints."""

from __future__ import annotations


import pytest

from gradcli.engine.errors import GradcliError
from gradcli.language.build import build_program
from gradcli.language.interpreter import Interpreter
from helpers import python_and_gradcli_stdout

CLASSES = '''
import torch

class Counter:
    """A counter."""
    total = 0

    def __init__(self, start=0, *extra, step=1, **opts):
        self.n = start
        self._step = step
        self.extra = extra
        self.opts = opts
        Counter.total += 1

    def __call__(self, k):
        self.n += k * self._step
        return self.n

    def __repr__(self):
        return f"Counter({self.n})"

    def __len__(self):
        return self.n

    def __add__(self, other):
        return Counter(self.n + other.n)

    def __eq__(self, other):
        return isinstance(other, Counter) and self.n == other.n

    def __hash__(self):
        return self.n

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError("out of range")
        return i * i

    @property
    def double(self):
        return 2 * self.n

    @double.setter
    def double(self, value):
        self.n = value // 2

    @staticmethod
    def hello(x):
        return x + 1

    @classmethod
    def make(cls, n):
        return cls(n)


class Sub(Counter):
    def __init__(self, start):
        super().__init__(start, step=10)

    def __call__(self, k):
        return super().__call__(k) + 1000


class A:
    def who(self):
        return "A"

class B(A):
    def who(self):
        return "B" + super().who()

class C(A):
    def who(self):
        return "C" + super().who()

class D(B, C):
    def who(self):
        return "D" + super().who()


c = Counter(3, 4, 5, step=2, color="red")
print(c, c.extra, c.opts, c(1), len(c), c.double, Counter.hello(1), Counter.make(7))
c.double = 20
print(c.n, list(c), 4 in c, c == Counter(10), {c: 1}[Counter(10)])
s = Sub(1)
print(s(2), isinstance(s, Counter), isinstance(c, Sub), issubclass(Sub, Counter), Counter.total, c + s)
print(repr(c), str(s), [c, s], f"{c}", D().who(), Counter.__name__, Counter.hello.__name__)
try:
    Counter(1, 2, 3, nope=1).missing
except AttributeError as e:
    print("AttributeError:", e)
try:
    Sub()
except TypeError as e:
    print("TypeError:", e)
'''

FUNCTIONS = '''
import torch

def outer():
    x = 1
    def inner():
        nonlocal x
        x += 1
        return x
    inner(); inner()
    return x

g = 5
def setg():
    global g
    g = 7
setg()
print(outer(), g)
d = {"a": 1, "b": 2}
del d["a"]
lst = [1, 2, 3, 4]
del lst[1:3]
print(d, lst)
a = b = [0]
a.append(1)
print(a is b, b)

def f(a, *args, b=2, **kw):
    return a, args, b, kw
print(f(1, 2, 3, b=4, z=5), f(*[1, 2], **{"b": 9}))

def g2(a, *, key):
    return a + key
print(g2(1, key=2))
try:
    g2(1, 2)
except TypeError as e:
    print("TypeError:", e)

@torch.no_grad()
def nog(x):
    return x * 2

x = torch.tensor([1., 2.], requires_grad=True)
print(nog(x).requires_grad)

def deco(fn):
    def wrapper(*a, **k):
        print("calling", fn.__name__)
        return fn(*a, **k)
    return wrapper

@deco
def add(a, b):
    return a + b
print(add(1, 2))

class Ctx:
    def __enter__(self):
        print("enter")
        return self
    def __exit__(self, *exc):
        print("exit", exc[0] is None)
        return True

with Ctx() as cc:
    print("inside")
with Ctx():
    raise ValueError("swallowed")
print("after")
if __name__ == "__main__":
    print("main")
'''

CUSTOM_FUNCTIONS = '''
import torch

class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result


class MulConst(torch.autograd.Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x ** 3

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * 3 * x ** 2


class SplitSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.mark_non_differentiable
        return x + y, x - y

    @staticmethod
    def backward(ctx, ga, gb):
        return ga + gb, ga - gb


x = torch.tensor([1., 2.], requires_grad=True)
y = Exp.apply(x)
print(y, y.grad_fn.name())
y.sum().backward()
print(x.grad)
x.grad = None
z = MulConst.apply(x, 3.0)
z.sum().backward()
print(z, x.grad)
w = torch.tensor([2.0, -1.0], requires_grad=True)
c = Cube.apply(w)
(g,) = torch.autograd.grad(c.sum(), w, create_graph=True)
print(c, g)
g.sum().backward()
print(w.grad)
u = torch.tensor([1., 2.], requires_grad=True)
v = torch.tensor([3., 4.], requires_grad=True)
p, q = SplitSum.apply(u, v)
(p * 2 + q * 5).sum().backward()
print(p, q, u.grad, v.grad)
with torch.no_grad():
    print(Exp.apply(x).requires_grad)
try:
    y = Exp.apply(x)
    y.sum().backward()
    y.sum().backward()
except RuntimeError as e:
    print("RuntimeError:", str(e)[:60])
'''


GENERATORS = '''
import torch

def count(n):
    i = 0
    while i < n:
        got = yield i
        if got is not None:
            i = got
        i += 1
    return "done"

def chain(*its):
    for it in its:
        yield from it

def squares(xs):
    for x in xs:
        if x < 0:
            continue
        try:
            yield x * x
        finally:
            pass

def data_iter(batch_size, features):
    n = len(features)
    for i in range(0, n, batch_size):
        yield features[i:i + batch_size]

print(list(count(4)), list(chain([1, 2], (3, 4), count(2))), sum(squares([-1, 2, 3])))
g = count(10)
print(next(g), next(g), g.send(7), next(g))
f = torch.arange(5.)
for b in data_iter(2, f):
    print(b)
gen = (x * 2 for x in range(3))
print(next(gen), list(gen))
print([k for k in squares(range(4))], max(count(5)))
def first():
    yield 1
    return 5
it = first()
print(next(it))
try:
    next(it)
except StopIteration as e:
    print("stop", e)
print(sorted(count(3), reverse=True), dict(zip("ab", count(2))))
'''


BUILTINS = r'''
print(divmod(7, 3), list(map(lambda v: v * 2, [1, 2])), list(filter(None, [0, 1, 2])))
print("ab".ljust(5) + "|", "ab".rjust(5), "ab".center(6, "*"), "A,b".lower(), "x y".split(), " s ".strip())
print("{:>6.2f}|{}".format(3.14159, "z"), "-".join(["a", "b"]), "%5.1f" % 2.25)
print(1, 2, sep="-", end="!\n", flush=True)
print(sorted([3, 1, 2], key=lambda v: -v), max([1, 5, 3], key=lambda v: -v), min(4, 2))
print(round(2.567, 2), abs(-3), sum([1, 2], 10), any([]), all([]), isinstance(1.0, float), isinstance([], (list, tuple)))
print(str(3), repr("q"), tuple([1]), set([1, 1]), dict(a=1), list(reversed([1, 2])), list(enumerate("ab", 1)))
print("abc".startswith("a"), "abc".endswith("c"), "abc".replace("b", "x"), "abc".upper(), "a b".title(), "x".zfill(3))
print(f"{3.0:.2e}", f"{'s'!r:>5}", "abc"[::-1], "abc".find("c"), "a-b".count("-"), "abc".index("b"))
'''


@pytest.mark.parametrize("name, program", [("classes", CLASSES), ("functions", FUNCTIONS),
                                           ("custom_functions", CUSTOM_FUNCTIONS), ("generators", GENERATORS),
                                           ("builtins", BUILTINS)])
def test_program_prints_what_python_and_pytorch_print(tmp_path, torch, name, program):
    want, got = python_and_gradcli_stdout(tmp_path, name, program)
    assert got == want


def run(text):
    out: list = []
    Interpreter(write=out.append).run(build_program(text))
    return "".join(out)


@pytest.mark.parametrize("text, error", [
    ("class A(1):\n    pass", "TypeError: gradcli classes derive from classes of the program, object or "
                               "torch.autograd.Function, torch.nn.Module, torch.utils.data.Dataset; got a 'int'"),
    ("class A:\n    pass\nclass B(A, A):\n    pass", "TypeError: Cannot create a consistent method resolution order"),
    ("class A:\n    def __init__(self):\n        return 1\nA()", "TypeError: __init__() should return None, not 'int'"),
    ("class A:\n    pass\nA(1)", "TypeError: A() takes no arguments"),
    ("class A:\n    pass\nA()()", "TypeError: 'A' object is not callable"),
    ("class A:\n    pass\nlen(A())", "TypeError: object of type 'A' has no len()"),
    ("class A:\n    pass\nA() + 1", "TypeError: unsupported operand type(s) for +: 'A' and 'int'"),
    ("def f():\n    super()\nf()", "RuntimeError: super(): no arguments"),
    ("def f():\n    nonlocal x\n    x = 1\nf()", "SyntaxError: no binding for nonlocal 'x' found"),
    ("class E(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x * 2\n"
     "    @staticmethod\n    def backward(ctx, g):\n        return g, g\nx = tensor([1.], requires_grad=True)\n"
     "E.apply(x).sum().backward()", "RuntimeError: function EBackward returned an incorrect number of gradients "
                                    "(expected 1, got 2)"),
    ("class E(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x * 2\n"
     "    @staticmethod\n    def backward(ctx, g):\n        return ones(3)\nx = tensor([1., 2.], requires_grad=True)\n"
     "E.apply(x).sum().backward()", "RuntimeError: Function EBackward returned an invalid gradient at index 0 - got "
                                    "[3] but expected shape compatible with [2]"),
])
def test_errors_are_pythons_and_pytorchs(text, error):
    with pytest.raises(GradcliError) as e:
        run(text)
    assert f"{e.value.type}: {e.value.message}".startswith(error)


def test_iterator_protocol_of_a_class():
    out = run("class Countdown:\n    def __init__(self, n):\n        self.n = n\n    def __iter__(self):\n"
              "        return self\n    def __next__(self):\n        if self.n == 0:\n            raise StopIteration\n"
              "        self.n -= 1\n        return self.n\nfor k in Countdown(3):\n    print(k)\n"
              "print(sum(Countdown(4)), [k for k in Countdown(2)])\n")
    assert out == "2\n1\n0\n6 [1, 0]\n"


def test_the_parser_cache_lives_in_a_directory_of_the_users_own(tmp_path, monkeypatch):
    # Lark's cache is a pickle: never in the shared temporary directory, only where no one else can write
    import os
    import stat

    from gradcli.language.grammar import cache_path

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = cache_path()
    assert path is not None and path.startswith(str(tmp_path / "cache" / "gradcli"))
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    shared = tmp_path / "shared"
    (shared / "gradcli").mkdir(parents=True)
    os.chmod(shared / "gradcli", 0o777)
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared))
    assert cache_path() is None  # writable by others: no cache rather than a pickle someone else could leave


def test_a_modules_eval_is_its_mode_switch_never_pythons_eval():
    # nn.Module.eval() (PyTorch's training flag) is a method of gradcli's Module; Python's eval is no name at all
    out = run("m = torch.nn.Linear(2, 1)\nprint(m.training)\nm.eval()\nprint(m.training, m.train().training)\n")
    assert out == "True\nFalse True\n"
    for text in ("m = torch.nn.Linear(2, 1)\nm.eval('1 + 1')", "eval('1 + 1')", "torch.nn.Module.eval('1')"):
        with pytest.raises(GradcliError) as e:
            run(text)
        assert e.value.type in ("TypeError", "NameError", "AttributeError"), (text, e.value)
