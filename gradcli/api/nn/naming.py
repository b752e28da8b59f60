"""PyTorch's qualified class names for gradcli's ``torch.nn`` and ``torch.optim`` classes.

PyTorch's classes live in submodules (``torch.nn.modules.linear.Linear``, ``torch.optim.sgd.SGD``) and print
with that path: ``print(nn.Linear)`` shows ``<class 'torch.nn.modules.linear.Linear'>``. gradcli's classes
print the same through the metaclass :class:`TorchClass`, which reads the class's ``_torch_module`` (set from
:data:`TORCH_MODULES` by :func:`name_classes`); a class without one prints with its gradcli module, as Python
would (the tests compare every exposed class with torch's ``repr``).
"""

from __future__ import annotations


class TorchClass(type):
    """Metaclass of gradcli's torch.nn modules, Parameter, optimizers and schedulers: ``repr(cls)`` is
    PyTorch's (``<class 'torch.nn.modules.batchnorm.BatchNorm1d'>``); everything else is ``type``'s."""

    def __repr__(cls) -> str:
        module = cls.__dict__.get("_torch_module", cls.__module__)
        return f"<class '{module}.{cls.__qualname__}'>"


#: The PyTorch 2.13 module that defines each class gradcli exposes in torch.nn and torch.optim (its
#: ``cls.__module__``).
TORCH_MODULES = {
    "torch.nn.modules.module": ("Module",),
    "torch.nn.parameter": ("Parameter",),
    "torch.nn.modules.linear": ("Identity", "Linear", "Bilinear", "LazyLinear"),
    "torch.nn.modules.activation": (
        "CELU", "ELU", "GELU", "GLU", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU", "LogSigmoid",
        "LogSoftmax", "Mish", "ReLU", "ReLU6", "SELU", "SiLU", "Sigmoid", "Softmax", "Softmin", "Softplus",
        "Softsign", "Tanh", "Hardshrink", "Softshrink", "Tanhshrink", "Threshold", "PReLU", "Softmax2d"),
    "torch.nn.modules.padding": tuple(f"{p}Pad{n}d" for p in ("Constant", "Zero", "Reflection", "Replication",
                                                              "Circular") for n in (1, 2, 3)),
    "torch.nn.modules.pixelshuffle": ("PixelShuffle", "PixelUnshuffle"),
    "torch.nn.modules.channelshuffle": ("ChannelShuffle",),
    "torch.nn.modules.loss": ("BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "HuberLoss", "KLDivLoss",
                              "L1Loss", "MSELoss", "NLLLoss", "SmoothL1Loss", "MarginRankingLoss",
                              "HingeEmbeddingLoss", "SoftMarginLoss", "CosineEmbeddingLoss",
                              "MultiLabelSoftMarginLoss", "TripletMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss"),
    "torch.nn.modules.batchnorm": ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d",
                                  "LazyBatchNorm2d", "LazyBatchNorm3d"),
    "torch.nn.modules.instancenorm": ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"),
    "torch.nn.modules.normalization": ("GroupNorm", "LayerNorm", "RMSNorm"),
    "torch.nn.modules.conv": ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
                                "LazyConv1d", "LazyConv2d", "LazyConv3d"),
    "torch.nn.modules.pooling": tuple(f"{k}{n}d" for k in ("AdaptiveAvgPool", "AvgPool", "MaxPool", "AdaptiveMaxPool",
                                                           "MaxUnpool", "LPPool") for n in (1, 2, 3))
    + ("FractionalMaxPool2d", "FractionalMaxPool3d"),
    "torch.nn.modules.fold": ("Fold", "Unfold"),
    "torch.nn.modules.upsampling": ("Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"),
    "torch.nn.modules.container": ("ModuleDict", "ModuleList", "Sequential", "ParameterList", "ParameterDict"),
    "torch.nn.modules.distance": ("CosineSimilarity", "PairwiseDistance"),
    "torch.nn.modules.dropout": ("Dropout",),
    "torch.nn.modules.flatten": ("Flatten", "Unflatten"),
    "torch.nn.modules.sparse": ("Embedding",),
    "torch.optim.optimizer": ("Optimizer",),
    "torch.optim.sgd": ("SGD",),
    "torch.optim.adam": ("Adam",),
    "torch.optim.adamw": ("AdamW",),
    "torch.optim.rmsprop": ("RMSprop",),
    "torch.optim.adagrad": ("Adagrad",),
    "torch.optim.lr_scheduler": ("LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "LambdaLR"),
}
_MODULE_OF = {name: module for module, names in TORCH_MODULES.items() for name in names}


def name_classes(classes) -> None:
    """Give each class of ``classes`` (an iterable of gradcli classes) its PyTorch module from
    :data:`TORCH_MODULES` (by class name); a class not in the table keeps its own."""
    for cls in classes:
        module = _MODULE_OF.get(cls.__name__)
        if module is not None:
            type.__setattr__(cls, "_torch_module", module)
