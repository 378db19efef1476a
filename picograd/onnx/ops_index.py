"""Ops that make or consume positions along an axis: OneHot, Hardmax, DepthToSpace,
SpaceToDepth (block rearrangements of channels into space and back)."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from picograd.frontend import where
from picograd.frontend.tensor import Tensor
from picograd.onnx.registry import NodeContext, Value, op


def _positions(ctx: NodeContext, n: int, axis: int, rank: int) -> Tensor:
    """0..n-1 laid along `axis` of a rank-`rank` tensor (size 1 elsewhere)."""
    shape = [1] * rank
    shape[axis] = n
    return ctx.t(np.arange(n, dtype=np.int64).reshape(shape))


@op("OneHot", attrs=("axis",))
def _one_hot(ctx: NodeContext, indices: Value, depth: Value, values: Value) -> Tensor:
    n = int(ctx.host(depth).reshape(-1)[0])
    idx = ctx.t(indices).cast("int64")
    idx = (idx < 0).cast("int64") * n + idx  # negative indices count from the end
    rank = idx.ndim + 1
    axis = ctx.attr("axis", -1)
    axis = axis + rank if axis < 0 else axis
    vals = ctx.t(values)
    off, on = vals[0], vals[1]
    hit = idx.unsqueeze(axis) == _positions(ctx, n, axis, rank)
    return where(hit, on, off)


@op("Hardmax", attrs=("axis",))
def _hardmax(ctx: NodeContext, x: Value) -> Tensor:
    t = ctx.t(x)
    if ctx.opset >= 13:
        axis = ctx.attr("axis", -1)
        axis = axis + t.ndim if axis < 0 else axis
        flat = t
    else:  # read as 2-D: dims before `axis` x dims from it
        axis = ctx.attr("axis", 1)
        axis = axis + t.ndim if axis < 0 else axis
        flat = t.reshape(int(np.prod(t.shape[:axis], dtype=np.int64)), -1)
        axis = 1
    first = flat.argmax(axis, keepdim=True).cast("int64")  # the first of equal maxima
    hit = _positions(ctx, flat.shape[axis], axis, flat.ndim) == first
    return hit.cast(t.dtype).reshape(t.shape)


def _mode(ctx: NodeContext) -> str:
    mode = ctx.attr("mode", "DCR")
    return mode.decode() if isinstance(mode, bytes) else mode


def _check_mode(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    mode = attrs.get("mode", b"DCR")
    return None if mode in (b"DCR", b"CRD", "DCR", "CRD") else f"mode {mode!r}"


@op("DepthToSpace", attrs=("blocksize", "mode"), check=_check_mode)
def _depth_to_space(ctx: NodeContext, x: Value) -> Tensor:
    t = ctx.t(x)
    b, c, h, w = t.shape
    bs = ctx.attr("blocksize")
    if _mode(ctx) == "DCR":
        t = t.reshape(b, bs, bs, c // (bs * bs), h, w).permute(0, 3, 4, 1, 5, 2)
    else:
        t = t.reshape(b, c // (bs * bs), bs, bs, h, w).permute(0, 1, 4, 2, 5, 3)
    return t.reshape(b, c // (bs * bs), h * bs, w * bs)


@op("SpaceToDepth", attrs=("blocksize", "mode"), check=_check_mode)
def _space_to_depth(ctx: NodeContext, x: Value) -> Tensor:
    """The inverse of DepthToSpace in the same mode (DCR: the block offset is the outer
    part of the new channel; CRD, from opset 28: the inner part)."""
    t = ctx.t(x)
    b, c, h, w = t.shape
    bs = ctx.attr("blocksize")
    t = t.reshape(b, c, h // bs, bs, w // bs, bs)
    t = t.permute(0, 3, 5, 1, 2, 4) if _mode(ctx) == "DCR" else t.permute(0, 1, 3, 5, 2, 4)
    return t.reshape(b, c * bs * bs, h // bs, w // bs)
