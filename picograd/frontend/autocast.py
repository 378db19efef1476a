"""Automatic mixed precision, as `torch.autocast`: inside the context, the ops torch lists as
safe in lower precision (matmul, linear, convolutions) take their float inputs cast to the
autocast dtype, and the ops it lists as needing float32 (the losses; on "cuda" also softmax,
log_softmax, layer_norm, group_norm) take theirs cast up to float32.

    with pg.autocast("cpu", dtype=pg.float16):
        logits = model(x)                      # matmuls and convs in float16
        loss = F.cross_entropy(logits, y)      # float32
    loss.backward()                            # float32 gradients for float32 parameters

The casts are ordinary `cast` ops (their gradient casts back), so autograd, fusion and a
compiled step work unchanged. A context applies to tensors on devices of its
`device_type` ("cpu": CPU:LLVM and CPU:C; "cuda"; "webgpu"). The default dtype is float16,
or bfloat16 on "cpu" where picograd has that dtype (torch's CPU default). An op module asks
`lower_precision(op, *tensors)` / `full_precision(op, *tensors)` at its start.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from picograd.errors import DTypeError, user_location
from picograd.frontend import dtype as dtypes
from picograd.frontend.dtype import DType, float16, float32, to_dtype

T = TypeVar("T")

# torch's autocast op lists (the ones picograd has)
LOWER_PRECISION_OPS = frozenset({
    "matmul", "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
    "conv_transpose3d", "bmm", "mm", "baddbmm", "addmm", "scaled_dot_product_attention"})
_LOSSES = frozenset({
    "mse_loss", "l1_loss", "nll_loss", "cross_entropy", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "smooth_l1_loss", "huber_loss", "kl_div"})
FULL_PRECISION_OPS: dict[str, frozenset[str]] = {
    "cpu": _LOSSES,
    "cuda": _LOSSES | {"softmax", "log_softmax", "layer_norm", "group_norm"},
    "webgpu": _LOSSES | {"softmax", "log_softmax", "layer_norm", "group_norm"},
}
_BFLOAT16: DType | None = getattr(dtypes, "bfloat16", None)

_active: list[tuple[str, DType | None]] = []  # (device type, dtype or None = disabled)


def _lower_dtypes() -> tuple[DType, ...]:
    return (float16,) if _BFLOAT16 is None else (float16, _BFLOAT16)


class autocast:
    """Context manager (and decorator) of a mixed-precision region; nests, and
    `enabled=False` turns it off inside an enclosing one."""

    def __init__(self, device_type: str = "cpu", dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None):
        kind = device_type.lower().split(":")[0]
        if kind not in FULL_PRECISION_OPS:
            raise DTypeError(f"autocast: device_type must be one of "
                             f"{', '.join(FULL_PRECISION_OPS)}, got {device_type!r}\n"
                             f"  at {user_location()}")
        if dtype is None:
            dtype = _BFLOAT16 if kind == "cpu" and _BFLOAT16 is not None else float16
        chosen = to_dtype(dtype)
        if chosen not in _lower_dtypes():
            names = " or ".join(d.name for d in _lower_dtypes())
            raise DTypeError(f"autocast: dtype must be {names}, got {chosen.name}\n"
                             f"  at {user_location()}")
        self.device_type, self.fast_dtype, self.enabled = kind, chosen, bool(enabled)

    def __enter__(self) -> autocast:
        _active.append((self.device_type, self.fast_dtype if self.enabled else None))
        return self

    def __exit__(self, *exc: object) -> None:
        _active.pop()

    def __call__(self, fn: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> T:
            with autocast(self.device_type, self.fast_dtype, self.enabled):
                return fn(*args, **kwargs)
        return wrapped


def _region(device: str) -> tuple[str, DType | None] | None:
    """The innermost region for `device`'s type, or None."""
    kind = device.lower().split(":")[0]
    for region in reversed(_active):
        if region[0] == kind:
            return region
    return None


def is_autocast_enabled(device_type: str = "cpu") -> bool:
    region = _region(device_type)
    return region is not None and region[1] is not None


def _cast_all(tensors: tuple[Any, ...], want: DType, source: tuple[DType, ...]) -> tuple[Any, ...]:
    return tuple(t.cast(want) if t is not None and hasattr(t, "dtype") and t.dtype in source
                 else t for t in tensors)


def lower_precision(op: str, *tensors: Any) -> tuple[Any, ...]:
    """`tensors` (None allowed) as `op` takes them: in an autocast region for their device
    and `op` in LOWER_PRECISION_OPS, float32 ones cast to the region's dtype."""
    if not _active or op not in LOWER_PRECISION_OPS:
        return tensors
    first = next((t for t in tensors if t is not None and hasattr(t, "device")), None)
    region = _region(first.device) if first is not None else None
    if region is None or region[1] is None:
        return tensors
    return _cast_all(tensors, region[1], (float32, *_lower_dtypes()))


def full_precision(op: str, *tensors: Any) -> tuple[Any, ...]:
    """`tensors` as `op` takes them: in an autocast region for their device and `op` in its
    FULL_PRECISION_OPS, float16 / bfloat16 ones cast to float32."""
    if not _active:
        return tensors
    first = next((t for t in tensors if t is not None and hasattr(t, "device")), None)
    region = _region(first.device) if first is not None else None
    if region is None or region[1] is None or op not in FULL_PRECISION_OPS[region[0]]:
        return tensors
    return _cast_all(tensors, float32, _lower_dtypes())
