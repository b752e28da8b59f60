# gradcli corpus 024: the Jacobian of softmax by autograd against diag(s) - s s^T
# Source: written for the gradcli corpus, modelled on softmax-derivative exercises of deep learning course
#   notebooks (e.g. the CS231n / d2l softmax regression chapters). Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch
import torch.nn.functional as F

z = torch.tensor([1.0, 2.0, 0.5], requires_grad=True)
s = F.softmax(z, dim=0)
J = torch.stack([torch.autograd.grad(s[i], z, retain_graph=True)[0] for i in range(len(s))])
analytic = torch.diag(s) - torch.outer(s, s)
print(s)
print(J)
print(torch.allclose(J, analytic.detach(), atol=1e-6))
