"""``torch.optim``'s optimizers: SGD (momentum, dampening, nesterov, weight decay), Adam (amsgrad), AdamW,
RMSprop (momentum, centered) and Adagrad, computing as PyTorch 2.13's single-tensor implementations (the ones a
CPU run uses, ``foreach=False``): the same float32 operations in the same order, with the fused multiply-adds
that PyTorch's CPU kernels compute (``add(alpha=)``, ``lerp_``, ``addcmul_``), so that printed parameters match.

The updates are written on the parameters' numpy buffers, under no recording, and count as in-place
modifications (the version counter), as ``torch.no_grad()`` in-place updates do.
"""

from __future__ import annotations

import numpy as np

from ...engine import autograd, dtypes, limits
from ...engine.generator import _fma64
from ...ops.shape import inplace
from ..nn.naming import TorchClass
from ...engine.tensor import Tensor


def _fma(a, b, c):
    """``a * b + c`` with one rounding, in ``c``'s float dtype (PyTorch's CPU kernels contract to FMAs)."""
    dt = np.result_type(c)
    if dt == np.float64:
        return _fma64(a, b, c)
    return (np.asarray(a, np.float64) * np.asarray(b, np.float64) + np.asarray(c, np.float64)).astype(dt)


def _s(value, like: np.ndarray):
    """A Python number as the kernel sees it: cast to the tensor's dtype."""
    return like.dtype.type(value)


def _add_alpha(a: np.ndarray, b: np.ndarray, alpha) -> np.ndarray:
    """``a.add(b, alpha=alpha)``: an FMA of ``alpha * b + a``."""
    return _fma(b, _s(alpha, a), a)


def _lerp(start: np.ndarray, end: np.ndarray, weight) -> np.ndarray:
    """``start.lerp(end, weight)`` for a number ``weight`` (ATen's lerp, contracted)."""
    w = _s(weight, start)
    diff = end - start
    if abs(float(w)) < 0.5:
        return _fma(w, diff, start)
    return _fma(-diff, _s(1, start) - w, end)


def _addcmul(a: np.ndarray, t1: np.ndarray, t2: np.ndarray, value) -> np.ndarray:
    """``a.addcmul(t1, t2, value=value)``: ``a + value * t1 * t2``, the last product fused with the sum."""
    return _fma(_s(value, a) * t1, t2, a)


def _addcdiv(a: np.ndarray, t1: np.ndarray, t2: np.ndarray, value) -> np.ndarray:
    """``a.addcdiv(t1, t2, value=value)``: ``a + value * t1 / t2``."""
    return a + _s(value, a) * t1 / t2


def _write(t: Tensor, values: np.ndarray) -> None:
    t.data[...] = values
    inplace.bump(t.data)


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


class Optimizer(metaclass=TorchClass):
    """``torch.optim.Optimizer``: ``param_groups`` (a list of dicts: ``params`` and the hyperparameters),
    ``state`` (per parameter), ``zero_grad(set_to_none=True)``, ``step()`` and ``add_param_group``.

    Raises:
        TypeError / ValueError: PyTorch's messages for params that are not tensors, an empty list, or a
            parameter in two groups.
    """

    program_attributes = ("param_groups", "state", "defaults", "step", "zero_grad", "add_param_group",
                          "state_dict", "load_state_dict")

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        self.state = {}
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {_torch_type(params)}")
        groups = list(params)
        limits.check_items(len(groups), "the parameters of an optimizer")
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters (with its own hyperparameters; the defaults fill the others)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {_torch_type(p)}")
            if p.grad_fn is not None:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = dict(param_group, params=params)
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter "
                                 f"{name}")
            group.setdefault(name, default)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter: to None (the default), or to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        g = p.grad
                        if g.grad_fn is not None:
                            g.detach_()
                        else:
                            g.requires_grad_(False)
                        g.zero_()

    def step(self, closure=None):
        """One update of every parameter that has a gradient; ``closure`` (re-evaluating the loss) is called
        first and its result returned."""
        loss = None
        if closure is not None:
            with autograd.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad.data
                if group.get("maximize"):
                    g = -g
                self._update(p, g, self.state.setdefault(p, {}), group)
        return loss

    def _update(self, p: Tensor, grad: np.ndarray, state: dict, group: dict) -> None:
        raise NotImplementedError

    def state_dict(self) -> dict:
        """``{"state": {index: state}, "param_groups": [group with parameter indices]}``."""
        index, groups = {}, []
        for g in self.param_groups:
            ids = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            groups.append(dict(g, params=ids))
        return {"state": {index[id(p)]: s for p, s in self.state.items()}, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore ``state`` and the hyperparameters saved by :meth:`state_dict`."""
        params = [p for g in self.param_groups for p in g["params"]]
        for g, saved in zip(self.param_groups, state_dict["param_groups"]):
            g.update({k: v for k, v in saved.items() if k != "params"})
        self.state = {params[i]: s for i, s in state_dict["state"].items()}

    def __repr__(self) -> str:
        out = type(self).__name__ + " ("
        for i, group in enumerate(self.param_groups):
            out += "\n" + f"Parameter Group {i}"
            for key in sorted(group):
                if key != "params":
                    out += "\n" + f"    {key}: {group[key]}"
        return out + "\n)"


def _torch_type(v) -> str:
    if isinstance(v, Tensor):
        return f"torch.{dtypes.scalar_type_name(v.data.dtype)}Tensor"
    return type(v).__name__


def _check(cond: bool, message: str) -> None:
    if not cond:
        raise ValueError(message)


def _step(state: dict, like: np.ndarray) -> float:
    step = state.get("step")
    if step is None:
        step = state["step"] = Tensor(np.array(0.0, dtype=np.float32))
    step.data[...] = step.data + np.float32(1)
    return float(step.data)


class SGD(Optimizer):
    """``torch.optim.SGD(params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False,
    maximize=False)``: ``g = grad + wd * p``; with momentum ``buf = momentum * buf + (1 - dampening) * g``
    (``buf = g`` the first time), ``g = g + momentum * buf`` (nesterov) or ``buf``; ``p -= lr * g``."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False, fused=None):
        _check(not isinstance(lr, float) or lr >= 0.0, f"Invalid learning rate: {lr}")
        _check(momentum >= 0.0, f"Invalid momentum value: {momentum}")
        _check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        _check(not nesterov or (momentum > 0 and dampening == 0),
               "Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize, foreach=foreach,
                                      differentiable=differentiable, fused=fused))

    def _update(self, p, grad, state, group):
        wd, momentum = group["weight_decay"], group["momentum"]
        if wd != 0:
            grad = _add_alpha(grad, p.data, wd)
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = Tensor(np.array(grad, copy=True))
            else:
                m = buf.data * _s(momentum, buf.data)
                _write(buf, _add_alpha(m, grad, 1 - group["dampening"]))
            grad = _add_alpha(grad, buf.data, momentum) if group["nesterov"] else buf.data
        _write(p, _add_alpha(p.data, grad, -group["lr"]))


class Adam(Optimizer):
    """``torch.optim.Adam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False,
    maximize=False)``: ``m.lerp_(g, 1 - b1)``, ``v = b2 v + (1 - b2) g^2``, ``p -= lr / (1 - b1^t) * m /
    (sqrt(v) / sqrt(1 - b2^t) + eps)``."""

    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        _check(not isinstance(lr, float) or lr >= 0.0, f"Invalid learning rate: {lr}")
        _check(eps >= 0.0, f"Invalid epsilon value: {eps}")
        _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
        _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
        _check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused,
                                      decoupled_weight_decay=decoupled_weight_decay or self.decoupled))

    def _update(self, p, grad, state, group):
        beta1, beta2 = group["betas"]
        lr, wd, eps = group["lr"], group["weight_decay"], group["eps"]
        if "exp_avg" not in state:
            state["exp_avg"] = Tensor(np.zeros_like(p.data))
            state["exp_avg_sq"] = Tensor(np.zeros_like(p.data))
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = Tensor(np.zeros_like(p.data))
        step = _step(state, p.data)
        if wd != 0:
            if group["decoupled_weight_decay"]:
                _write(p, p.data * _s(1 - lr * wd, p.data))
            else:
                grad = _add_alpha(grad, p.data, wd)
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        _write(exp_avg, _lerp(exp_avg.data, grad, 1 - beta1))
        _write(exp_avg_sq, _addcmul(exp_avg_sq.data * _s(beta2, p.data), grad, grad, 1 - beta2))
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5
        sq = exp_avg_sq.data
        if group["amsgrad"]:
            mx = state["max_exp_avg_sq"]
            _write(mx, np.maximum(mx.data, sq))
            sq = mx.data
        denom = np.sqrt(sq) / _s(bias_correction2_sqrt, sq) + _s(eps, sq)
        _write(p, _addcdiv(p.data, exp_avg.data, denom, -step_size))


class AdamW(Adam):
    """``torch.optim.AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False)``:
    Adam with decoupled weight decay (``p *= 1 - lr * wd`` first)."""

    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize, foreach=foreach,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


class RMSprop(Optimizer):
    """``torch.optim.RMSprop(params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
    centered=False)``: ``v = alpha v + (1 - alpha) g^2``, ``p -= lr * g / (sqrt(v) + eps)`` (centered: the
    variance ``v - avg^2``; momentum: a buffer ``b = momentum b + g / (...)``, ``p -= lr * b``)."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check(not isinstance(lr, float) or lr >= 0.0, f"Invalid learning rate: {lr}")
        _check(eps >= 0.0, f"Invalid epsilon value: {eps}")
        _check(momentum >= 0.0, f"Invalid momentum value: {momentum}")
        _check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        _check(alpha >= 0.0, f"Invalid alpha value: {alpha}")
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable))

    def _update(self, p, grad, state, group):
        alpha, eps, wd, momentum = group["alpha"], group["eps"], group["weight_decay"], group["momentum"]
        if "square_avg" not in state:
            state["step"] = Tensor(np.array(0.0, dtype=np.float32))
            state["square_avg"] = Tensor(np.zeros_like(p.data))
            if momentum > 0:
                state["momentum_buffer"] = Tensor(np.zeros_like(p.data))
            if group["centered"]:
                state["grad_avg"] = Tensor(np.zeros_like(p.data))
        _step(state, p.data)
        if wd != 0:
            grad = _add_alpha(grad, p.data, wd)
        sq = state["square_avg"]
        _write(sq, _addcmul(sq.data * _s(alpha, sq.data), grad, grad, 1 - alpha))
        if group["centered"]:
            ga = state["grad_avg"]
            _write(ga, _lerp(ga.data, grad, 1 - alpha))
            avg = np.sqrt(_addcmul(sq.data, ga.data, ga.data, -1)) + _s(eps, sq.data)
        else:
            avg = np.sqrt(sq.data) + _s(eps, sq.data)
        if momentum > 0:
            buf = state["momentum_buffer"]
            _write(buf, _addcdiv(buf.data * _s(momentum, buf.data), grad, avg, 1))
            _write(p, _add_alpha(p.data, buf.data, -group["lr"]))
        else:
            _write(p, _addcdiv(p.data, grad, avg, -group["lr"]))


class Adagrad(Optimizer):
    """``torch.optim.Adagrad(params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
    eps=1e-10)``: ``s += g^2``, ``p -= clr * g / (sqrt(s) + eps)``, ``clr = lr / (1 + (t - 1) lr_decay)``."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        _check(not isinstance(lr, float) or lr >= 0.0, f"Invalid learning rate: {lr}")
        _check(lr_decay >= 0.0, f"Invalid lr_decay value: {lr_decay}")
        _check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        _check(initial_accumulator_value >= 0.0, f"Invalid initial_accumulator_value value: "
                                                 f"{initial_accumulator_value}")
        _check(eps >= 0.0, f"Invalid epsilon value: {eps}")
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                                      maximize=maximize, differentiable=differentiable, fused=fused))
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p] = {"step": Tensor(np.array(0.0, dtype=np.float32)),
                                 "sum": Tensor(np.full_like(p.data, group["initial_accumulator_value"]))}

    def _update(self, p, grad, state, group):
        step = _step(state, p.data)
        if group["weight_decay"] != 0:
            grad = _add_alpha(grad, p.data, group["weight_decay"])
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        s = state["sum"]
        _write(s, _addcmul(s.data, grad, grad, 1))
        std = np.sqrt(s.data) + _s(group["eps"], s.data)
        _write(p, _addcdiv(p.data, grad, std, -clr))


CLASSES = {c.__name__: c for c in (Optimizer, SGD, Adam, AdamW, RMSprop, Adagrad)}
