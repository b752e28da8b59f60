# gradcli corpus 052: seeded random inputs, checked against an analytic gradient (prints only the checks)
# Source: written for the gradcli corpus, modelled on randomized gradient checks in PyTorch test suites and
#   course notebooks (torch.manual_seed + torch.randn, then torch.allclose against a formula). Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch

torch.manual_seed(0)

for n in (1, 4, 16):
    x = torch.randn(n, requires_grad=True)
    A = torch.randn(n, n)
    f = x @ A @ x
    f.backward()
    expected = (A + A.T) @ x.detach()
    print(n, x.grad.shape, torch.allclose(x.grad, expected, atol=1e-5))

w = torch.randn(3, 5, requires_grad=True)
print(w.requires_grad, w.is_leaf, w.dtype)
torch.nn.functional.softmax(w, dim=1).sum().backward()
print(torch.allclose(w.grad, torch.zeros(3, 5), atol=1e-6))
