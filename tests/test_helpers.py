"""The comparison rules of tests/helpers.py that other tests rely on."""

from helpers import printed_alike


def test_printed_alike_rules():
    """Exact text between numbers (up to whitespace), numbers to rtol 1e-4 or one unit of the last printed
    digit, integers and integral floats exactly."""
    assert printed_alike("tensor([1., 2.])\n", "tensor([1., 2.])\n")
    assert printed_alike("0 tensor(0.1235, grad_fn=<AddBackward0>)\n", "0 tensor(0.1234, grad_fn=<AddBackward0>)\n")
    assert printed_alike("13.257688522338867\n", "13.25768756866455\n")  # a float32 .item() at full precision
    assert printed_alike("tensor([-0.0000,  1.0000])\n", "tensor([0.0000, 1.0000])\n")
    assert printed_alike("1.5e-03\n", "1.6e-03\n")  # one unit of the last digit: 1e-4
    assert printed_alike("nan inf\n", "nan inf\n")
    assert not printed_alike("0.1236\n", "0.1234\n")  # two units
    assert not printed_alike("0 loss\n", "1 loss\n")  # integers exactly (a step count)
    assert not printed_alike("tensor(12.)\n", "tensor(13.)\n")
    assert not printed_alike("loss 1.0\n", "cost 1.0\n")
    assert not printed_alike("1.0 2.0\n", "1.0\n")
    assert not printed_alike("nan\n", "1.0\n")
    assert not printed_alike("inf\n", "-inf\n")
