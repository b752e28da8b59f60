"""``torch.optim.lr_scheduler``: StepLR, MultiStepLR, ExponentialLR and LambdaLR, as PyTorch 2.13's (the
constructor records ``initial_lr`` in each group and takes a first step, epoch 0; ``step()`` advances the epoch
and sets each group's ``lr`` by the schedule's recursive rule; ``get_last_lr()`` is the list last set)."""

from __future__ import annotations

from ..nn.naming import TorchClass


class LRScheduler(metaclass=TorchClass):
    """``torch.optim.lr_scheduler.LRScheduler``: see the module's docs."""

    program_attributes = ("optimizer", "base_lrs", "last_epoch", "step", "get_last_lr", "get_lr",
                          "state_dict")

    def __init__(self, optimizer, last_epoch: int = -1):
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                                   "scheduler with last_epoch >= 0.\nThis typically happens when:\n1. You're "
                                   "trying to resume training from a checkpoint but haven't properly loaded the "
                                   "optimizer state\n2. You're using last_epoch >= 0 for a fresh training run "
                                   "(not recommended)")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._last_lr = []
        self.step()

    def get_lr(self) -> list:
        """The learning rates of the current epoch, from the previous ones."""
        raise NotImplementedError

    def get_last_lr(self) -> list:
        """The learning rates the last ``step()`` set (a list, one per group)."""
        return list(self._last_lr)

    def step(self, epoch=None) -> None:
        """Advance one epoch and set each group's ``lr``."""
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        """The scheduler's numbers (without the optimizer)."""
        return {"base_lrs": list(self.base_lrs), "last_epoch": self.last_epoch, "_last_lr": list(self._last_lr)}


class StepLR(LRScheduler):
    """``StepLR(optimizer, step_size, gamma=0.1)``: multiply each ``lr`` by ``gamma`` every ``step_size``
    epochs."""

    program_attributes = LRScheduler.program_attributes + ("step_size", "gamma")

    def __init__(self, optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1):
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        groups = self.optimizer.param_groups
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [g["lr"] for g in groups]
        return [g["lr"] * self.gamma for g in groups]


class MultiStepLR(LRScheduler):
    """``MultiStepLR(optimizer, milestones, gamma=0.1)``: multiply by ``gamma`` at each milestone epoch."""

    program_attributes = LRScheduler.program_attributes + ("milestones", "gamma")

    def __init__(self, optimizer, milestones, gamma: float = 0.1, last_epoch: int = -1):
        self.milestones = sorted(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        groups = self.optimizer.param_groups
        n = self.milestones.count(self.last_epoch)
        return [g["lr"] * self.gamma ** n for g in groups]


class ExponentialLR(LRScheduler):
    """``ExponentialLR(optimizer, gamma)``: multiply each ``lr`` by ``gamma`` every epoch."""

    program_attributes = LRScheduler.program_attributes + ("gamma",)

    def __init__(self, optimizer, gamma: float, last_epoch: int = -1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [g["lr"] for g in groups]
        return [g["lr"] * self.gamma for g in groups]


class LambdaLR(LRScheduler):
    """``LambdaLR(optimizer, lr_lambda)``: ``lr = initial_lr * lr_lambda(epoch)`` (one function, or one per
    group)."""

    program_attributes = LRScheduler.program_attributes + ("lr_lambdas",)

    def __init__(self, optimizer, lr_lambda, last_epoch: int = -1):
        n = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        return [base * f(self.last_epoch) for f, base in zip(self.lr_lambdas, self.base_lrs)]


CLASSES = {c.__name__: c for c in (LRScheduler, StepLR, MultiStepLR, ExponentialLR, LambdaLR)}
