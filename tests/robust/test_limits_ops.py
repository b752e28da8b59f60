"""The ``elements`` limit in the ops whose result can be larger than any of their inputs: repeat, cat/concat,
stack, index_select, advanced indexing (index tensors broadcast against each other), bmm (and matmul's batched
path through it), linear with a bias (addmm) and einsum. Each refuses the result before allocating it, with a
message giving the op, the shape and the number of elements, and works just under the limit.

Through the CLI (the helpers of tests/test_robust.py) at the default limit, with shapes that would need tens of
gigabytes or more, and with ``--limit elements=100``; and in-process with :func:`gradcli.engine.limits.configure`.
Each test fails if its op's guard is removed: under a lowered limit the op would otherwise succeed.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import gradcli as G
from gradcli.engine import limits
from gradcli.engine.errors import LimitError

from test_robust import fails, ok, run

LONG = "dtype=torch.int64"

# ---------------------------------------------------------------------------------- CLI, default limit

# (program, what the message names): results of 10**10 elements or more, from inputs that are views or small
HUGE = [
    ("ones(1, 1).repeat(100000, 100000)", "repeat() would have shape [100000, 100000], 10,000,000,000 elements"),
    ("x.repeat(100000, 100000)", "repeat() would have shape [100000, 100000]"),
    ("torch.cat([ones(1).expand(100000000), ones(1)])", "cat() would have shape [100000001], 100,000,001 elements"),
    ("torch.concat([ones(1, 1).expand(100000, 1000)] * 1000)", "cat() would have shape [100000000, 1000]"),
    ("cat([ones(1, 1).expand(1000, 100000), ones(1, 1).expand(1000, 100000)], 1)", "cat() would have shape "
     "[1000, 200000], 200,000,000 elements"),
    ("stack([ones(1).expand(60000000)] * 2)", "stack() would have shape [2, 60000000], 120,000,000 elements"),
    ("stack([ones(1).expand(100000)] * 100000, 1)", "stack() would have shape [100000, 100000]"),
    (f"index_select(ones(1, 1).expand(1, 100000), 0, zeros(100000, {LONG}))",
     "index_select() would have shape [100000, 100000], 10,000,000,000 elements"),
    (f"ones(100, 100).index_select(1, zeros(100000000, {LONG}).expand(100000000))",
     "index_select() would have shape [100, 100000000]"),
    (f"ones(100, 100)[zeros(100000, 1, {LONG}), zeros(1, 100000, {LONG})]",
     "indexing a tensor of shape [100, 100] would have shape [100000, 100000], 10,000,000,000 elements"),
    (f"ones(10, 10, 10)[zeros(100000, 1, {LONG}), :, zeros(1, 100000, {LONG})]",
     "indexing a tensor of shape [10, 10, 10] would have shape [100000, 100000, 10]"),
    (f"ones(10, 10, 10)[:, zeros(100000, 1, {LONG}), zeros(1, 100000, {LONG})]",
     "indexing a tensor of shape [10, 10, 10] would have shape [10, 100000, 100000]"),
    ("bmm(ones(1, 100000, 2), ones(1, 2, 100000))",
     "the matrix product of [1, 100000, 2] and [1, 2, 100000] would have shape [1, 100000, 100000]"),
    ("matmul(ones(2, 100000, 2), ones(2, 2, 100000))", "would have shape [2, 100000, 100000]"),
    ("linear(ones(100000, 2), ones(100000, 2), ones(100000))",
     "the matrix product of [100000, 2] and [2, 100000] would have shape [100000, 100000]"),
    ("einsum('i,j->ij', ones(100000), ones(100000))",
     "einsum() would have shape [100000, 100000], 10,000,000,000 elements"),
    ("einsum('...i,j', ones(1000, 1000), ones(100000))", "einsum() would have shape [1000, 1000, 100000]"),
    ("torch.einsum('ab,cd->abcd', ones(1000, 1000), ones(1000, 1000))", "einsum() would have shape "
     "[1000, 1000, 1000, 1000]"),
    # a small result, a huge intermediate: the outer product torch.einsum forms of the first two operands
    ("einsum('ij,kl,lm->ijk', ones(200, 200), ones(200, 200), ones(200, 1))",
     "broadcasting [200, 200, 1, 1, 1] and [1, 1, 200, 200, 1] would have shape [200, 200, 200, 200, 1]"),
]


@pytest.mark.parametrize("program, fragment", HUGE, ids=[p for p, _ in HUGE])
def test_default_limit_refuses_huge_results(program, fragment):
    # refused before the work: computed, each would need 400 MB to 4 TB (a MemoryError, or no error at all)
    fails(run(program, "-i", "x=1."), 1, "LimitError: ", fragment, "the limit is 100,000,000 (elements per tensor)",
          "--limit elements=N", "GRADCLI_MAX_ELEMENTS")


# ---------------------------------------------------------------------------------- CLI, lowered limit

# (input x, program over the limit, its message, the same program at the limit, d(sum)/dx at the limit)
LOWERED = [
    ("1.", "x.repeat(11, 10)", "repeat() would have shape [11, 10], 110 elements",
     "x.repeat(10, 10).sum()", 100.0),
    ("ones(2, 5)", "x.repeat(1, 11, 1)", "repeat() would have shape [1, 22, 5], 110 elements",
     "x.repeat(1, 10, 1).sum()", [[10.0] * 5] * 2),
    ("ones(5, 10)", "torch.cat([x, x, ones(1, 10)])", "cat() would have shape [11, 10], 110 elements",
     "torch.cat([x, x]).sum()", [[2.0] * 10] * 5),
    ("ones(5, 10)", "concat([x, x, ones(1, 10)], 0)", "cat() would have shape [11, 10], 110 elements",
     "concat([x, x], 0).sum()", [[2.0] * 10] * 5),
    ("ones(10, 5)", "cat((x, ones(10, 6)), dim=1)", "cat() would have shape [10, 11], 110 elements",
     "cat((x, ones(10, 5)), dim=1).sum()", [[1.0] * 5] * 10),
    ("ones(5, 10)", "stack([x, x, x])", "stack() would have shape [3, 5, 10], 150 elements",
     "stack([x, x]).sum()", [[2.0] * 10] * 5),
    ("ones(5, 10)", "stack([x, x, x], dim=-1)", "stack() would have shape [5, 10, 3], 150 elements",
     "stack([x, x], dim=-1).sum()", [[2.0] * 10] * 5),
    ("ones(10, 10)", f"index_select(x, 0, zeros(11, {LONG}))", "index_select() would have shape [11, 10], 110 "
     "elements", f"index_select(x, 0, zeros(10, {LONG})).sum()", [[10.0] * 10] + [[0.0] * 10] * 9),
    ("ones(10, 10)", f"x.index_select(1, zeros(11, {LONG}))", "index_select() would have shape [10, 11], 110 "
     "elements", f"x.index_select(1, zeros(10, {LONG})).sum()", [[10.0] + [0.0] * 9] * 10),
    ("ones(10, 10)", f"x[zeros(11, 1, {LONG}), zeros(1, 10, {LONG})]",
     "indexing a tensor of shape [10, 10] would have shape [11, 10], 110 elements",
     f"x[zeros(10, 1, {LONG}), zeros(1, 10, {LONG})].sum()", [[100.0] + [0.0] * 9] + [[0.0] * 10] * 9),
    ("ones(10, 10)", "x[[0] * 11]", "indexing a tensor of shape [10, 10] would have shape [11, 10], 110 elements",
     "x[[0] * 10].sum()", [[10.0] * 10] + [[0.0] * 10] * 9),
    ("ones(2, 5, 2)", f"x[zeros(21, {LONG}), :, zeros(21, {LONG})]",
     "indexing a tensor of shape [2, 5, 2] would have shape [21, 5], 105 elements",
     f"x[zeros(20, {LONG}), :, zeros(20, {LONG})].sum()", [[[20.0, 0.0]] * 5, [[0.0, 0.0]] * 5]),
    ("ones(1, 10, 2)", "bmm(x, ones(1, 2, 11))", "the matrix product of [1, 10, 2] and [1, 2, 11] would have shape "
     "[1, 10, 11], 110 elements", "bmm(x, ones(1, 2, 10)).sum()", [[[10.0, 10.0]] * 10]),
    ("ones(1, 10, 2)", "matmul(x, ones(1, 2, 11))", "would have shape [1, 10, 11], 110 elements",
     "matmul(x, ones(1, 2, 10)).sum()", [[[10.0, 10.0]] * 10]),
    ("ones(10, 2)", "linear(x, ones(11, 2), ones(11))", "the matrix product of [10, 2] and [2, 11] would have shape "
     "[10, 11], 110 elements", "linear(x, ones(10, 2), ones(10)).sum()", [[10.0, 10.0]] * 10),
    ("ones(10)", "einsum('i,j->ij', x, ones(11))", "einsum() would have shape [10, 11], 110 elements",
     "einsum('i,j->ij', x, ones(10)).sum()", [10.0] * 10),
    ("ones(10)", "einsum('i,j', x, ones(11))", "einsum() would have shape [10, 11], 110 elements",
     "einsum('i,j', x, ones(10)).sum()", [10.0] * 10),
    ("ones(10)", "torch.einsum('i,jk->jik', x, ones(1, 11))", "einsum() would have shape [1, 10, 11], 110 elements",
     "torch.einsum('i,jk->jik', x, ones(1, 10)).sum()", [10.0] * 10),
]


@pytest.mark.parametrize("x, over, fragment, under, grad", LOWERED, ids=[t[1] for t in LOWERED])
def test_lowered_limit_refuses_over_and_allows_up_to_it(x, over, fragment, under, grad):
    fails(run(over, "-i", f"x={x}", "--limit", "elements=100"), 1, "LimitError: ", fragment,
          "the limit is 100 (elements per tensor)", "--limit elements=N")
    doc = ok(under, "-i", f"x={x}", "--limit", "elements=100")
    assert doc["grads"]["x"]["value"] == grad
    # and raising the limit lets the refused program run
    needed = re.search(r"([0-9,]+) elements", fragment).group(1).replace(",", "")
    doc = ok(f"({over}).sum()", "-i", f"x={x}", "--limit", f"elements={needed}")
    assert doc["output"]["shape"] == []


def test_expand_as_is_bounded_by_its_other_tensor():
    """expand_as makes ``other``'s shape, which exists (so is within the limit): expand's guard covers it."""
    assert ok("x.expand_as(ones(10, 10)).sum()", "-i", "x=1.", "--limit", "elements=100")["grads"]["x"]["value"] \
        == 100.0
    fails(run("x.expand_as(ones(10, 11))", "-i", "x=1.", "--limit", "elements=100"), 1,
          "shape [10, 11], 110 elements")


# -------------------------------------------------------------------------------------------- in-process


@pytest.fixture
def low_limit():
    """The ``elements`` limit lowered to 1,000 for the test, the defaults restored after it."""
    limits.configure({"elements": 1000})
    yield 1000
    limits.configure()


def _long(*shape):
    return G.zeros(*shape, dtype=G.int64)


# name → (a call over 1,000 elements, the same op at exactly 1,000 elements)
CALLS = {
    "repeat": (lambda: G.ones(10, 10).repeat(11, 1), lambda: G.ones(10, 10).repeat(10, 1)),
    "repeat_new_dims": (lambda: G.ones(10).repeat(2, 51, 1), lambda: G.ones(10).repeat(2, 50, 1)),
    "cat": (lambda: G.cat([G.ones(10, 10)] * 11), lambda: G.cat([G.ones(10, 10)] * 10)),
    "cat_dim1": (lambda: G.cat([G.ones(10, 50), G.ones(10, 51)], 1), lambda: G.cat([G.ones(10, 50)] * 2, 1)),
    "cat_legacy_empty": (lambda: G.cat([G.ones(1000), G.ones(0), G.ones(1)]),
                         lambda: G.cat([G.ones(999), G.ones(0), G.ones(1)])),
    "concat": (lambda: G.concat([G.ones(10, 10)] * 11), lambda: G.concat([G.ones(10, 10)] * 10)),
    "stack": (lambda: G.stack([G.ones(10, 10)] * 11), lambda: G.stack([G.ones(10, 10)] * 10)),
    "stack_last": (lambda: G.stack([G.ones(10, 10)] * 11, -1), lambda: G.stack([G.ones(10, 10)] * 10, -1)),
    "index_select": (lambda: G.index_select(G.ones(10, 10), 0, _long(101)),
                     lambda: G.index_select(G.ones(10, 10), 0, _long(100))),
    "index_select_mid": (lambda: G.ones(2, 5, 10).index_select(1, _long(51)),
                         lambda: G.ones(2, 5, 10).index_select(1, _long(50))),
    "getitem_broadcast": (lambda: G.ones(10, 10)[_long(40, 1), _long(1, 26)],
                          lambda: G.ones(10, 10)[_long(40, 1), _long(1, 25)]),
    "getitem_list": (lambda: G.ones(10, 10)[[0] * 101], lambda: G.ones(10, 10)[[0] * 100]),
    "getitem_adjacent": (lambda: G.ones(2, 3, 4, 5)[:, _long(10, 1), _long(1, 12)],
                         lambda: G.ones(2, 3, 4, 5)[:, _long(10, 1), _long(1, 10)]),
    "getitem_separated": (lambda: G.ones(2, 3, 4, 5)[:, _long(10, 1), :, _long(1, 13)],
                          lambda: G.ones(2, 3, 4, 5)[:, _long(5, 1), :, _long(1, 25)]),
    "getitem_ellipsis_none": (lambda: G.ones(2, 10, 10)[None, ..., _long(51)],
                              lambda: G.ones(2, 10, 10)[None, ..., _long(50)]),
    "getitem_mask_and_index": (lambda: G.ones(10, 10)[G.ones(10) > 0, _long(101, 1)],
                               lambda: G.ones(10, 10)[G.ones(10) > 0, _long(100, 1)]),
    "bmm": (lambda: G.bmm(G.ones(1, 40, 2), G.ones(1, 2, 26)), lambda: G.bmm(G.ones(1, 40, 2), G.ones(1, 2, 25))),
    "matmul_batched": (lambda: G.matmul(G.ones(2, 20, 2), G.ones(2, 2, 26)),
                       lambda: G.matmul(G.ones(2, 20, 2), G.ones(2, 2, 25))),
    "linear_bias": (lambda: G.linear(G.ones(40, 2), G.ones(26, 2), G.ones(26)),
                    lambda: G.linear(G.ones(40, 2), G.ones(25, 2), G.ones(25))),
    "linear_bias_3d": (lambda: G.linear(G.ones(2, 20, 2), G.ones(26, 2), G.ones(26)),
                       lambda: G.linear(G.ones(2, 20, 2), G.ones(25, 2), G.ones(25))),
    "einsum_outer": (lambda: G.einsum("i,j->ij", G.ones(40), G.ones(26)),
                     lambda: G.einsum("i,j->ij", G.ones(40), G.ones(25))),
    "einsum_implicit_ellipsis": (lambda: G.einsum("...i,j", G.ones(2, 20), G.ones(26)),
                                 lambda: G.einsum("...i,j", G.ones(2, 20), G.ones(25))),
    "einsum_broadcast_one": (lambda: G.einsum("ij,ijk->ijk", G.ones(40, 1), G.ones(1, 26, 2)),
                             lambda: G.einsum("ij,ijk->ijk", G.ones(40, 1), G.ones(1, 25, 1))),
}

# linear folds the batch dimensions into the rows of one matrix product: the message names that product
_FOLDED = {"linear_bias_3d"}
_SHAPE = re.compile(r"would have shape \[([0-9, ]*)\], ([0-9,]+) elements; the limit is 1,000 ")


@pytest.mark.parametrize("name", list(CALLS))
def test_limit_error_before_allocating_and_its_shape_is_the_result(name, low_limit):
    over, at = CALLS[name]
    with pytest.raises(LimitError) as info:
        over()
    assert info.value.limit == "elements"
    m = _SHAPE.search(str(info.value))
    assert m, str(info.value)
    shape = [int(s) for s in m.group(1).split(",")]
    # the shape the message names is the op's real result (computed without the limit)
    limits.configure({"elements": limits.UNLIMITED})
    result = over()
    if name not in _FOLDED:
        assert list(result.shape) == shape
    assert int(m.group(2).replace(",", "")) == result.numel() > 1000
    limits.configure({"elements": 1000})
    assert at().numel() == 1000  # exactly at the limit is allowed


def test_advanced_indexing_of_the_issue_fails_fast_at_the_default_limit():
    x = G.ones(100, 100)
    with pytest.raises(LimitError, match=r"indexing a tensor of shape \[100, 100\] would have shape "
                                         r"\[100000, 100000\], 10,000,000,000 elements"):
        x[_long(100000, 1), _long(1, 100000)]


def test_index_checks_come_first_only_when_the_result_fits(low_limit):
    """An out-of-range index in a result under the limit is PyTorch's IndexError, as before."""
    with pytest.raises(IndexError, match="index 10 is out of bounds"):
        G.ones(10, 10)[G.tensor([10]), G.tensor([0])]
    with pytest.raises(IndexError, match="index out of range in self"):
        G.index_select(G.ones(10, 10), 0, G.tensor([10]))


def test_gradients_through_guarded_ops_under_the_limit(low_limit):
    x = G.ones(10, 10, requires_grad=True)
    y = (x.repeat(2, 1).sum() + G.cat([x, x]).sum() + G.stack([x, x]).sum()
         + G.index_select(x, 0, G.tensor([0, 0])).sum() + x[G.tensor([[1], [1]]), G.tensor([[2, 3]])].sum()
         + G.einsum("ij,jk->ik", x, x).sum())
    y.backward()
    expected = np.full((10, 10), 6.0, dtype=np.float32)
    expected[0] += 2
    expected[1, 2] += 2
    expected[1, 3] += 2
    expected += 2 * 10  # d/dx of sum(x @ x) with x all ones: row sums + column sums
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_ops_that_cannot_grow_are_not_refused(low_limit):
    """gather's result has its index's shape; expand_as has its other tensor's; both already exist."""
    assert G.gather(G.ones(10, 10), 1, _long(10, 100)).shape == (10, 100)
    assert G.ones(10, 1).expand_as(G.ones(10, 100)).shape == (10, 100)


def test_default_limit_is_restored():
    assert limits.current.elements == 100_000_000
