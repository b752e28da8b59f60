"""Tests for gradcli.engine.printing: exact torch str()/repr() of tensors.

The first half pins strings quoted in the PyTorch tutorials and a few hand
checked layouts; it runs without torch.  The second half uses real torch as
an oracle (skipped when torch is not installed).
"""

from __future__ import annotations

import ast
import contextlib
from collections import namedtuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from gradcli.engine.printing import format_display, format_tensor, format_value

f32 = np.float32
SUPPORTED_DTYPES = [
    np.float16, np.float32, np.float64,
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.bool_,
]
FLOAT_DTYPES = [np.float16, np.float32, np.float64]


class FakeNode:
    """Duck-typed autograd node: only ``name()`` is needed."""

    def __init__(self, name):
        self._name = name

    def name(self):
        return self._name


class FakeTensor:
    """Duck-typed gradcli tensor as format_value sees it."""

    def __init__(self, data, requires_grad=False, grad_fn=None):
        self.data = np.asarray(data)
        self.requires_grad = requires_grad or grad_fn is not None
        self.grad_fn = None if grad_fn is None else FakeNode(grad_fn)
        self.is_leaf = grad_fn is None


# --------------------------------------------------------------------------
# Strings from the PyTorch tutorials and hand-checked layouts (no torch).
# --------------------------------------------------------------------------

@pytest.mark.parametrize(
    "data, kwargs, expected",
    [
        (np.array([0, 4, 8, 12], f32), {}, "tensor([ 0.,  4.,  8., 12.])"),
        (np.array(28, f32), {"grad_fn": "MulBackward0"}, "tensor(28., grad_fn=<MulBackward0>)"),
        (np.ones((2, 2), f32), {"requires_grad": True},
         "tensor([[1., 1.],\n        [1., 1.]], requires_grad=True)"),
        (np.array([0.2, 2.0, 0.0002], f32), {}, "tensor([2.0000e-01, 2.0000e+00, 2.0000e-04])"),
        (np.array([True] * 4), {}, "tensor([True, True, True, True])"),
        (np.array(True), {}, "tensor(True)"),
        (np.array(16, f32), {}, "tensor(16.)"),
        (np.array([[0.0927, 0.0086, 0.0453]] * 2, f32), {},
         "tensor([[0.0927, 0.0086, 0.0453],\n        [0.0927, 0.0086, 0.0453]])"),
        (np.array([1.4357], f32), {"grad_fn": "AddBackward0"}, "tensor([1.4357], grad_fn=<AddBackward0>)"),
        (2 * np.ones((5, 5), f32) + 2 * np.eye(5, dtype=f32), {},
         "tensor([[4., 2., 2., 2., 2.],\n"
         "        [2., 4., 2., 2., 2.],\n"
         "        [2., 2., 4., 2., 2.],\n"
         "        [2., 2., 2., 4., 2.],\n"
         "        [2., 2., 2., 2., 4.]])"),
    ],
)
def test_tutorial_strings(data, kwargs, expected):
    assert format_tensor(data, **kwargs) == expected


@pytest.mark.parametrize(
    "data, kwargs, expected",
    [
        (np.array([], f32), {}, "tensor([])"),
        (np.zeros((0, 3), f32), {}, "tensor([], size=(0, 3))"),
        # Empty tensors spell out int64/bool: no element shows the kind.
        (np.zeros((2, 0, 3), np.int64), {}, "tensor([], size=(2, 0, 3), dtype=torch.int64)"),
        (np.array([], np.float64), {"default_dtype": np.float64}, "tensor([])"),
        (np.array([], f32), {"default_dtype": np.float64}, "tensor([], dtype=torch.float32)"),
        (np.array([1, 2], np.int32), {}, "tensor([1, 2], dtype=torch.int32)"),
        (np.array([True, False]), {}, "tensor([ True, False])"),
        (np.array([1.0, np.nan, -np.inf, -0.0], f32), {}, "tensor([1., nan, -inf, -0.])"),
        (np.array([1e-5, np.nan, -0.0]), {},
         "tensor([1.0000e-05,        nan, -0.0000e+00], dtype=torch.float64)"),
        (np.array([1e-5, np.nan, -0.0]), {"default_dtype": np.float64},
         "tensor([1.0000e-05,        nan, -0.0000e+00])"),
        (np.arange(2000), {}, "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"),
        (np.arange(30, dtype=f32).reshape(2, 3, 5) * f32(0.5), {},
         "tensor([[[ 0.0000,  0.5000,  1.0000,  1.5000,  2.0000],\n"
         "         [ 2.5000,  3.0000,  3.5000,  4.0000,  4.5000],\n"
         "         [ 5.0000,  5.5000,  6.0000,  6.5000,  7.0000]],\n"
         "\n"
         "        [[ 7.5000,  8.0000,  8.5000,  9.0000,  9.5000],\n"
         "         [10.0000, 10.5000, 11.0000, 11.5000, 12.0000],\n"
         "         [12.5000, 13.0000, 13.5000, 14.0000, 14.5000]]])"),
        (np.full(30, 1.5, f32), {"requires_grad": True},
         "tensor([" + ", ".join(["1.5000"] * 9) + ",\n"
         "        " + ", ".join(["1.5000"] * 9) + ",\n"
         "        " + ", ".join(["1.5000"] * 9) + ",\n"
         "        1.5000, 1.5000, 1.5000], requires_grad=True)"),
        # grad_fn wins over requires_grad, as in torch.
        (np.array(1.0, f32), {"requires_grad": True, "grad_fn": "SumBackward0"},
         "tensor(1., grad_fn=<SumBackward0>)"),
    ],
)
def test_known_layouts(data, kwargs, expected):
    assert format_tensor(data, **kwargs) == expected


def test_rejects_unsupported_dtype_and_default():
    with pytest.raises(TypeError):
        format_tensor(np.array([1 + 2j]))
    with pytest.raises(TypeError):
        format_tensor(np.array(["a"]))
    with pytest.raises(ValueError):
        format_tensor(np.array([1.0], f32), default_dtype=np.int64)


def test_non_native_byte_order_is_accepted():
    assert format_tensor(np.array([1.5, 2.0], dtype=">f4")) == "tensor([1.5000, 2.0000])"


def test_format_value_plain_python():
    assert format_value(None) == "None"
    assert format_value(True) == "True"
    assert format_value(42) == "42"
    assert format_value(0.1 + 0.2) == "0.30000000000000004"
    assert format_value("hello 'x'") == "hello 'x'"
    assert format_value(["a", 1.5, None]) == "['a', 1.5, None]"
    assert format_value({"k": (1,)}) == "{'k': (1,)}"
    loop = [1]
    loop.append(loop)
    assert format_value(loop) == str(loop)
    Point = namedtuple("Point", "x y")
    assert format_value(Point(1, "b")) == "Point(x=1, y='b')"


def test_format_value_tensors():
    x = FakeTensor(np.array([0, 4, 8, 12], f32), requires_grad=True)
    y = FakeTensor(np.array([0, 4, 8, 12], f32), grad_fn="MulBackward0")
    plain = FakeTensor(np.array([0, 4, 8, 12], f32))
    assert format_value(plain) == "tensor([ 0.,  4.,  8., 12.])"
    assert format_value(x) == "tensor([ 0.,  4.,  8., 12.], requires_grad=True)"
    assert format_value((plain, y)) == (
        "(tensor([ 0.,  4.,  8., 12.]), tensor([ 0.,  4.,  8., 12.], grad_fn=<MulBackward0>))"
    )
    assert format_value((plain,)) == "(tensor([ 0.,  4.,  8., 12.]),)"
    z = FakeTensor(np.array([1.0, 2.0]))
    assert format_value([z], default_dtype=np.float64) == "[tensor([1., 2.])]"
    assert format_value([z]) == "[tensor([1., 2.], dtype=torch.float64)]"


def test_format_value_grad_fn_object():
    node = FakeNode("MulBackward0")
    text = format_value(node)
    assert text == f"<MulBackward0 object at {hex(id(node))}>"
    assert format_value((node,)) == f"(<MulBackward0 object at {hex(id(node))}>,)"


# Jupyter's Out[n] (IPython's pretty printer, width 79). The expected strings are IPython 9.18's
# IPython.lib.pretty.pretty() of the same values built with torch 2.13.
_ROW = FakeTensor(np.array([0, 4, 8, 12], f32))
_ROW_GRAD = FakeTensor(np.array([0, 4, 8, 12], f32), grad_fn="MulBackward0")
_SQUARE = FakeTensor(np.ones((2, 2), f32))


@pytest.mark.parametrize("value, expected", [
    ((FakeTensor(np.array(100, f32), requires_grad=True), FakeTensor(np.array(1600, f32))),
     "(tensor(100., requires_grad=True), tensor(1600.))"),
    ((_ROW_GRAD, _ROW), "(tensor([ 0.,  4.,  8., 12.], grad_fn=<MulBackward0>),\n tensor([ 0.,  4.,  8., 12.]))"),
    ((_SQUARE, _ROW), "(tensor([[1., 1.],\n         [1., 1.]]),\n tensor([ 0.,  4.,  8., 12.]))"),
    ([1, _SQUARE], "[1,\n tensor([[1., 1.],\n         [1., 1.]])]"),
    ([(1, 2), ["a" * 30, "b" * 30], {3, 1, 2}],
     "[(1, 2),\n ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb'],\n {1, 2, 3}]"),
    (([1.5] * 12, ["abc"] * 3),
     "([1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5],\n ['abc', 'abc', 'abc'])"),
    (([1.5] * 12, ["abc"] * 12), "([1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5],\n ['abc',\n"
     + "  'abc',\n" * 10 + "  'abc'])"),
    ((_ROW,), "(tensor([ 0.,  4.,  8., 12.]),)"),
    ("it's", '"it\'s"'),
    (set(), "set()"),
    ({"b", "a"}, "{'a', 'b'}"),
    (0.1 + 0.2, "0.30000000000000004"),
    (_ROW_GRAD, "tensor([ 0.,  4.,  8., 12.], grad_fn=<MulBackward0>)"),
])
def test_format_display_is_ipythons_layout(value, expected):
    assert format_display(value) == expected


def test_format_display_none_and_grad_fn():
    assert format_display(None) is None  # Jupyter shows nothing
    node = FakeNode("AddBackward0")
    assert format_display(node) == f"<AddBackward0 at {hex(id(node))}>"  # IPython's form, not repr's
    loop = [1]
    loop.append(loop)
    assert format_display(loop) == "[1, [...]]"


def test_module_does_not_import_torch():
    import gradcli.engine.printing as mod

    with open(mod.__file__, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    # "": the engine's own run context (the print options of torch.set_printoptions), never torch
    assert imported <= {"__future__", "math", "numpy", "types", "typing", ""}


# --------------------------------------------------------------------------
# Oracle: real torch.
# --------------------------------------------------------------------------

_NP_TO_TORCH_DEFAULT = {np.float16: "float16", np.float32: "float32", np.float64: "float64"}


@contextlib.contextmanager
def torch_default_dtype(torch, np_dtype):
    old = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, _NP_TO_TORCH_DEFAULT[np_dtype]))
    try:
        yield
    finally:
        torch.set_default_dtype(old)


def torch_str(torch, arr, suffix, default_dtype):
    """str() of a torch tensor with arr's values, really carrying the suffix state.

    Returns (text, grad_fn_name) so the caller can pass the same name on.
    """
    with torch_default_dtype(torch, default_dtype):
        t = torch.from_numpy(arr.copy())
        grad_fn = None
        if suffix == "requires_grad":
            t.requires_grad_(True)
        elif suffix == "grad_fn":
            # "* 1" is exact for every float, nan, inf and -0.0.
            t = t.requires_grad_(True) * 1
            grad_fn = type(t.grad_fn).__name__
        return str(t), grad_fn


def check_against_torch(arr, suffix="none", default_dtype=np.float32):
    torch = pytest.importorskip("torch")
    if arr.dtype.kind != "f":
        suffix = "none"  # torch cannot make such tensors require grad
    expected, grad_fn = torch_str(torch, arr, suffix, default_dtype)
    got = format_tensor(
        arr,
        requires_grad=suffix == "requires_grad",
        grad_fn=grad_fn,
        default_dtype=default_dtype,
    )
    assert got == expected, f"\nexpected:\n{expected}\ngot:\n{got}"


def _edge_cases():
    rng = np.random.default_rng(1234)
    cases = {
        "scalar-float": np.array(3.14159, f32),
        "scalar-nan": np.array(np.nan, f32),
        "scalar-neg-inf": np.array(-np.inf),
        "scalar-neg-zero": np.array(-0.0, f32),
        "scalar-int8": np.array(-128, np.int8),
        "scalar-false": np.array(False),
        "scalar-tiny": np.array(1e-30, f32),
        "scalar-huge-int": np.array(1e10),
        "all-zero": np.zeros((3, 4), f32),
        "all-nonfinite": np.array([np.nan, np.inf, -np.inf], f32),
        "ratio-exactly-1000": np.array([1.0, 1000.0], f32),
        "ratio-just-over-1000": np.array([0.5, 500.5], f32),
        "int-ratio-over-1000": np.array([1.0, 1001.0], f32),
        "max-exactly-1e8": np.array([1e8, 2e7]),
        "max-over-1e8": np.array([1e8 + 1, 2e7]),
        "min-exactly-1e-4": np.array([1e-4, 0.05]),
        "min-under-1e-4-f32": np.array([1e-4, 0.05], f32),  # float32(1e-4) < 1e-4
        "rounding-ties": np.array([0.00005, 0.00015, 2.5e-4, 0.12345, 0.99995]),
        "float16-mix": np.array([65504, -0.000061, 1.5, np.nan], np.float16),
        "neg-zero-mix": np.array([-0.0, 0.0, -1.5, 2.25], f32),
        "bool-all-false": np.zeros(7, bool),
        "uint8-range": np.arange(256, dtype=np.uint8),
        "int64-extremes": np.array([np.iinfo(np.int64).min, 0, np.iinfo(np.int64).max]),
        "wrap-1d-100": rng.standard_normal(100).astype(f32),
        "wrap-2d-wide": rng.standard_normal((3, 25)).astype(f32) * 1e3,
        "wrap-4d": rng.standard_normal((2, 2, 3, 14)),
        "summ-1d-1001": rng.standard_normal(1001).astype(f32),
        "no-summ-1d-1000": rng.standard_normal(1000).astype(f32),
        "summ-2d": rng.standard_normal((50, 40)).astype(f32),
        "summ-2d-short-rows": rng.standard_normal((500, 3)).astype(f32),
        "summ-3d": rng.integers(-50, 50, (7, 8, 20)).astype(f32),
        "summ-4d-int": rng.integers(-9, 9, (2, 8, 9, 10), dtype=np.int16),
        "summ-edge-values-only": np.concatenate(
            [np.ones(3), np.full(1000, 1e-9), np.ones(3)]).astype(f32),
        "empty-1d-int": np.array([], np.int32),
        "empty-3d-bool": np.zeros((0, 2, 2), bool),
        "empty-f16": np.zeros((4, 0), np.float16),
        "suffix-wrap-long-last-line": rng.standard_normal(80).astype(np.float64),
    }
    return list(cases.items())


@pytest.mark.parametrize("name, arr", _edge_cases(), ids=[n for n, _ in _edge_cases()])
@pytest.mark.parametrize("suffix", ["none", "requires_grad", "grad_fn"])
@pytest.mark.parametrize("default_dtype", [np.float32, np.float64])
def test_edge_cases_match_torch(name, arr, suffix, default_dtype):
    check_against_torch(arr, suffix, default_dtype)


def test_suffix_wraps_exactly_at_linewidth():
    # Sweep lengths so the last line ends at every column around 80, for each
    # suffix length; this pins torch's off-by-two last_line_len arithmetic.
    rng = np.random.default_rng(7)
    for digits in range(0, 7):
        for n in range(1, 30):
            for dtype in (np.float16, np.float64) if digits <= 4 else (np.float64,):
                # Integer-valued floats print "d." so the element width is digits + 2.
                arr = rng.integers(10**digits // 10, 10**digits, n, endpoint=True).astype(dtype)
                for suffix in ("none", "requires_grad", "grad_fn"):
                    check_against_torch(arr, suffix)


@st.composite
def random_arrays(draw):
    # Hypothesis picks the seed and the categories (sampled_from draws them
    # evenly); numpy's rng picks sizes and magnitudes, because hypothesis'
    # small-integer bias would otherwise starve the wrapped, summarized and
    # scientific regimes.
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    layout = draw(st.sampled_from(["small", "wide", "big", "empty"]))
    ndim = draw(st.sampled_from([1, 2, 3, 4, 0]))
    if ndim == 0:
        shape = ()
    elif layout == "small":
        shape = tuple(rng.integers(1, 8, ndim))
    elif layout == "wide":
        # Rows long enough to wrap at 80 columns, total <= 1000.
        shape = tuple(rng.integers(1, 4, ndim - 1)) + (int(rng.integers(10, 80)),)
    elif layout == "big":
        # Crosses threshold=1000 (mostly), with sides above and below 2 * edgeitems.
        lo, hi = {1: (990, 1300), 2: (20, 60), 3: (8, 16), 4: (5, 9)}[ndim]
        shape = tuple(rng.integers(lo, hi, ndim))
    else:
        sides = rng.integers(0, 5, ndim)
        sides[rng.integers(0, ndim)] = 0
        shape = tuple(sides)
    shape = tuple(int(n) for n in shape)
    # Floats have the interesting formatting rules, so they are drawn more often.
    dtype = np.dtype(draw(st.sampled_from(SUPPORTED_DTYPES + 2 * FLOAT_DTYPES)))
    size = int(np.prod(shape))

    if dtype.kind == "b":
        values = rng.random(size) < draw(st.floats(0, 1))
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        lim = draw(st.sampled_from([1, 10, 1000, int(info.max)]))
        lo = max(int(info.min), -lim)
        values = rng.integers(lo, min(lim, int(info.max)), size=size, endpoint=True)
    else:
        kind = draw(st.sampled_from(["normal", "loguniform", "integers", "rounded", "pool"]))
        e1, e2 = sorted(int(e) for e in rng.integers(-9, 10, 2))
        if kind == "normal":
            values = rng.standard_normal(size) * 10.0**e1
        elif kind == "loguniform":
            values = 10.0 ** rng.uniform(e1, e2, size) * rng.choice([-1, 1], size)
        elif kind == "integers":
            values = rng.integers(-(10**e2), 10**e2, size=size, endpoint=True).astype(np.float64)
        elif kind == "rounded":
            values = np.round(rng.standard_normal(size) * 10.0**e2, int(rng.integers(0, 7)))
        else:
            pool = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 1e-4, 9.99e-5, 1e8, 1.0000001e8,
                             1000.0, 0.001, 123.456, 3.0, -7.0, 65504.0, 1e-7])
            values = rng.choice(pool, size)
        n_special = draw(st.integers(0, 3))
        if size and n_special:
            specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0])
            idx = rng.integers(0, size, n_special)
            values[idx] = rng.choice(specials, n_special)
        with np.errstate(over="ignore"):
            values = values.astype(dtype)  # float16 overflow to inf is intended
    return np.asarray(values, dtype=dtype).reshape(shape)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    arr=random_arrays(),
    suffix=st.sampled_from(["none", "requires_grad", "grad_fn"]),
    default_dtype=st.sampled_from([np.float32, np.float64, np.float16]),
)
def test_random_tensors_match_torch(arr, suffix, default_dtype):
    check_against_torch(arr, suffix, default_dtype)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    arr=hnp.arrays(
        dtype=st.sampled_from(SUPPORTED_DTYPES),
        shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6),
    ),
    suffix=st.sampled_from(["none", "requires_grad", "grad_fn"]),
    default_dtype=st.sampled_from([np.float32, np.float64]),
)
def test_arbitrary_bit_patterns_match_torch(arr, suffix, default_dtype):
    # hypothesis' element strategies reach subnormals, extremes, nan and -0.0.
    check_against_torch(arr, suffix, default_dtype)


def test_format_value_tuple_matches_torch():
    torch = pytest.importorskip("torch")
    a = np.array([0, 4, 8, 12], f32)
    x = torch.from_numpy(a.copy()).requires_grad_(True)
    y = x * 1
    expected = str((x.detach(), y, x, [1.5, "s", None]))
    got = format_value(
        (FakeTensor(a), FakeTensor(a, grad_fn="MulBackward0"),
         FakeTensor(a, requires_grad=True), [1.5, "s", None])
    )
    assert got == expected


def test_grad_fn_object_repr_shape_matches_torch():
    torch = pytest.importorskip("torch")
    y = torch.ones(2, requires_grad=True) * 1
    node = FakeNode("MulBackward0")
    torch_text = repr(y.grad_fn)
    ours = format_value(node)
    # Addresses differ, the layout must not.
    assert torch_text.rsplit(" ", 1)[0] == ours.rsplit(" ", 1)[0]
    assert torch_text.rsplit(" ", 1)[1][:2] == ours.rsplit(" ", 1)[1][:2] == "0x"
