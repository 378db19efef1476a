"""picograd: a lazy, PyTorch-like `Tensor` compiled through xDSL dialects to LLVM IR, C, PTX
and WGSL, run on the CPU (LLVM or C), NVIDIA GPUs (CUDA) and WebGPU.

    import picograd as pg
    a = pg.Tensor([[1.0, -2.0], [3.0, 4.0]])
    y = (a * 0.5 + 1).relu().sum(axis=1)     # lazy: a graph, nothing computed
    y.numpy()                                # compiles one fused kernel and runs it

Public API: `Tensor`, the dtypes `float16` (`half`), `bfloat16`, `float32` (`float`),
`float64` (`double`), `int8`, `uint8`, `int16`, `int32` (`int`), `int64` (`long`),
`uint16`, `uint32`, `uint64`, `bool` (all in `DTYPES`), `float8_e4m3fn`, `float8_e5m2`
(storage with casts: `FLOAT8_DTYPES`), `result_type`, `promote_types`,
`manual_seed`, `realize` (with `pipeline=` for any pass pipeline), `where`, `maximum`,
`minimum`, `einsum`, `cat`, `stack`, torch-style creation functions (`tensor`, `zeros`,
`ones`, `full`, `empty`, `arange`, `linspace`, `eye`, `rand`, `randn`, `randint` and the
`_like` family), `compile_stats`, `no_grad`, `enable_grad`, `autocast` /
`is_autocast_enabled` (mixed precision, as torch.autocast), the packages `picograd.nn`
(with `nn.utils`: clip_grad_norm_, clip_grad_value_; `nn.state.load_torch`: torch.save
files read without running their code) and `picograd.optim` (SGD, Adam, AdamW, Adamax,
NAdam, RAdam, RMSprop, Adagrad, Adadelta, LAMB, GradScaler, `optim.lr_scheduler`: torch's
schedulers), the errors — each also the built-in class torch raises for the same mistake
(docs/design.md) — `PicogradError`, `ShapeError` (also RuntimeError and ValueError),
`DimRangeError` (also IndexError), `ArgumentTypeError` (also TypeError), `DTypeError`,
`IndexRangeError`, `ZeroDivisorError`, `DeviceError`, `OutOfMemoryError`, `CompileError`,
`AutogradError`, `JitError`, `OptimizerError`, `CheckpointError`, `NonFiniteNormError`,
`ThreadCountError`,
`set_num_threads` / `get_num_threads` (the threads of one large CPU kernel, as torch's), the
`jit` decorator (capture and replay a
function's compiled programs, picograd/jit_replay.py), and `Variable` (a symbolic integer
such as a decode position: one compile for all its values, picograd/frontend/variable.py).

The package's layers, top to bottom (docs/design.md; `lint-imports` checks them): tools →
onnx → nn → optim, jit, data → frontend → compiler → debug → runtimes → lowering → passes →
interpreter → dialects → disk_store → flags, errors.

The frontend is imported on first use of one of its names, so that tools that only need the
dialects and passes (`opt-tool`) do not load the runtimes at start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from picograd.errors import (
    ArgumentTypeError,
    CheckpointError,
    CompileError,
    DeviceError,
    DimRangeError,
    DTypeError,
    IndexRangeError,
    JitError,
    NonFiniteNormError,
    OptimizerError,
    OutOfMemoryError,
    PicogradError,
    ShapeError,
    ThreadCountError,
    UnimplementedCaseError,
    UnimplementedDTypeError,
    ZeroDivisorError,
)

if TYPE_CHECKING:
    from picograd import nn, optim
    from picograd.frontend import (
        CompileStats,
        DType,
        Tensor,
        arange,
        compile_stats,
        empty,
        empty_like,
        eye,
        float32,
        full,
        full_like,
        int32,
        linalg,
        linspace,
        manual_seed,
        maximum,
        minimum,
        ones,
        ones_like,
        rand,
        rand_like,
        randint,
        randint_like,
        randn,
        randn_like,
        tensor,
        where,
        zeros,
        zeros_like,
    )
    from picograd.frontend import bool_ as bool
    from picograd.frontend.autocast import autocast, is_autocast_enabled
    from picograd.frontend.autograd import AutogradError, enable_grad, no_grad
    from picograd.frontend.compile_context import Context
    from picograd.frontend.dtype import (
        DTYPES,
        FLOAT8_DTYPES,
        bfloat16,
        float8_e4m3fn,
        float8_e5m2,
        float16,
        float64,
        int8,
        int16,
        int64,
        promote_types,
        result_type,
        uint8,
        uint16,
        uint32,
        uint64,
    )
    from picograd.frontend.dtype import float16 as half
    from picograd.frontend.dtype import float32 as float
    from picograd.frontend.dtype import float64 as double
    from picograd.frontend.dtype import int32 as int
    from picograd.frontend.dtype import int64 as long
    from picograd.frontend.ops_linalg import einsum
    from picograd.frontend.ops_shape import cat, stack
    from picograd.frontend.realize import realize
    from picograd.frontend.variable import SymbolicInt, Variable
    from picograd.jit_replay import jit
    from picograd.runtimes.parallel import get_num_threads, set_num_threads

# torch-style creation functions (the Tensor classmethods / `_like` methods)
_CREATION = ("tensor", "zeros", "ones", "full", "empty", "arange", "linspace", "eye", "rand",
             "randn", "randint", "zeros_like", "ones_like", "full_like", "empty_like",
             "rand_like", "randn_like", "randint_like")

# name -> (module, attribute) of the lazily imported frontend names
# torch's free functions: `pg.asin(x)` is `x.asin()` (picograd/frontend/functions.py, which
# lists the same names)
_FUNCTIONS = """
abs absolute acos acosh add addbmm addmm addmv addr adjoint all allclose amax amin aminmax
any arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmin argsort argwhere asin
asinh atan atan2 atanh atleast_1d atleast_2d atleast_3d baddbmm bernoulli bincount
bitwise_and bitwise_not bitwise_or bitwise_xor bmm bucketize ceil celu chunk clamp clamp_max
clamp_min clip clone copysign cos cosh count_nonzero cross cummax cummin cumprod cumsum
deg2rad detach diag diag_embed diagonal div dot dsplit erf erfc erfinv exp exp2 expm1 fix
flatten flip fliplr flipud floor floor_divide fmod frac gather ger hardshrink histc hsplit
hypot index_add index_copy index_fill index_put index_select inner is_complex
is_floating_point is_nonzero isclose isfinite isinf isnan isneginf isposinf isreal kron
kthvalue lerp log log10 log1p log2 log_softmax logaddexp logaddexp2 logcumsumexp logical_not
logsumexp masked_fill masked_select matmul max mean median meshgrid min mm mode moveaxis
movedim msort mul multinomial mv nan_to_num nanmean nanmedian nansum narrow neg negative
nonzero norm numel outer permute positive pow prelu prod rad2deg randperm reciprocal relu
remainder repeat_interleave reshape roll rot90 round rrelu rsqrt scatter scatter_add
scatter_reduce searchsorted selu sgn sigmoid sign sin sinh softmax sort split sqrt square
squeeze std std_mean sub sum swapaxes swapdims t take take_along_dim tan tanh tensor_split
threshold tile topk trace transpose tril triu true_divide trunc unbind unflatten unique
unique_consecutive unsqueeze var var_mean vdot vsplit xlogy
""".split()  # noqa: SIM905  (a word list reads better than 180 quoted names)

_LAZY: dict[str, tuple[str, str]] = {
    **{name: ("picograd.frontend.functions", name) for name in _FUNCTIONS},
    **{name: ("picograd.frontend", name) for name in (
        "CompileStats", "DType", "Tensor", "compile_stats", "float32", "int32", "manual_seed",
        "maximum", "minimum", "where", *_CREATION)},
    "bool": ("picograd.frontend", "bool_"),
    **{name: ("picograd.frontend.dtype", name) for name in (
        "bfloat16", "float16", "float64", "int8", "uint8", "int16", "int64", "uint16", "uint32",
        "uint64", "promote_types", "result_type", "DTYPES", "FLOAT8_DTYPES", "float8_e4m3fn",
        "float8_e5m2")},
    **{alias: ("picograd.frontend.dtype", name) for alias, name in (
        ("half", "float16"), ("float", "float32"), ("double", "float64"), ("int", "int32"),
        ("long", "int64"))},
    "cat": ("picograd.frontend.ops_shape", "cat"),
    "einsum": ("picograd.frontend.ops_linalg", "einsum"),
    "stack": ("picograd.frontend.ops_shape", "stack"),
    "realize": ("picograd.frontend.realize", "realize"),
    "Context": ("picograd.frontend.compile_context", "Context"),
    "SymbolicInt": ("picograd.frontend.variable", "SymbolicInt"),
    "Variable": ("picograd.frontend.variable", "Variable"),
    "jit": ("picograd.jit_replay", "jit"),
    **{name: ("picograd.runtimes.parallel", name) for name in (
        "get_num_threads", "set_num_threads")},
    **{name: ("picograd.frontend.autograd", name) for name in (
        "AutogradError", "enable_grad", "no_grad")},
    "linalg": ("picograd.frontend.linalg", ""),
    "nn": ("picograd.nn", ""),
    "optim": ("picograd.optim", ""),
    "autocast": ("picograd.frontend.autocast", "autocast"),
    "is_autocast_enabled": ("picograd.frontend.autocast", "is_autocast_enabled"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'picograd' has no attribute {name!r}")
    module, attr = _LAZY[name]
    value = importlib.import_module(module)
    value = getattr(value, attr) if attr else value
    globals()[name] = value  # later look-ups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "DTYPES",
    "FLOAT8_DTYPES",
    "ArgumentTypeError",
    "AutogradError",
    "CheckpointError",
    "CompileError",
    "CompileStats",
    "Context",
    "DType",
    "DTypeError",
    "DeviceError",
    "DimRangeError",
    "IndexRangeError",
    "JitError",
    "NonFiniteNormError",
    "OptimizerError",
    "OutOfMemoryError",
    "PicogradError",
    "ShapeError",
    "SymbolicInt",
    "Tensor",
    "ThreadCountError",
    "UnimplementedCaseError",
    "UnimplementedDTypeError",
    "Variable",
    "ZeroDivisorError",
    "arange",
    "autocast",
    "bfloat16",
    "bool",
    "cat",
    "compile_stats",
    "double",
    "einsum",
    "empty",
    "empty_like",
    "enable_grad",
    "eye",
    "float",
    "float8_e4m3fn",
    "float8_e5m2",
    "float16",
    "float32",
    "float64",
    "full",
    "full_like",
    "get_num_threads",
    "half",
    "int",
    "int8",
    "int16",
    "int32",
    "int64",
    "is_autocast_enabled",
    "jit",
    "linalg",
    "linspace",
    "long",
    "manual_seed",
    "maximum",
    "minimum",
    "nn",
    "no_grad",
    "ones",
    "ones_like",
    "optim",
    "promote_types",
    "rand",
    "rand_like",
    "randint",
    "randint_like",
    "randn",
    "randn_like",
    "realize",
    "result_type",
    "set_num_threads",
    "stack",
    "tensor",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "where",
    "zeros",
    "zeros_like",
]
