"""torch.optim for gradcli: optimizers and learning-rate schedulers computing as PyTorch 2.13's single-tensor
(``foreach=False``) implementations (library API layer; the language exposes it as ``torch.optim``)."""
