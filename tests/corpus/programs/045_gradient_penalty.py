# gradcli corpus 045: a WGAN-GP style gradient penalty computed with autograd.grad(create_graph=True)
# Source: written for the gradcli corpus, modelled on the gradient-penalty functions of WGAN-GP
#   implementations (e.g. eriklindernoren/PyTorch-GAN implementations/wgan_gp/wgan_gp.py, MIT), with a fixed
#   interpolation weight instead of a random one. Not a copy.
# License: MIT (gradcli's). Edits: none.
import torch
import torch.autograd as autograd
import torch.nn as nn

critic = nn.Sequential(nn.Linear(2, 4), nn.LeakyReLU(0.2), nn.Linear(4, 1))
with torch.no_grad():
    critic[0].weight.copy_(torch.tensor([[0.5, -0.25], [1.0, 0.75], [-0.5, 0.5], [0.25, 1.0]]))
    critic[0].bias.copy_(torch.tensor([0.1, -0.2, 0.0, 0.3]))
    critic[2].weight.copy_(torch.tensor([[1.0, -0.5, 0.75, 0.5]]))
    critic[2].bias.fill_(0.0)


def compute_gradient_penalty(D, real_samples, fake_samples, alpha):
    interpolates = (alpha * real_samples + ((1 - alpha) * fake_samples)).requires_grad_(True)
    d_interpolates = D(interpolates)
    fake = torch.ones(real_samples.shape[0], 1)
    gradients = autograd.grad(
        outputs=d_interpolates,
        inputs=interpolates,
        grad_outputs=fake,
        create_graph=True,
        retain_graph=True,
        only_inputs=True,
    )[0]
    gradients = gradients.view(gradients.size(0), -1)
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean()


real = torch.tensor([[1.0, 2.0], [0.5, -1.0], [2.0, 0.0]])
fake = torch.tensor([[0.0, 0.5], [-1.0, 1.0], [1.0, 1.0]])
alpha = torch.tensor([[0.3], [0.6], [0.9]])

lambda_gp = 10
gp = compute_gradient_penalty(critic, real, fake, alpha)
d_loss = -critic(real).mean() + critic(fake).mean() + lambda_gp * gp
d_loss.backward()
print(f"gradient penalty: {gp.item():.5f}")
print(f"critic loss: {d_loss.item():.5f}")
print(critic[0].weight.grad)
print(critic[2].bias.grad)
