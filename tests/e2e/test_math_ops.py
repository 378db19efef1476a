"""Elementwise math, activations, pow, rounding, bitwise and floor-division ops against torch:
forward values and input gradients on every device (integer ops forward only)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import picograd as pg

torch = pytest.importorskip("torch", reason="torch is the oracle of the math op tests")

rng = np.random.default_rng(11)
TF = torch.nn.functional


def _wide(shape: tuple[int, ...]) -> np.ndarray:
    """Normal values with zeros, integers, halves and a few large magnitudes mixed in."""
    a = (rng.standard_normal(shape) * 3).astype(np.float32)
    flat = a.reshape(-1)
    flat[: 8] = [0.0, -2.5, 2.5, 1.5, -0.5, 3.0, -40.0, 35.0][: flat.size]
    return a


def _positive(shape: tuple[int, ...]) -> np.ndarray:
    return (np.abs(rng.standard_normal(shape)) * 2 + 0.1).astype(np.float32)


def _both(name: str, *args, **kwargs) -> Callable:
    """A function calling the method `name` on either library's tensor."""
    return lambda t: getattr(t, name)(*args, **kwargs)


# name -> (picograd fn, torch fn, input maker)
UNARY: dict[str, tuple[Callable, Callable, Callable]] = {
    "abs": (_both("abs"), _both("abs"), _wide),
    "sign": (_both("sign"), _both("sign"), _wide),
    "reciprocal": (_both("reciprocal"), _both("reciprocal"), _positive),
    "rsqrt": (_both("rsqrt"), _both("rsqrt"), _positive),
    "exp2": (_both("exp2"), _both("exp2"), lambda s: rng.standard_normal(s).astype(np.float32)),
    "log2": (_both("log2"), _both("log2"), _positive),
    "cos": (_both("cos"), _both("cos"), _wide),
    "tan": (_both("tan"), _both("tan"), lambda s: rng.uniform(-1.3, 1.3, s).astype(np.float32)),
    "tanh": (_both("tanh"), _both("tanh"), _wide),
    "tanh_small": (_both("tanh"), _both("tanh"),
                   lambda s: rng.uniform(-0.4, 0.4, s).astype(np.float32)),
    "sigmoid": (_both("sigmoid"), _both("sigmoid"), _wide),
    "erf": (_both("erf"), _both("erf"), _wide),
    "floor": (_both("floor"), _both("floor"), _wide),
    "ceil": (_both("ceil"), _both("ceil"), _wide),
    "trunc": (_both("trunc"), _both("trunc"), _wide),
    "round": (_both("round"), _both("round"), _wide),
    "square": (lambda t: t ** 2, lambda t: t ** 2, _wide),
    "cube": (lambda t: t ** 3, lambda t: t ** 3, _wide),
    "pow_neg_int": (lambda t: t ** -2, lambda t: t ** -2, _positive),
    "pow_zero": (lambda t: t ** 0 * t, lambda t: t ** 0 * t, _wide),
    "pow_frac": (lambda t: t ** 0.7, lambda t: t ** 0.7, _positive),
    "pow_neg_frac": (lambda t: t.pow(-1.5), lambda t: t.pow(-1.5), _positive),
    "rpow": (lambda t: 2.0 ** t, lambda t: 2.0 ** t, _wide),
    "rpow_3": (lambda t: 3 ** t, lambda t: 3 ** t, lambda s: rng.standard_normal(s)
               .astype(np.float32)),
    "clamp": (_both("clamp", -1.0, 2.0), _both("clamp", -1.0, 2.0), _wide),
    "clamp_min": (_both("clamp", min=0.5), _both("clamp", min=0.5), _wide),
    "clip_max": (_both("clip", max=-0.5), _both("clip", max=-0.5), _wide),
    "leaky_relu": (_both("leaky_relu"), TF.leaky_relu, _wide),
    "leaky_relu_02": (_both("leaky_relu", 0.2), lambda t: TF.leaky_relu(t, 0.2), _wide),
    "elu": (_both("elu"), TF.elu, _wide),
    "elu_alpha": (_both("elu", 0.5), lambda t: TF.elu(t, 0.5), _wide),
    "gelu": (_both("gelu"), TF.gelu, _wide),
    "gelu_tanh": (_both("gelu", approximate="tanh"), lambda t: TF.gelu(t, approximate="tanh"),
                  _wide),
    "silu": (_both("silu"), TF.silu, _wide),
    "mish": (_both("mish"), TF.mish, _wide),
    "softplus": (_both("softplus"), TF.softplus, _wide),
    "softplus_beta": (_both("softplus", 2.0, 5.0), lambda t: TF.softplus(t, 2.0, 5.0), _wide),
    "hardswish": (_both("hardswish"), TF.hardswish, _wide),
    "hardsigmoid": (_both("hardsigmoid"), TF.hardsigmoid, _wide),
    "relu6": (_both("relu6"), TF.relu6, _wide),
    "logsumexp": (_both("logsumexp", 1), lambda t: t.logsumexp(1), _wide),
    "logsumexp_keep": (_both("logsumexp", 0, True), lambda t: t.logsumexp(0, True), _wide),
    "softmax": (_both("softmax", 1), lambda t: t.softmax(1), _wide),
    "log_softmax": (_both("log_softmax", 0), lambda t: t.log_softmax(0), _wide),
    "mod_scalar": (lambda t: t % 1.5, lambda t: t % 1.5, _wide),
    "mod_neg_scalar": (lambda t: t % -0.75, lambda t: t % -0.75, _wide),
}


def _check(out, ref, ours, theirs, atol: float = 1e-5) -> None:
    seed = rng.standard_normal(tuple(ref.shape)).astype(np.float32)
    (out * pg.Tensor(seed, device=ours[0].device)).sum().backward()
    (ref * torch.from_numpy(seed)).sum().backward()
    pg.realize(out, *(o.grad for o in ours))  # one graph: forward and gradients
    np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-5, atol=atol)
    for o, t in zip(ours, theirs, strict=True):
        assert o.grad is not None and o.grad.shape == o.shape
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=atol)


# the unary cases run a few at a time, each group realized as one graph (compiling dominates)
GROUP = 4
GROUPS = [list(UNARY)[i:i + GROUP] for i in range(0, len(UNARY), GROUP)]


@pytest.mark.parametrize("names", GROUPS, ids=["-".join(g) for g in GROUPS])
def test_unary_matches_torch(device: str, names: list[str]) -> None:
    outs, refs, ours, theirs = [], [], [], []
    for name in names:
        fn, tfn, make = UNARY[name]
        a = make((4, 6))
        ours.append(pg.Tensor(a, device=device, requires_grad=True))
        theirs.append(torch.tensor(a, requires_grad=True))
        outs.append(fn(ours[-1]))
        refs.append(tfn(theirs[-1]))
    loss, ref_loss = None, None
    for out, ref in zip(outs, refs, strict=True):
        seed = rng.standard_normal(tuple(ref.shape)).astype(np.float32)
        term = (out * pg.Tensor(seed, device=device)).sum()
        loss = term if loss is None else loss + term
        ref_term = (ref * torch.from_numpy(seed)).sum()
        ref_loss = ref_term if ref_loss is None else ref_loss + ref_term
    assert loss is not None and ref_loss is not None
    loss.backward()
    ref_loss.backward()
    pg.realize(*outs, *(o.grad for o in ours))
    for name, out, ref, o, t in zip(names, outs, refs, ours, theirs, strict=True):
        np.testing.assert_allclose(out.numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-5,
                                   err_msg=f"{name} forward")
        assert o.grad is not None and o.grad.shape == o.shape
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=f"{name} gradient")


def _pair_wide(shape):
    return _wide(shape), _wide(shape)


def _pair_pow_int(shape):
    """Negative and positive bases with integer exponents (zero bases: test_pow_edge_values,
    where torch's gradient is inf for negative exponents)."""
    a = _wide(shape)
    a[a == 0] = 1.75
    return a, rng.integers(-3, 4, shape).astype(np.float32)


def _pair_pow(shape):
    return _positive(shape), rng.uniform(-2, 2, shape).astype(np.float32)


def _pair_divisor(shape):
    """Divisors with few significant bits, so y * floor(x / y) is exact in float32 (the
    remainder of divisors like 0.7 can differ from torch's exact fmod by one divisor next to
    an exact multiple; see ops_math's docstring)."""
    b = rng.integers(1, 24, shape).astype(np.float32) * 0.25
    return _wide(shape), b * rng.choice([-1, 1], shape).astype(np.float32)


def _lerp_args(shape):
    return _wide(shape), _wide(shape), rng.uniform(-0.5, 1.5, shape).astype(np.float32)


# name -> (function of the tensors on both libraries, input maker, grad of which inputs)
MULTI: dict[str, tuple[Callable, Callable, tuple[bool, ...]]] = {
    "pow_tensor": (lambda a, b: a ** b, _pair_pow, (True, True)),
    "pow_tensor_int_exponents": (lambda a, b: a.pow(b), _pair_pow_int, (True, False)),
    "pow_scalar_tensor_exp": (lambda a: 2.5 ** a, lambda s: (_wide(s) * 0.3,), (True,)),
    "clamp_tensor": (lambda a, lo, hi: a.clamp(lo, hi),
                     lambda s: (_wide(s), _wide(s) - 1, _wide(s) + 1), (True, True, True)),
    "lerp": (lambda a, b, w: a.lerp(b, w), _lerp_args, (True, True, True)),
    "lerp_scalar": (lambda a, b: a.lerp(b, 0.3), _pair_wide, (True, True)),
    "remainder": (lambda a, b: a % b, _pair_divisor, (True, True)),
    "remainder_method": (lambda a, b: a.remainder(b), _pair_divisor, (True, True)),
}


@pytest.mark.parametrize("name", list(MULTI))
def test_multi_matches_torch(device: str, name: str) -> None:
    fn, make, grads = MULTI[name]
    arrays = make((3, 5))
    ours = [pg.Tensor(a, device=device, requires_grad=g) for a, g in zip(arrays, grads,
                                                                          strict=True)]
    theirs = [torch.tensor(a, requires_grad=g) for a, g in zip(arrays, grads, strict=True)]
    _check(fn(*ours), fn(*theirs), [o for o, g in zip(ours, grads, strict=True) if g],
           [t for t, g in zip(theirs, grads, strict=True) if g])


def _compare(cases: dict[str, tuple], exact: bool = True) -> None:
    """Realize every picograd result in one graph, then compare each with torch's."""
    pg.realize(*(ours for ours, _ in cases.values()))
    for name, (ours, ref) in cases.items():
        if exact:
            np.testing.assert_array_equal(ours.numpy(), ref.numpy(), err_msg=name)
        else:
            np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=1e-6, atol=2e-7,
                                       err_msg=name)


def test_floor_divide_matches_torch(device: str) -> None:
    """Forward only: torch has no derivative for floor_divide (ours is zero) nor for
    scalar % tensor."""
    a, b = _pair_divisor((4, 5))
    pa, pb, ta, tb = pg.Tensor(a, device=device), pg.Tensor(b, device=device), torch.tensor(a), \
        torch.tensor(b)
    # (inf // inf and inf % inf are NaN on the CPUs, but WGSL need not keep inf * 0 a NaN)
    z = np.array([1.0, -1.0, 0.0, 3.0, np.inf, -2.0, 2.0, 0.0, np.nan], np.float32)
    zero = np.array([0.0, 0.0, 2.0, -0.0, 2.0, np.inf, np.inf, -np.inf, 2.0], np.float32)
    pz, pzero, tz, tzero = pg.Tensor(z, device=device), pg.Tensor(zero, device=device), \
        torch.tensor(z), torch.tensor(zero)
    _compare({
        "tensor": (pa // pb, ta // tb), "scalar": (pa // 0.75, ta // 0.75),
        "neg_scalar": (pa // -1.5, ta // -1.5), "rfloordiv": (7.5 // pb, 7.5 // tb),
        "rmod": (7.5 % pb, 7.5 % tb), "by_zero": (pz // pzero, tz // tzero),
        "mod_zero": (pz % pzero, tz % tzero),
    })


def test_float_edge_values(device: str) -> None:
    """inf, NaN, huge and half-way values through the classifiers, rounding and tanh/sigmoid."""
    a = np.array([0.0, -0.0, 0.5, 1.5, 2.5, -2.5, -3.5, 1e9, -3e8, 8388607.5, -8388608.0,
                  np.inf, -np.inf, np.nan, 100.0, -100.0, 1e-6, -7e-3], np.float32)
    ours, theirs = pg.Tensor(a, device=device), torch.tensor(a)
    _compare({op: (getattr(ours, op)(), getattr(theirs, op)())
              for op in ("isnan", "isinf", "isfinite")})
    _compare({op: (getattr(ours, op)(), getattr(TF if op in ("relu6", "hardsigmoid") else torch,
                                                op)(theirs))
              for op in ("floor", "ceil", "trunc", "round", "sign", "abs", "tanh", "sigmoid",
                         "erf", "relu6", "hardsigmoid")}, exact=False)


def test_erf_accuracy(device: str) -> None:
    from math import erf

    x = np.linspace(-5, 5, 4001, dtype=np.float32)
    exact = np.array([erf(float(v)) for v in x])
    err = np.abs(pg.Tensor(x, device=device).erf().numpy().astype(np.float64) - exact)
    assert err.max() <= 1.5e-7


def test_pow_edge_values(device: str) -> None:
    x = np.array([0.0, 0.0, 0.0, -2.0, -2.0, -2.0, 3.0, np.nan, 1.0, np.inf, -8.0], np.float32)
    y = np.array([2.0, 0.0, -1.0, 3.0, 2.0, 0.5, 0.0, 0.0, np.nan, 0.0, 1 / 3], np.float32)
    xi = np.array([-3, -1, 0, 2, 5, 7], np.int32)
    yi = np.array([0, 3, 2, 1, 4, 2], np.int32)
    ti, pi = torch.tensor(xi), pg.Tensor(xi, device=device)
    cases = {"float": (pg.Tensor(x, device=device) ** pg.Tensor(y, device=device),
                       torch.tensor(x) ** torch.tensor(y)),
             "int_tensor": (pi ** pg.Tensor(yi, device=device), ti ** torch.tensor(yi))}
    cases.update({f"int_{n}": (pi ** n, ti ** n) for n in (0, 1, 2, 3, 5)})
    _compare(cases, exact=False)
    assert all(ours.dtype == pg.int32 for name, (ours, _) in cases.items() if "int" in name)
    assert (pi ** 2.0).dtype == pg.float32


def test_rounding_has_zero_gradient(device: str) -> None:
    a = pg.Tensor(_wide((3, 4)), device=device, requires_grad=True)
    (a.floor() + a.round() * 2 + a.sign()).sum().backward()
    assert a.grad is not None
    np.testing.assert_array_equal(a.grad.numpy(), np.zeros((3, 4), np.float32))


def test_integer_ops(device: str) -> None:
    a = rng.integers(-50, 50, (4, 5)).astype(np.int32)
    b = rng.integers(1, 9, (4, 5)).astype(np.int32) * rng.choice([-1, 1], (4, 5)).astype(np.int32)
    pa, pb = pg.Tensor(a, device=device), pg.Tensor(b, device=device)
    ta, tb = torch.tensor(a), torch.tensor(b)
    cases = {
        "and": (pa & pb, ta & tb), "or": (pa | pb, ta | tb), "xor": (pa ^ pb, ta ^ tb),
        "not": (~pa, ~ta), "and_scalar": (pa & 6, ta & 6), "ror_scalar": (3 | pa, 3 | ta),
        "bitwise_xor": (pa.bitwise_xor(pb), ta.bitwise_xor(tb)),
        "bitwise_not": (pa.bitwise_not(), ta.bitwise_not()),
        "shl": (pa << 3, ta << 3), "shl_0": (pa << 0, ta << 0), "shl_40": (pa << 40, ta << 40),
        "shr": (pa >> 2, ta >> 2), "shr_31": (pa >> 31, ta >> 31), "shr_35": (pa >> 35, ta >> 35),
        "mod": (pa % pb, ta % tb), "mod_scalar": (pa % 7, ta % 7), "mod_neg": (pa % -4, ta % -4),
        "rmod": (17 % pb, 17 % tb), "floordiv": (pa // pb, ta // tb),
        "floordiv_scalar": (pa // -3, ta // -3), "rfloordiv": (-17 // pb, -17 // tb),
        "abs": (pa.abs(), ta.abs()), "sign": (pa.sign(), ta.sign()),
        "clamp": (pa.clamp(-10, 10), ta.clamp(-10, 10)), "relu6": (pa.relu6(), TF.relu6(ta)),
        "floor": (pa.floor(), ta.floor()), "round": (pa.round(), ta.round()),
    }
    assert all(ours.dtype == pg.int32 for ours, _ in cases.values())
    cases.update({op: (getattr(pa, op)(), getattr(ta, op)())
                  for op in ("isnan", "isinf", "isfinite")})
    _compare(cases)


def test_bool_bitwise(device: str) -> None:
    a, b = rng.random(7) > 0.5, rng.random(7) > 0.5
    pa, pb = pg.Tensor(a, device=device), pg.Tensor(b, device=device)
    ta, tb = torch.tensor(a), torch.tensor(b)
    cases = {"and": (pa & pb, ta & tb), "or": (pa | pb, ta | tb), "xor": (pa ^ pb, ta ^ tb),
             "not": (~pa, ~ta), "and_scalar": (pa & True, ta & True)}
    assert all(ours.dtype == pg.bool for ours, _ in cases.values())
    _compare(cases)


def test_errors() -> None:
    f = pg.Tensor(np.ones(3, np.float32))
    i = pg.Tensor(np.ones(3, np.int32))
    with pytest.raises(pg.DTypeError, match="bitwise_and"):
        _ = f & i
    with pytest.raises(pg.DTypeError, match="bitwise_not"):
        _ = ~f
    with pytest.raises(pg.DTypeError, match="<<"):
        _ = f << 1
    with pytest.raises(pg.DTypeError, match="shift amount"):
        _ = i >> -1
    with pytest.raises(pg.DTypeError, match="negative integer powers"):
        _ = i ** -1
    with pytest.raises(pg.ShapeError, match="gelu"):
        f.gelu(approximate="erf")
    with pytest.raises(pg.ShapeError, match="clamp"):
        f.clamp()


def test_activation_modules() -> None:
    from picograd.nn import activations as A

    a = _wide((3, 4))
    x, t = pg.Tensor(a), torch.tensor(a)
    pairs = [(A.GELU(), torch.nn.GELU()), (A.GELU("tanh"), torch.nn.GELU("tanh")),
             (A.SiLU(), torch.nn.SiLU()), (A.Sigmoid(), torch.nn.Sigmoid()),
             (A.Tanh(), torch.nn.Tanh()), (A.LeakyReLU(0.1), torch.nn.LeakyReLU(0.1)),
             (A.ELU(0.5), torch.nn.ELU(0.5)), (A.Softplus(2.0), torch.nn.Softplus(2.0)),
             (A.Mish(), torch.nn.Mish()), (A.Hardswish(), torch.nn.Hardswish()),
             (A.Hardsigmoid(), torch.nn.Hardsigmoid()), (A.ReLU6(), torch.nn.ReLU6())]
    outs = [m(x) for m, _ in pairs]
    pg.realize(*outs)
    for out, (m, tm) in zip(outs, pairs, strict=True):
        assert list(m.parameters()) == []
        np.testing.assert_allclose(out.numpy(), tm(t).numpy(), rtol=1e-5, atol=1e-5,
                                   err_msg=type(m).__name__)


@pytest.mark.parametrize(("name", "args"), [("relu", ()), ("gelu", ()), ("silu", ()),
                                            ("sigmoid", ()), ("tanh", ()),
                                            ("leaky_relu", (0.2,)), ("elu", (0.5,)),
                                            ("softplus", (2.0, 5.0))])
def test_functional_activations_are_torchs(name: str, args: tuple) -> None:
    """`picograd.nn.functional` has torch's F names for the activations."""
    import picograd.nn.functional as F

    x = rng.standard_normal((4, 7)).astype(np.float32) * 3
    got = getattr(F, name)(pg.Tensor(x), *args).numpy()
    want = getattr(TF, name)(torch.from_numpy(x), *args).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    if name == "gelu":  # torch takes `approximate` by keyword only
        got = F.gelu(pg.Tensor(x), approximate="tanh").numpy()
        want = TF.gelu(torch.from_numpy(x), approximate="tanh").numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "round"])
def test_float64_rounding_keeps_values_and_signed_zeros(name: str) -> None:
    """The sign bit of a float64 is read through int64 (it was a 4-byte bitcast: an error)."""
    x = np.array([-2.5, -0.5, -0.0, 0.0, 0.4, 1.5, 2.5, -1e300, 4503599627370497.0, np.nan,
                  -np.inf], np.float64)
    got = getattr(pg.Tensor(x, device="CPU"), name)().numpy()
    want = getattr(np, name)(x)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
