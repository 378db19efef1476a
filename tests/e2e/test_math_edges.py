"""Math at its edges against torch, on every device: the elementwise functions and activations
at ±1e6, ±inf, NaN and ±0.0 (values and gradients), lerp at special starts, ends and weights,
pow at every special combination of base and exponent (scalar and tensor exponents, scalar
bases, both gradients), logsumexp / log_softmax / softmax over rows of infinities and NaN,
max / min gradients where they find NaN, casts to integer dtypes cutting the gradient, and
float -> int casts of NaN, ±inf and out-of-range values (picograd's saturating rule,
docs/design.md "Float to int casts", which torch on x86 does not follow) on every device and
in the interpreter at every stage.

Results compare with torch's exactly where they are special: NaN with NaN, an infinity with
the same infinity, and a zero, where torch's is zero too, with the same sign; other values
within a relative 1e-5.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from xdsl.parser import Parser

import picograd as pg
import picograd.nn.functional as F
from picograd.compiler.pipelines import run_pipeline, stage_pipeline
from picograd.dialects import make_context
from picograd.dialects.capabilities import capabilities
from picograd.interpreter import run
from picograd.runtimes import get_device

torch = pytest.importorskip("torch", reason="torch is the oracle of the math edge tests")
TF = torch.nn.functional

INF, NAN = math.inf, math.nan
EDGES = np.array([1e6, -1e6, INF, -INF, NAN, 0.0, -0.0, 30.0, -30.0, 100.0, -100.0, 6.0, 3.0,
                  -3.0, 1.0, -1.0, 0.4, -0.4], np.float32)


def _assert_same(ours: np.ndarray, theirs: np.ndarray, what: str, rtol: float = 1e-5,
                 atol: float = 1e-6) -> None:
    """`ours` is `theirs`: NaN, ±inf and the sign of zeros exactly, the rest within rtol."""
    a = np.asarray(ours, np.float64).ravel()
    b = np.asarray(theirs, np.float64).ravel()
    assert a.shape == b.shape, what
    both_nan = np.isnan(a) & np.isnan(b)
    with np.errstate(invalid="ignore"):
        close = np.abs(a - b) <= atol + rtol * np.abs(b)
    infinite = np.isinf(a) | np.isinf(b)
    sign_differs = (a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b))
    ok = both_nan | np.where(infinite, a == b, close & ~sign_differs)
    bad = np.flatnonzero(~ok)
    assert bad.size == 0, (f"{what}: at {bad.tolist()} ours {a[bad].tolist()}, torch's "
                           f"{b[bad].tolist()}")


# ── the elementwise functions and activations ────────────────────────────────

# name -> (picograd function, torch function, inputs left out: torch disagrees with itself)
FAMILY: dict[str, tuple[Callable, Callable, tuple[float, ...]]] = {
    "abs": (lambda t: t.abs(), torch.abs, ()),
    "sign": (lambda t: t.sign(), torch.sign, ()),
    "reciprocal": (lambda t: t.reciprocal(), torch.reciprocal, ()),
    "sqrt": (lambda t: t.sqrt(), torch.sqrt, ()),
    "rsqrt": (lambda t: t.rsqrt(), torch.rsqrt, ()),
    "exp": (lambda t: t.exp(), torch.exp, ()),
    "log": (lambda t: t.log(), torch.log, ()),
    "exp2": (lambda t: t.exp2(), torch.exp2, ()),
    "log2": (lambda t: t.log2(), torch.log2, ()),
    "sin": (lambda t: t.sin(), torch.sin, ()),
    "cos": (lambda t: t.cos(), torch.cos, ()),
    "tan": (lambda t: t.tan(), torch.tan, ()),
    "tanh": (lambda t: t.tanh(), torch.tanh, ()),
    "erf": (lambda t: t.erf(), torch.erf, ()),
    "floor": (lambda t: t.floor(), torch.floor, ()),
    "ceil": (lambda t: t.ceil(), torch.ceil, ()),
    "trunc": (lambda t: t.trunc(), torch.trunc, ()),
    "round": (lambda t: t.round(), torch.round, ()),
    "sigmoid": (lambda t: t.sigmoid(), torch.sigmoid, ()),
    "leaky_relu": (lambda t: F.leaky_relu(t, 0.2), lambda t: TF.leaky_relu(t, 0.2), ()),
    "elu": (lambda t: F.elu(t), TF.elu, ()),
    "elu_2": (lambda t: F.elu(t, 2.0), lambda t: TF.elu(t, 2.0), ()),
    # torch's vectorised gelu kernel gives NaN at inf, its scalar one (a 1-element tensor) inf
    "gelu": (lambda t: F.gelu(t), TF.gelu, (INF,)),
    "gelu_tanh": (lambda t: F.gelu(t, approximate="tanh"),
                  lambda t: TF.gelu(t, approximate="tanh"), ()),
    "silu": (lambda t: F.silu(t), TF.silu, ()),
    "mish": (lambda t: t.mish(), TF.mish, ()),
    "softplus": (lambda t: F.softplus(t), TF.softplus, ()),
    "softplus_2_10": (lambda t: F.softplus(t, 2.0, 10.0), lambda t: TF.softplus(t, 2.0, 10.0),
                      ()),
    "hardswish": (lambda t: t.hardswish(), TF.hardswish, ()),
    "hardsigmoid": (lambda t: t.hardsigmoid(), TF.hardsigmoid, ()),
    "relu6": (lambda t: t.relu6(), TF.relu6, ()),
    "clamp": (lambda t: t.clamp(-2.0, 2.0), lambda t: t.clamp(-2.0, 2.0), ()),
    "clamp_min": (lambda t: t.clamp(min=-2.0), lambda t: t.clamp(min=-2.0), ()),
    "square": (lambda t: t ** 2, lambda t: t ** 2, ()),
    "cube": (lambda t: t ** 3, lambda t: t ** 3, ()),
}


def _inputs(left_out: tuple[float, ...]) -> np.ndarray:
    return np.array([v for v in EDGES if not any(v == x for x in left_out)], np.float32)


def _check_as_one_graph(ours: list[pg.Tensor], outs: list[pg.Tensor],
                        refs: list[tuple[np.ndarray, np.ndarray]],
                        labels: list[tuple[str, str]]) -> None:
    """Backward through the sum of every output, realize values and gradients as one
    graph, and compare each with torch's (value, gradient)."""
    loss = outs[0].sum()
    for out in outs[1:]:
        loss = loss + out.sum()
    loss.backward()
    pg.realize(*outs, *(x.grad for x in ours))
    for x, out, (value, grad), (what, what_grad) in zip(ours, outs, refs, labels,
                                                        strict=True):
        assert x.grad is not None
        _assert_same(out.numpy(), value, what)
        _assert_same(x.grad.numpy(), grad, what_grad)


def test_tanh_of_a_large_input_has_a_zero_gradient(device: str) -> None:
    """The reported case: tanh's small-|x| polynomial overflowed at 1e6 and its
    zero-weighted gradient was NaN."""
    x = pg.Tensor([1e6, -1e6], device=device, requires_grad=True)
    y = x.tanh()
    y.sum().backward()
    assert x.grad is not None
    pg.realize(y, x.grad)
    np.testing.assert_array_equal(y.numpy(), [1.0, -1.0])
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.0])


@pytest.mark.parametrize("names", [list(FAMILY)[:17], list(FAMILY)[17:]],
                         ids=["math", "activations"])
def test_functions_at_special_values_match_torch(device: str, names: list[str]) -> None:
    """Values and gradients (of the sum, so each is the derivative itself) at ±1e6, ±inf,
    NaN, ±0.0 and the kinks, realized as one graph."""
    ours, outs, refs = [], [], []
    for name in names:
        fn, tfn, left_out = FAMILY[name]
        a = _inputs(left_out)
        x = pg.Tensor(a, device=device, requires_grad=True)
        tx = torch.tensor(a, requires_grad=True)
        ours.append(x)
        outs.append(fn(x))
        ref = tfn(tx)
        ref.sum().backward()
        refs.append((ref.detach().numpy(), tx.grad.numpy()))
    _check_as_one_graph(ours, outs, refs, [(f"{n} on {device}", f"{n}'s gradient on "
                                            f"{device}") for n in names])


def test_lerp_at_special_values_matches_torch(device: str) -> None:
    """Every (start, end, weight) of special values: torch's value (its signed zeros at
    weight 1 included) and its three gradients (1 - w, w, end - start: finite at w = inf)."""
    values = (0.0, -0.0, 1.0, -2.0, INF, -INF, NAN, 1e6)
    weights = (0.0, 0.3, 0.5, 1.0, 1.5, -0.5, INF, NAN)
    columns = np.array([(a, b, w) for a in values for b in values for w in weights],
                       np.float32).T.copy()
    ours = [pg.Tensor(c, device=device, requires_grad=True) for c in columns]
    theirs = [torch.tensor(c, requires_grad=True) for c in columns]
    out, ref = ours[0].lerp(ours[1], ours[2]), theirs[0].lerp(theirs[1], theirs[2])
    out.sum().backward()
    ref.sum().backward()
    pg.realize(out, *(t.grad for t in ours))
    _assert_same(out.numpy(), ref.detach().numpy(), f"lerp on {device}")
    for name, t, tt in zip(("start", "end", "weight"), ours, theirs, strict=True):
        assert t.grad is not None
        _assert_same(t.grad.numpy(), tt.grad.numpy(), f"lerp's {name} gradient on {device}")


# ── pow ──────────────────────────────────────────────────────────────────────

BASES = np.array([0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.7, -3.7],
                 np.float32)
EXPONENTS = (0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 4.0, 7.0, 0.5, -0.5, 0.3, -0.3, 1.5,
             -1.5, 2.5, INF, -INF, NAN)


def test_pow_of_minus_infinity(device: str) -> None:
    """The reported case: (-inf) ** 0.3 is inf (C's pow), not NaN."""
    x = pg.Tensor([-INF, -8.0, -0.0], device=device)
    np.testing.assert_array_equal((x ** 0.3).numpy(), [INF, NAN, 0.0])


def test_pow_with_a_scalar_exponent_matches_torch(device: str) -> None:
    """Every base of BASES to every scalar exponent: torch's value (its kernel's special
    cases: products, sqrt and rsqrt for ±0.5, C's pow) and its gradient."""
    ours, outs, refs = [], [], []
    for e in EXPONENTS:
        x = pg.Tensor(BASES, device=device, requires_grad=True)
        tx = torch.tensor(BASES, requires_grad=True)
        ours.append(x)
        outs.append(x ** e)
        ref = tx ** e
        ref.sum().backward()
        refs.append((ref.detach().numpy(), tx.grad.numpy()))
    _check_as_one_graph(ours, outs, refs, [(f"x ** {e} on {device}", f"the gradient of "
                                            f"x ** {e} on {device}") for e in EXPONENTS])


def test_pow_with_a_tensor_exponent_matches_torch(device: str) -> None:
    """Every (base, exponent) pair as tensors, both gradients; and scalar bases (`b ** t`)
    with the exponent's gradient."""
    grid = np.meshgrid(BASES, np.array(EXPONENTS, np.float32), indexing="ij")
    b, e = (a.ravel().copy() for a in grid)
    x = pg.Tensor(b, device=device, requires_grad=True)
    y = pg.Tensor(e, device=device, requires_grad=True)
    tx, ty = torch.tensor(b, requires_grad=True), torch.tensor(e, requires_grad=True)
    scalar_bases = (2.0, 0.5, 0.0, -0.0, -2.0, 1.0, INF, -INF, NAN, 3)
    exps = [pg.Tensor(np.array(EXPONENTS, np.float32), device=device, requires_grad=True)
            for _ in scalar_bases]
    texps = [torch.tensor(EXPONENTS, requires_grad=True) for _ in scalar_bases]
    out = x ** y
    routs = [base ** t for base, t in zip(scalar_bases, exps, strict=True)]
    loss = out.sum()
    for r in routs:
        loss = loss + r.sum()
    loss.backward()
    ref = tx ** ty
    ref.sum().backward()
    rrefs = [base ** t for base, t in zip(scalar_bases, texps, strict=True)]
    for r in rrefs:
        r.sum().backward()
    assert x.grad is not None and y.grad is not None
    pg.realize(out, x.grad, y.grad, *routs, *(t.grad for t in exps))
    _assert_same(out.numpy(), ref.detach().numpy(), f"x ** t on {device}")
    _assert_same(x.grad.numpy(), tx.grad.numpy(), f"d(x ** t)/dx on {device}")
    _assert_same(y.grad.numpy(), ty.grad.numpy(), f"d(x ** t)/dt on {device}")
    for base, r, rr, t, tt in zip(scalar_bases, routs, rrefs, exps, texps, strict=True):
        assert t.grad is not None
        _assert_same(r.numpy(), rr.detach().numpy(), f"{base} ** t on {device}")
        _assert_same(t.grad.numpy(), tt.grad.numpy(), f"d({base} ** t)/dt on {device}")


# ── logsumexp and the softmaxes ──────────────────────────────────────────────

ROWS = np.array([[-INF, -INF, -INF], [INF, INF, 1.0], [INF, 1.0, 2.0], [-INF, 1.0, 2.0],
                 [NAN, 1.0, 2.0], [1e6, -1e6, 0.0], [1e6, 1e6, 1e6], [-1e6, -1e6, 5.0],
                 [INF, -INF, 0.0], [-INF, -INF, 3.0]], np.float32)


def test_logsumexp_of_infinities(device: str) -> None:
    """The reported case: a row of -inf gives -inf (not NaN), one holding +inf gives inf."""
    got = pg.Tensor([-INF, -INF], device=device).logsumexp(0)
    assert got.numpy() == -INF
    got = F.logsumexp(pg.Tensor([[INF, 1.0], [INF, -INF]], device=device), 1)
    np.testing.assert_array_equal(got.numpy(), [INF, INF])


@pytest.mark.parametrize("name", ["logsumexp", "logsumexp_keepdim", "log_softmax", "softmax"])
def test_softmax_family_over_special_rows_matches_torch(device: str, name: str) -> None:
    """Values and gradients (for a random upstream gradient) over rows of ±inf, NaN and
    ±1e6."""
    fns: dict[str, Callable] = {
        "logsumexp": lambda t: t.logsumexp(1),
        "logsumexp_keepdim": lambda t: t.logsumexp(1, keepdim=True),
        "log_softmax": lambda t: t.log_softmax(1),
        "softmax": lambda t: t.softmax(1),
    }
    x = pg.Tensor(ROWS, device=device, requires_grad=True)
    tx = torch.tensor(ROWS, requires_grad=True)
    out, ref = fns[name](x), fns[name](tx)
    seed = np.random.default_rng(3).standard_normal(tuple(ref.shape)).astype(np.float32)
    (out * pg.Tensor(seed, device=device)).sum().backward()
    (ref * torch.from_numpy(seed)).sum().backward()
    assert x.grad is not None
    pg.realize(out, x.grad)
    _assert_same(out.numpy(), ref.detach().numpy(), f"{name} on {device}")
    _assert_same(x.grad.numpy(), tx.grad.numpy(), f"{name}'s gradient on {device}")


def test_max_and_min_with_nan_give_torchs_gradients(device: str) -> None:
    """A reduction of every element that found NaN shares the gradient among the NaNs
    (torch's max()/min()); one along a dim gives NaN to the row holding it (torch's amax)."""
    a = np.array([[1.0, NAN, 2.0], [NAN, 3.0, -INF]], np.float32)
    cases = {"max": (lambda t: t.max(), lambda t: t.max()),
             "min": (lambda t: t.min(), lambda t: t.min()),
             "max_dim": (lambda t: t.max(1), lambda t: t.amax(1)),
             "min_dim": (lambda t: t.min(0), lambda t: t.amin(0))}
    for name, (fn, tfn) in cases.items():
        x = pg.Tensor(a, device=device, requires_grad=True)
        tx = torch.tensor(a, requires_grad=True)
        out, ref = fn(x), tfn(tx)
        out.sum().backward()
        ref.sum().backward()
        assert x.grad is not None
        _assert_same(out.numpy(), ref.detach().numpy(), f"{name} on {device}")
        _assert_same(x.grad.numpy(), tx.grad.numpy(), f"{name}'s gradient on {device}")


# ── casts ────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("dtype", [pg.int32, pg.int16, pg.int8, pg.uint8, pg.bool])
def test_a_cast_to_an_integer_dtype_cuts_the_gradient(device: str, dtype: pg.DType) -> None:
    """As torch: the cast's result does not require grad, so backward from it raises, and
    an expression mixing it with the float tensor has only the float path's gradient."""
    a = np.array([1.5, -2.5, 3.0], np.float32)
    x, tx = pg.Tensor(a, device=device, requires_grad=True), torch.tensor(a, requires_grad=True)
    tdtype = {pg.int32: torch.int32, pg.int16: torch.int16, pg.int8: torch.int8,
              pg.uint8: torch.uint8, pg.bool: torch.bool}[dtype]
    cast, tcast = x.cast(dtype), tx.to(tdtype)
    assert not cast.requires_grad and not tcast.requires_grad
    with pytest.raises(RuntimeError, match="does not require grad"):
        tcast.sum().backward()
    with pytest.raises(pg.AutogradError, match="does not require grad"):
        cast.sum().backward()
    (cast * x).sum().backward()
    (tcast * tx).sum().backward()
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())


def test_casts_between_float_dtypes_keep_the_gradient(device: str) -> None:
    x = pg.Tensor([1.5, -2.5], device=device, requires_grad=True)
    y = x.half() * 3.0
    assert y.requires_grad
    y.float().sum().backward()
    assert x.grad is not None
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])


CAST_INPUTS = np.array([NAN, INF, -INF, 3e9, -3e9, 2147483520.0, 2147483648.0, -2147483648.0,
                        -2147483904.0, 1e6, 65535.5, 300.0, -129.5, 255.9, 256.0, 2.9, -2.9,
                        -0.5, -1.0, 0.0], np.float32)
HALF_INPUTS = np.array([NAN, INF, -INF, 65504.0, -65504.0, 300.0, -129.5, 2.5, -1.0],
                       np.float16)


def _saturated(value: float, dtype: pg.DType) -> int:
    """picograd's float -> int rule: truncate, saturate at int32 (int64 for int64), NaN -> 0,
    then keep the low bits of a narrower type."""
    bits = 64 if dtype is pg.int64 else 32
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    if math.isnan(value):
        n = 0
    else:
        n = high if value > high else low if value < low else math.trunc(value)
    width = dtype.itemsize * 8
    n &= (1 << width) - 1
    return n - (1 << width) if dtype is not pg.uint8 and n >> (width - 1) else n


def _holds(device: str, dtype: pg.DType) -> bool:
    return capabilities(get_device(device).renderer).supports(dtype.ir)


@pytest.mark.parametrize("dtype", [pg.int32, pg.int64, pg.int16, pg.int8, pg.uint8])
def test_float_to_int_casts_saturate(device: str, dtype: pg.DType) -> None:
    """NaN -> 0, ±inf and values beyond int32 (int64) -> its ends, narrower types the low
    bits of that int32: the same on every device (C's cast is undefined there). Where torch
    is defined (inside the int32 range) it agrees."""
    if not _holds(device, dtype):
        pytest.skip(f"{device} cannot hold {dtype.name}")
    for source in (CAST_INPUTS, HALF_INPUTS):
        got = pg.Tensor(source, device=device).cast(dtype).numpy()
        want = np.array([_saturated(float(v), dtype) for v in source], dtype.np)
        np.testing.assert_array_equal(got, want, err_msg=f"{source.dtype} -> {dtype.name}")
        defined = np.isfinite(source) & (np.abs(source.astype(np.float64)) < 2.0 ** 31)
        torch_cast = torch.from_numpy(source[defined]).to(getattr(torch, dtype.name)).numpy()
        np.testing.assert_array_equal(want[defined], torch_cast)


CAST_PROGRAM = """
func.func @main(%x: tensor<20xf32>, %h: tensor<9xf16>) -> (tensor<20xi32>, tensor<20xi8>,
    tensor<20xui8>, tensor<20xi64>, tensor<9xi16>) {
  %a = pg_tensor.cast %x : tensor<20xf32> to tensor<20xi32>
  %b = pg_tensor.cast %x : tensor<20xf32> to tensor<20xi8>
  %c = pg_tensor.cast %x : tensor<20xf32> to tensor<20xui8>
  %d = pg_tensor.cast %x : tensor<20xf32> to tensor<20xi64>
  %e = pg_tensor.cast %h : tensor<9xf16> to tensor<9xi16>
  func.return %a, %b, %c, %d, %e : tensor<20xi32>, tensor<20xi8>, tensor<20xui8>,
    tensor<20xi64>, tensor<9xi16>
}
"""


@pytest.mark.parametrize("stage", ["tensor", "sched", "loop", "uop"])
def test_the_interpreter_casts_floats_to_ints_by_the_same_rule(stage: str) -> None:
    module = Parser(make_context(), CAST_PROGRAM).parse_module()
    if stage != "tensor":
        run_pipeline(module, stage_pipeline(stage))
    results = run(module, [CAST_INPUTS, HALF_INPUTS])
    dtypes = (pg.int32, pg.int8, pg.uint8, pg.int64, pg.int16)
    sources = (CAST_INPUTS,) * 4 + (HALF_INPUTS,)
    for got, dtype, source in zip(results, dtypes, sources, strict=True):
        want = np.array([_saturated(float(v), dtype) for v in source], dtype.np)
        np.testing.assert_array_equal(got.ravel(), want, err_msg=f"{stage}: {dtype.name}")


def test_relu_keeps_negative_zero_and_nan(device: str) -> None:
    values = np.array([-0.0, 0.0, -1.0, 2.0, np.nan, -np.inf, np.inf], np.float32)
    got = pg.Tensor(values, device=device).relu().numpy()
    want = torch.relu(torch.from_numpy(values)).numpy()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
