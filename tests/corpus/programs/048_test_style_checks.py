# gradcli corpus 048: gradient unit tests in the style of a pytest module, run as a script
# Source: written for the gradcli corpus, modelled on the autograd tests of PyTorch's test suite
#   (pytorch/pytorch test/test_autograd.py, BSD-3-Clause: checks of accumulation, sigmoid and linear
#   gradients, and of the expected errors), as plain functions with assert. Not a copy.
# License: MIT (gradcli's). Edits: none.
"""Small autograd checks written as test functions."""
import torch


def test_sigmoid_grad():
    x = torch.tensor([-2.0, 0.0, 3.0], requires_grad=True)
    s = torch.sigmoid(x)
    s.sum().backward()
    expected = s.detach() * (1 - s.detach())
    assert torch.allclose(x.grad, expected), (x.grad, expected)


def test_linear_grad():
    W = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    x = torch.tensor([0.5, -1.0])
    (W @ x).sum().backward()
    assert W.grad.tolist() == [[0.5, -1.0], [0.5, -1.0]]


def test_accumulates():
    x = torch.tensor(3.0, requires_grad=True)
    for _ in range(3):
        (x * x).backward()
    assert x.grad.item() == 18.0


def test_backward_needs_scalar():
    x = torch.ones(2, requires_grad=True)
    try:
        (x * 2).backward()
    except RuntimeError as e:
        assert "scalar outputs" in str(e)
    else:
        raise AssertionError("expected a RuntimeError")


def test_no_grad_output():
    x = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        y = x * 2
    assert not y.requires_grad
    assert y.grad_fn is None


if __name__ == "__main__":
    tests = [test_sigmoid_grad, test_linear_grad, test_accumulates, test_backward_needs_scalar,
             test_no_grad_output]
    failed = 0
    for test in tests:
        try:
            test()
            print("PASS", test.__name__)
        except AssertionError as e:
            failed += 1
            print("FAIL", test.__name__, e)
    print(f"{len(tests) - failed}/{len(tests)} passed")
