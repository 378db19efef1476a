"""What each compile target can do: one table per target, read by the legalisation and GPU
mapping passes and by the runtimes.

    capabilities("wgsl").max_buffers        -> 8
    capabilities("ptx").has_math("exp", f32) -> False  (PTX has ex2.approx, not exp)
    host_vector_registers()                  -> (64, 32) on AVX-512: the CPU targets' tiles
    host_cache_bytes()                       -> one core's L2 (1 MiB on Zen 4): cache blocks

A pass that depends on a target takes a `target=<name>` option and looks the table up here,
so `opt-tool -p 'uop-gpu-map{target=wgsl}'` replays exactly what `realize()` did.

Figures are the portable limits, not one card's: CUDA's limits hold from compute capability
7.0 on; WebGPU's are the spec's defaults (`maxStorageBuffersPerShaderStage` = 8,
`maxComputeWorkgroupsPerDimension` = 65535, 256 invocations per workgroup, 16 KiB of
workgroup storage), which every adapter, Mesa's software one included, provides.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path

import llvmlite.binding as llvm
from xdsl.dialects.builtin import bf16, f16, f32, f64, i1, i8, i16, i32
from xdsl.ir import Attribute

from picograd.dialects.dtypes import ELEMENT_TYPES, ui8
from picograd.errors import DeviceError

# Unary functions a target may or may not have natively, by `pg.UnaryKind` value.
TRANSCENDENTALS = ("exp", "log", "sqrt", "sin", "exp2", "log2")


@dataclass(frozen=True)
class Capabilities:
    """The limits and features of one compile target.

    `dtypes` are the element types a buffer may hold and a kernel may use (bf16 on every
    target: `tensor-legalize-bf16` holds it in f32 and stores it as i16; float8 e4m3fn and
    e5m2 on every target as their ui8 bits, which the frontend casts with i32 ops,
    frontend/float8.py, and computes nothing in, as torch); `emulated` the
    pairs (narrow, wide) of those the target has no arithmetic for: their values are held
    in the wide type (buffers too, one element per wide word) and `uop-legalize` rewrites
    their arithmetic into the wide type followed by a cast back, which rounds or wraps as
    the narrow type would. `math` the (function, element type) pairs the target computes
    natively (a legalisation pass rewrites the others in terms of these or rejects them);
    `index_bits` the width of `index` values in generated code. GPU fields are None on CPU
    targets.
    """

    target: str
    gpu: bool
    dtypes: frozenset[Attribute]
    math: frozenset[tuple[str, Attribute]]
    index_bits: int
    vector_widths: tuple[int, ...] = (1,)
    max_buffers: int | None = None  # kernel buffer arguments (bindings); None: no limit
    max_local_size: int | None = None  # work items per work group
    max_local_dims: tuple[int, int, int] | None = None
    max_groups: tuple[int, int, int] | None = None  # work groups per grid dimension
    shared_memory_bytes: int | None = None  # per work group
    default_local_size: int | None = None  # what uop-gpu-map uses unless told otherwise
    notes: tuple[str, ...] = field(default=())
    emulated: tuple[tuple[Attribute, Attribute], ...] = field(default=())

    def supports(self, dtype: Attribute) -> bool:
        """Whether a kernel may use `dtype`, natively or emulated."""
        return dtype in self.dtypes

    def wide_type(self, dtype: Attribute) -> Attribute | None:
        """The type an emulated `dtype` is held and computed in; None if it is native."""
        return dict(self.emulated).get(dtype)

    def has_math(self, function: str, dtype: Attribute) -> bool:
        return (function, dtype) in self.math

    def computes(self, function: str, dtype: Attribute) -> bool:
        """Whether `uop-legalize` gets `function` on `dtype` onto this target: natively,
        through its rewrite (exp via exp2, log via log2), or for a float narrower than f32
        (f16, bf16) in f32 and rounded back. PTX has no f64 exp, log or sin: False there."""
        via = {"exp": "exp2", "log": "log2"}.get(function)
        if self.has_math(function, dtype) or (via is not None and self.has_math(via, dtype)):
            return True
        return dtype in _NARROW_FLOATS and dtype != f32 and self.computes(function, f32)


def _math(functions: tuple[str, ...], dtypes: tuple[Attribute, ...]) -> frozenset:
    return frozenset((f, t) for f in functions for t in dtypes)


_FLOATS_CPU = (f16, f32, f64, bf16)
_NARROW_FLOATS = (f16, f32, bf16)

_TABLES: dict[str, Capabilities] = {
    # LLVM and C: the host CPU, every dtype, libm for every float width (f16 math goes
    # through f32).
    "llvm": Capabilities(
        target="llvm", gpu=False, dtypes=frozenset(ELEMENT_TYPES),
        math=_math(TRANSCENDENTALS, _FLOATS_CPU), index_bits=64, vector_widths=(1, 2, 4, 8)),
    "c": Capabilities(
        target="c", gpu=False, dtypes=frozenset(ELEMENT_TYPES),
        math=_math(TRANSCENDENTALS, _FLOATS_CPU), index_bits=64, vector_widths=(1, 2, 4, 8)),
    # PTX: every integer (uint16/32/64 too) and float width; the only native
    # transcendentals are the f32
    # `ex2.approx`, `lg2.approx`, `sin.approx` (range-reduced by the lowering) and correctly
    # rounded `sqrt.rn` for f32 and f64. exp/log are rewritten to exp2/log2.
    "ptx": Capabilities(
        target="ptx", gpu=True, dtypes=frozenset(ELEMENT_TYPES),
        math=_math(("exp2", "log2", "sin"), (f32,)) | _math(("sqrt",), (f32, f64)),
        index_bits=32, vector_widths=(1, 2, 4), max_buffers=None, max_local_size=1024,
        max_local_dims=(1024, 1024, 64), max_groups=(2**31 - 1, 65535, 65535),
        shared_memory_bytes=48 * 1024, default_local_size=256,
        notes=("f16 arithmetic is done in f32 and rounded to f16 after every op, as numpy does",
               "f64 has no exp, log or sin (a DTypeError at the op on CUDA)")),
    # WGSL: 32-bit scalars only (no f64, no 64-bit integers, no uint16/32/64 yet: those
    # are a DTypeError naming the device); bool
    # is not host-shareable, so bool buffers are stored as u32 by the lowering and the
    # runtime. f16 (an optional WebGPU feature), i8, ui8 and i16 are emulated: held as
    # f32 / i32, one element per 32-bit word, and rounded or wrapped after every op.
    "wgsl": Capabilities(
        target="wgsl", gpu=True, dtypes=frozenset({f32, i32, i1, f16, i8, ui8, i16, bf16}),
        emulated=((f16, f32), (i8, i32), (ui8, i32), (i16, i32)),
        math=_math(TRANSCENDENTALS, (f32,)), index_bits=32, vector_widths=(1, 2, 4),
        max_buffers=8, max_local_size=256, max_local_dims=(256, 256, 64),
        max_groups=(65535, 65535, 65535), shared_memory_bytes=16 * 1024,
        default_local_size=64,
        notes=("f16, i8, ui8 and i16 are stored widened to 32 bits and computed in f32 or "
               "i32, rounded to f16 (to nearest even) or wrapped after every op",)),
}

TARGETS = tuple(_TABLES)


@functools.cache
def host_vector_registers() -> tuple[int, int]:
    """The host CPU's vector registers as `(bytes each, how many)`, from LLVM's view of its
    features (the LLVM target builds for them, the C target with `-march=native`): AVX-512
    (64, 32), AVX/AVX2 (32, 16), Arm NEON (16, 32), else SSE-sized (16, 16)."""
    features = set(llvm.get_host_cpu_features().flatten().split(","))
    if "+avx512f" in features:
        return 64, 32
    if "+avx" in features:
        return 32, 16
    if "+neon" in features:
        return 16, 32
    return 16, 16


def host_cpus() -> int:
    """The CPUs this process may run on: `os.sched_getaffinity`, which a container's cpuset
    or `taskset` narrows (`os.cpu_count()` counts the machine's), else `os.cpu_count()`.
    Not cached: the affinity can change while the process runs."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


# When the host does not say (not Linux): a common size of one core's L2.
DEFAULT_L2_BYTES = 1 << 20


@functools.cache
def host_cache_bytes() -> int:
    """One core's L2 cache in bytes (what `loop-optimize` blocks a matmul's reduce for)."""
    return l2_cache_bytes(Path("/sys/devices/system/cpu/cpu0/cache"))


def l2_cache_bytes(root: Path) -> int:
    """The level-2 cache that Linux's sysfs folder `root` (a CPU's `cache/`) describes, else
    `DEFAULT_L2_BYTES`."""
    units = {"K": 1 << 10, "M": 1 << 20}
    for entry in sorted(root.glob("index*")):
        try:
            level = (entry / "level").read_text().strip()
            size = (entry / "size").read_text().strip().upper()
        except OSError:
            continue
        if level == "2" and size[:-1].isdigit() and size[-1:] in units:
            return int(size[:-1]) * units[size[-1]]
    return DEFAULT_L2_BYTES


@functools.cache
def capabilities(target: str) -> Capabilities:
    """The table of `target` ("llvm", "c", "ptx" or "wgsl"); DeviceError if unknown."""
    try:
        return _TABLES[target]
    except KeyError:
        raise DeviceError(
            f"unknown compile target {target!r}; targets are {', '.join(TARGETS)}") from None


__all__ = ["TARGETS", "TRANSCENDENTALS", "Capabilities", "capabilities", "host_cache_bytes",
           "host_vector_registers", "l2_cache_bytes"]
