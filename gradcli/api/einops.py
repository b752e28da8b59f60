"""``torch.func.rearrange``: einops-style reordering of a tensor's dimensions ("b h w c -> b (c h w)").

PyTorch 2.13's ``torch.func.rearrange`` is native (torch/_functorch/einops.py over functorch/einops/, adapted
from einops' own parser, MIT licence); it does not need the external ``einops`` package, and neither does
gradcli's. The pattern is parsed and checked as functorch's ``_parsing.py`` does, with its messages; PyTorch then
indexes the tensor with first-class dimensions, gradcli composes the same rearrangement from ops of the table
(a reshape into the elementary axes, a permute into the output's order, a reshape into the output's groups), so
the result is differentiable as any other op's.
"""

from __future__ import annotations

import keyword
import warnings

from ..engine.tensor import Tensor
from ..ops import REGISTRY

_ELLIPSIS = "\u2026"  # one character standing for "..." while parsing, as functorch's parser does


class _Anonymous:
    """An unnamed axis of size 1 on the left side (``1``): a distinct object each time, as einops'."""

    __slots__ = ()


def _check_name(name: str) -> None:
    if not name.isidentifier():
        raise ValueError(f"Invalid axis identifier: {name}\nnot a valid python identifier")
    if name[0] == "_" or name[-1] == "_":
        raise ValueError(f"Invalid axis identifier: {name}\naxis name should should not start or end with "
                         "underscore")
    if keyword.iskeyword(name):
        warnings.warn(f"It is discouraged to use axes names that are keywords: {name}", RuntimeWarning,
                      stacklevel=4)
    if name == "axis":
        warnings.warn("It is discouraged to use 'axis' as an axis name and will raise an error in future",
                      FutureWarning, stacklevel=4)


class _Expression:
    """One side of a pattern: ``composition`` is a list of groups (a list of axis names or anonymous axes, one
    tensor dimension each) and the ellipsis (``_ELLIPSIS``); ``identifiers`` the named axes (and the ellipsis)."""

    def __init__(self, text: str):
        self.has_ellipsis = False
        self.ellipsis_in_brackets = None
        self.identifiers: set = set()
        self.non_unitary_anonymous = False
        self.composition: list = []
        if "." in text:
            if "..." not in text:
                raise ValueError("Expression may contain dots only inside ellipsis (...)")
            if text.count("...") != 1 or text.count(".") != 3:
                raise ValueError("Expression may contain dots only inside ellipsis (...); only one ellipsis for "
                                 "tensor ")
            text = text.replace("...", _ELLIPSIS)
            self.has_ellipsis = True
        group = None
        current = None
        for char in text + " ":
            if char in "() ":
                if current is not None:
                    self._add(current, group)
                current = None
                if char == "(":
                    if group is not None:
                        raise ValueError("Axis composition is one-level (brackets inside brackets not allowed)")
                    group = []
                elif char == ")":
                    if group is None:
                        raise ValueError("Brackets are not balanced")
                    self.composition.append(group)
                    group = None
            elif char.isalnum() or char in ("_", _ELLIPSIS):
                current = char if current is None else current + char
            else:
                raise ValueError(f"Unknown character '{char}'")
        if group is not None:
            raise ValueError(f"Imbalanced parentheses in expression: '{text}'")

    def _add(self, name: str, group) -> None:
        if name in self.identifiers:
            raise ValueError(f"Indexing expression contains duplicate dimension '{name}'")
        if name == _ELLIPSIS:
            self.identifiers.add(_ELLIPSIS)
            (self.composition if group is None else group).append(_ELLIPSIS)
            self.ellipsis_in_brackets = group is not None
            return
        if name.isdecimal():
            if int(name) == 1:
                if group is None:
                    self.composition.append([])
                return
            self.non_unitary_anonymous = True
            self.identifiers.add(name)
            (self.composition.append([name]) if group is None else group.append(name))
            return
        _check_name(name)
        self.identifiers.add(name)
        if group is None:
            self.composition.append([name])
        else:
            group.append(name)


def _parse(pattern: str, axes_lengths: dict) -> tuple:
    try:
        left_text, right_text = pattern.split("->")
    except ValueError:
        raise ValueError("Pattern must contain a single '->' separator") from None
    left, right = _Expression(left_text), _Expression(right_text)
    if not left.has_ellipsis and right.has_ellipsis:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern {pattern}")
    if left.has_ellipsis and left.ellipsis_in_brackets:
        raise ValueError(f"Ellipsis is parenthesis in the left side is not allowed: {pattern}")
    for length in axes_lengths.values():
        if type(length) is not int:
            raise TypeError(f"rearrange axis lengths must be integers, got: {type(length)}")
    if left.non_unitary_anonymous or right.non_unitary_anonymous:
        raise ValueError("rearrange only supports unnamed axes of size 1")
    difference = left.identifiers ^ right.identifiers
    if difference:
        raise ValueError(f"Identifiers only on one side of rearrange expression (should be on both): {difference}")
    unmatched = set(axes_lengths) - left.identifiers
    if unmatched:
        raise ValueError(f"Identifiers not found in rearrange expression: {unmatched}")
    return left, right


def _elementary(left: _Expression, shape: tuple, axes_lengths: dict) -> tuple:
    """The elementary axes of the left side with their sizes: ``(names, sizes)``, the ellipsis expanded into
    one name per dimension it covers, each unitary anonymous axis a distinct object of size 1."""
    ndim = len(shape)
    n_anon = sum(1 for g in left.composition if g == [])
    if left.has_ellipsis:
        n_ellipsis = ndim - (len(left.composition) - 1)
        named = len(left.identifiers) - 1
        if n_anon + named > ndim:
            raise ValueError(f"Number of dimensions in pattern ({n_anon + named}) must be less than or equal to the "
                             f"number of dimensions in the tensor ({ndim})")
    else:
        n_ellipsis = 0
        if len(left.composition) != ndim:
            raise ValueError(f"Number of dimensions in pattern ({len(left.composition)}) must be equal to the "
                             f"number of dimensions in the tensor ({ndim})")
    names, sizes = [], []
    d = 0
    for group in left.composition:
        if group == _ELLIPSIS:
            for k in range(n_ellipsis):
                names.append((_ELLIPSIS, k))
                sizes.append(shape[d])
                d += 1
            continue
        if group == []:
            if shape[d] != 1:
                raise ValueError(f"Unitary anonymous axis of the pattern matches a dimension of size {shape[d]}")
            names.append(_Anonymous())
            sizes.append(1)
            d += 1
            continue
        known = [axes_lengths.get(n) for n in group]
        unknown = [i for i, k in enumerate(known) if k is None]
        product = 1
        for k in known:
            product *= k if k is not None else 1
        if len(unknown) > 1:
            raise ValueError(f"Could not infer the sizes of {[group[i] for i in unknown]} from a dimension of size "
                             f"{shape[d]}")
        if unknown:
            if product == 0 or shape[d] % product:
                raise ValueError(f"Dimension of size {shape[d]} cannot be split into {group} with the lengths "
                                 f"given")
            known[unknown[0]] = shape[d] // product
        elif product != shape[d]:
            raise ValueError(f"Dimension of size {shape[d]} does not match the lengths of {group} ({product})")
        names.extend(group)
        sizes.extend(known)
        d += 1
    return names, sizes


def rearrange(tensor, pattern: str, **axes_lengths):
    """``tensor`` (or a list/tuple of tensors, stacked first) with its dimensions reordered, split and merged as
    the einops ``pattern`` says: ``"b h w c -> b (c h w)"``, ``"b (h1 h) w c -> (b h1) h w c"`` with ``h1=2``,
    ``...`` for the dimensions not named, ``1``/``()`` for a dimension of size 1. Matches torch.func.rearrange
    (native in PyTorch, no ``einops`` package needed), with its parser's messages.

    Raises:
        ValueError: for a malformed pattern, identifiers on one side only, lengths that do not divide a
            dimension; TypeError: for a length that is not an int.
    """
    x = tensor if isinstance(tensor, Tensor) else REGISTRY["stack"](list(tensor))
    left, right = _parse(pattern, axes_lengths)
    shape = tuple(x.shape)
    names, sizes = _elementary(left, shape, axes_lengths)
    if not names:  # an identity rearrangement of a 0-d tensor
        return x
    size_of = {n: s for n, s in zip(names, sizes) if not isinstance(n, _Anonymous)}
    ellipsis = [n for n in names if isinstance(n, tuple)]
    groups = []  # the output's dimensions, each the elementary axes it merges
    for group in right.composition:
        if group == _ELLIPSIS:
            groups.extend([m] for m in ellipsis)
        else:
            groups.append([m for n in group for m in (ellipsis if n == _ELLIPSIS else [n])])
    order = [m for g in groups for m in g]
    out_shape = []
    for g in groups:
        n = 1
        for m in g:
            n *= size_of[m]
        out_shape.append(n)
    perm = [names.index(m) for m in order]
    y = REGISTRY["reshape"](x, tuple(sizes))
    if perm != list(range(len(names))) or len(perm) != len(names):
        if len(perm) != len(names):  # the left's unitary anonymous axes: size 1, not in the output
            keep = [i for i, n in enumerate(names) if not isinstance(n, _Anonymous)]
            y = REGISTRY["reshape"](y, tuple(sizes[i] for i in keep))
            perm = [keep.index(p) for p in perm]
        y = REGISTRY["permute"](y, tuple(perm))
    return REGISTRY["reshape"](y, tuple(out_shape))
