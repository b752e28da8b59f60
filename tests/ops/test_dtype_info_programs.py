"""Programs that use torch's dtype utilities (finfo, iinfo, promote_types, result_type, can_cast,
set_default_dtype) print what PyTorch prints, run with `gradcli run` beside Python and torch."""

import re

import pytest

import gradcli as G
from helpers import python_and_gradcli_stdout

PROGRAM = """
import torch
print(torch.finfo(torch.float32))
print(torch.finfo())
print(torch.finfo(torch.float16))
print(torch.finfo(torch.float64).eps, torch.finfo(torch.float32).max, torch.finfo(torch.float32).tiny)
print(torch.finfo(torch.float32).resolution, torch.finfo(torch.float64).bits, torch.finfo(torch.half).smallest_normal)
print(torch.iinfo(torch.int32))
print(torch.iinfo(torch.uint8))
print(torch.iinfo(torch.int64).max, torch.iinfo(torch.int8).bits, torch.iinfo(torch.int16).dtype)
print(torch.promote_types(torch.int32, torch.float32))
print(torch.promote_types(torch.uint8, torch.long))
print(torch.promote_types(torch.bool, torch.int8))
print(torch.result_type(torch.tensor([1, 2], dtype=torch.int), 1.0))
print(torch.result_type(torch.tensor([1, 2], dtype=torch.uint8), torch.tensor(1)))
print(torch.result_type(torch.tensor(1.0, dtype=torch.float64), torch.tensor([1, 2])))
print(torch.can_cast(torch.double, torch.float))
print(torch.can_cast(torch.float, torch.int))
print(torch.can_cast(torch.int8, torch.bool), torch.can_cast(torch.bool, torch.int8))
print(torch.get_default_dtype())
torch.set_default_dtype(torch.float64)
print(torch.get_default_dtype())
print(torch.tensor([1.2, 3]).dtype)
print(torch.finfo())
print(torch.arange(3) / 2)
torch.set_default_dtype(torch.float32)
print(torch.tensor([1.2, 3]).dtype)
"""


def test_dtype_utilities_print_what_pytorch_prints(tmp_path):
    want, got = python_and_gradcli_stdout(tmp_path, "dtype_info", PROGRAM)
    assert got == want


@pytest.mark.parametrize("call, error", [
    (lambda m: m.finfo(m.int32), "torch.finfo() requires a floating point input type"),
    (lambda m: m.iinfo(m.float32), "torch.iinfo() requires an integer input type"),
    (lambda m: m.set_default_dtype(m.int64), "only floating-point types are supported as the default type"),
])
def test_wrong_dtypes_give_pytorchs_errors(call, error, torch):
    for m in (torch, G):
        with pytest.raises(TypeError, match=re.escape(error)):
            call(m)
