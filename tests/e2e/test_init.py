"""picograd.nn.init against torch.nn.init: gains and fans exactly, the deterministic fills
(eye_, dirac_, constant_) exactly, and the random ones by their statistics on large
tensors with a fixed seed (the samples differ from torch's: different generators)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import picograd as pg
from picograd.nn import init

torch = pytest.importorskip("torch", reason="torch is the oracle of the init tests")

T = pg.Tensor

NONLINEARITIES = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d", "sigmoid", "tanh", "relu",
                  "leaky_relu", "selu"]


def param(*shape: int) -> pg.Tensor:
    return T(np.zeros(shape, np.float32), requires_grad=True)


@pytest.mark.parametrize("nonlinearity", NONLINEARITIES)
def test_calculate_gain_matches_torch(nonlinearity: str) -> None:
    assert init.calculate_gain(nonlinearity) == torch.nn.init.calculate_gain(nonlinearity)
    for p in (0.2, 1, math.sqrt(5)):
        assert init.calculate_gain(nonlinearity, p) == \
            torch.nn.init.calculate_gain(nonlinearity, p)


def test_calculate_gain_errors() -> None:
    with pytest.raises(ValueError, match="unsupported nonlinearity 'swish'"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="negative_slope True is not a valid number"):
        init.calculate_gain("leaky_relu", True)  # type: ignore[arg-type]


@pytest.mark.parametrize("shape", [(3, 4), (8, 3, 5, 5), (2, 6, 3), (4, 2, 1, 2, 3), (5, 0)])
def test_fans_match_torch(shape: tuple[int, ...]) -> None:
    want = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    assert init.calculate_fan_in_and_fan_out(T.empty(shape)) == want


def test_fan_errors() -> None:
    with pytest.raises(pg.ShapeError, match=r"at least 2 dims, got shape \(5,\)"):
        init.xavier_uniform_(T.empty(5))
    with pytest.raises(ValueError, match="mode 'fan_avg' is not supported"):
        init.kaiming_normal_(T.empty(3, 3), mode="fan_avg")


def _uniform_bound_checks(values: np.ndarray, bound: float) -> None:
    assert np.abs(values).max() <= bound * (1 + 1e-6)
    assert np.abs(values).max() > 0.99 * bound  # the whole range is used
    assert abs(values.mean()) < 0.02 * bound
    assert values.std() == pytest.approx(bound / math.sqrt(3), rel=0.02)


@pytest.mark.parametrize(("shape", "kwargs"), [
    ((256, 512), {}),
    ((64, 32, 3, 3), {"a": math.sqrt(5)}),  # torch's Linear / Conv2d default
    ((300, 200), {"mode": "fan_out", "nonlinearity": "relu"}),
    ((128, 16, 5), {"a": 0.1, "nonlinearity": "leaky_relu"}),
])
def test_kaiming_and_xavier_uniform_bounds(shape: tuple[int, ...], kwargs: dict) -> None:
    pg.manual_seed(0)
    fan_in, fan_out = torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
    fan = fan_out if kwargs.get("mode") == "fan_out" else fan_in
    gain = torch.nn.init.calculate_gain(kwargs.get("nonlinearity", "leaky_relu"),
                                        kwargs.get("a", 0))
    w = param(*shape)
    assert init.kaiming_uniform_(w, **kwargs) is w
    _uniform_bound_checks(w.numpy(), gain * math.sqrt(3.0 / fan))
    x = init.xavier_uniform_(param(*shape), gain=2.0)
    _uniform_bound_checks(x.numpy(), 2.0 * math.sqrt(6.0 / (fan_in + fan_out)))


def test_normal_initialisers_std() -> None:
    pg.manual_seed(1)
    shape = (256, 128, 3)
    fan_in, fan_out = 128 * 3, 256 * 3
    w = init.kaiming_normal_(param(*shape), mode="fan_out", nonlinearity="relu").numpy()
    assert abs(w.mean()) < 1e-3 and w.std() == pytest.approx(math.sqrt(2 / fan_out), rel=0.01)
    x = init.xavier_normal_(param(*shape), gain=0.5).numpy()
    assert x.std() == pytest.approx(0.5 * math.sqrt(2 / (fan_in + fan_out)), rel=0.01)
    n = init.normal_(param(300, 300), 3.0, 0.25).numpy()
    assert n.mean() == pytest.approx(3.0, abs=2e-3) and n.std() == pytest.approx(0.25, rel=0.01)
    u = init.uniform_(param(300, 300), -1.0, 5.0).numpy()
    assert u.min() >= -1.0 and u.max() <= 5.0 and u.mean() == pytest.approx(2.0, abs=0.02)


def test_trunc_normal_matches_torch_statistics() -> None:
    pg.manual_seed(2)
    torch.manual_seed(2)
    for mean, std, a, b in [(0.0, 1.0, -2.0, 2.0), (0.5, 2.0, -1.0, 3.0), (0.0, 0.02, -0.04, 0.04)]:
        got = init.trunc_normal_(param(400, 400), mean, std, a, b).numpy()
        want = torch.nn.init.trunc_normal_(torch.empty(400, 400), mean, std, a, b).numpy()
        assert a <= got.min() and got.max() <= b
        assert got.mean() == pytest.approx(want.mean(), abs=0.01 * std)
        assert got.std() == pytest.approx(want.std(), rel=0.01)


def test_erfinv_approximation_matches_torch() -> None:
    x = np.linspace(-0.999999, 0.999999, 2001, dtype=np.float32)
    got = init._erfinv(T(x)).numpy()
    want = torch.erfinv(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)


def test_deterministic_fills_match_torch(device: str) -> None:
    w = T(np.ones((3, 5), np.float32), device=device)
    np.testing.assert_array_equal(init.eye_(w).numpy(), torch.nn.init.eye_(torch.ones(3, 5)))
    assert w.device == device
    for shape, groups in [((4, 4, 3, 3), 1), ((6, 2, 3), 3), ((4, 3, 1, 2, 3), 2)]:
        got = init.dirac_(T.empty(shape, device=device), groups).numpy()
        np.testing.assert_array_equal(got, torch.nn.init.dirac_(torch.empty(shape), groups))
    np.testing.assert_array_equal(init.constant_(param(2, 3), 0.3).numpy(),
                                  np.full((2, 3), 0.3, np.float32))
    assert init.ones_(param(2)).numpy().tolist() == [1, 1]
    assert init.zeros_(T(np.ones(2, np.float32))).numpy().tolist() == [0, 0]


def test_initialised_parameters_still_train() -> None:
    w = init.kaiming_uniform_(param(4, 3))
    assert w.requires_grad and w._ctx is None
    (w * w).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * w.numpy(), rtol=1e-6)


def test_fill_errors_and_empty_tensors() -> None:
    with pytest.raises(pg.ShapeError, match=r"eye_: needs a 2-D tensor, got shape \(2, 2, 2\)"):
        init.eye_(T.empty(2, 2, 2))
    with pytest.raises(pg.ShapeError, match="dirac_: out channels 5 must be divisible"):
        init.dirac_(T.empty(5, 2, 3), groups=2)
    with pytest.raises(pg.ShapeError, match=r"trunc_normal_: needs a < b, got a=1\.0, b=0\.0"):
        init.trunc_normal_(T.empty(3), a=1.0, b=0.0)
    with pytest.warns(UserWarning, match="zero-element tensor"):
        init.kaiming_uniform_(T.empty(0, 3))
