"""``torch.Generator``, ``torch.default_generator`` and the default device, as a program sees them.

A :class:`TorchGenerator` holds one of the engine's generators (:class:`gradcli.engine.generator.Generator`,
PyTorch's CPU mt19937 and its transformations), so ``torch.rand(3, generator=g)`` after ``g.manual_seed(s)``
gives PyTorch's numbers. :data:`DEFAULT_GENERATOR` (``torch.default_generator``, what ``torch.manual_seed``
returns) holds no generator of its own: it stands for the active run context's, so it is one object shared by
every run and keeps no state. A program reads only the attributes in ``program_attributes``
(:mod:`gradcli.language.attributes`).
"""

from __future__ import annotations

import numpy as np

from ..engine import context
from ..engine.generator import Generator as _EngineGenerator
from ..engine.tensor import Tensor
from ..ops import REGISTRY


class Device:
    """``torch.device("cpu")``: gradcli computes on the CPU only; printed as PyTorch prints a device.

    Raises:
        RuntimeError: for a device string PyTorch does not know (its message); a CUDA device is accepted as a
            name (``.to(device)`` of a CPU tensor keeps it on the CPU, as gradcli has no other).
    """

    __slots__ = ("type", "index")
    program_attributes = ("type", "index")

    def __init__(self, type="cpu", index=None):
        text = str(type)
        kind, _, idx = text.partition(":")
        if kind not in ("cpu", "cuda", "mps", "meta"):
            raise RuntimeError(f"Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, "
                               f"maia, xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of "
                               f"device string: {text}")
        self.type = kind
        self.index = int(idx) if idx else index

    def __repr__(self) -> str:
        return f"device(type='{self.type}')" if self.index is None else \
            f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


_CPU = Device("cpu")


def _check_device(device) -> None:
    kind = Device(str(device)).type if not isinstance(device, Device) else device.type
    if kind != "cpu":
        raise NotImplementedError(f"gradcli computes on the CPU only: device '{device}' is not available")


class TorchGenerator:
    """``torch.Generator(device="cpu")``: a CPU random number generator of its own, seeded from the operating
    system until ``manual_seed``.

    Raises:
        NotImplementedError: for a device other than the CPU (gradcli has no other);
        RuntimeError: for a device string PyTorch does not know (its message).
    """

    program_attributes = ("manual_seed", "initial_seed", "seed", "get_state", "set_state", "device")

    def __init__(self, device="cpu"):
        _check_device(device)
        self._engine = _EngineGenerator()

    @property
    def engine(self) -> _EngineGenerator:
        """The engine generator that ops draw from (:func:`gradcli.engine.context.generator_of`)."""
        return self._engine

    @property
    def device(self) -> Device:
        """``device(type='cpu')``."""
        return _CPU

    def manual_seed(self, seed) -> "TorchGenerator":
        """Reseed (``Generator.manual_seed``) and return this generator.

        Raises:
            ValueError/TypeError: see :meth:`gradcli.engine.generator.Generator.manual_seed`.
        """
        self.engine.manual_seed(seed)
        return self

    def initial_seed(self) -> int:
        """The seed last set (``Generator.initial_seed``)."""
        return self.engine.initial_seed()

    def seed(self) -> int:
        """Reseed from the operating system and return the seed (``Generator.seed``)."""
        return self.engine.seed()

    def get_state(self) -> Tensor:
        """The generator's state as PyTorch's CPU generator writes it: a uint8 tensor of 5056 bytes
        (:meth:`gradcli.engine.generator.Generator.get_state`)."""
        return Tensor(self.engine.get_state())

    def set_state(self, new_state) -> "TorchGenerator":
        """Restore a state from :meth:`get_state` and return this generator.

        Raises:
            TypeError: for a value that is not a uint8 tensor; RuntimeError: for one of the wrong size
                (PyTorch's messages).
        """
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state.data.dtype != np.uint8:
            raise TypeError(f"expected a torch.ByteTensor, but got {new_state.dtype}")
        self.engine.set_state(np.ascontiguousarray(new_state.data).reshape(-1))
        return self

    def __repr__(self) -> str:
        return f"<torch._C.Generator object at {id(self):#x}>"

    def display_text(self) -> str:
        """What a notebook shows (IPython's form for an object without its own repr)."""
        return f"<torch._C.Generator at {id(self):#x}>"


class _DefaultGenerator(TorchGenerator):
    """``torch.default_generator``: the active run context's generator (one object, no state of its own)."""

    def __init__(self):  # pylint: disable=super-init-not-called
        pass

    @property
    def engine(self) -> _EngineGenerator:
        """The active run context's generator (made on first use)."""
        return context.generator()

    def manual_seed(self, seed) -> "TorchGenerator":
        """Reseed the run's generator, as ``torch.manual_seed`` (inside a transform that refuses random draws the
        seed goes to the generator it hides, and draws stay refused); returns this generator."""
        context.manual_seed(seed)
        return self


#: ``torch.default_generator``.
DEFAULT_GENERATOR = _DefaultGenerator()


def manual_seed(seed) -> TorchGenerator:
    """``torch.manual_seed(seed)``: seed the run's generator and return ``torch.default_generator``.

    Raises:
        ValueError/TypeError: see :meth:`gradcli.engine.generator.Generator.manual_seed`.
    """
    REGISTRY["manual_seed"](seed)
    return DEFAULT_GENERATOR


def set_default_device(device) -> None:
    """``torch.set_default_device(device)``: the CPU (or None) is accepted, as it is already the default.

    Raises:
        NotImplementedError: for another device (gradcli computes on the CPU only); RuntimeError for a device
            string PyTorch does not know.
    """
    if device is not None:
        _check_device(device)


def get_default_device() -> Device:
    """``torch.get_default_device()``: ``device(type='cpu')``."""
    return _CPU


#: The names this module adds to ``torch``.
TORCH_NAMES = {"Generator": TorchGenerator, "default_generator": DEFAULT_GENERATOR, "manual_seed": manual_seed,
               "set_default_device": set_default_device, "get_default_device": get_default_device}
