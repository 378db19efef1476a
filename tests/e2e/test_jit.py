"""`@picograd.jit` and `Tensor.assign`: a jitted training loop gives what the eager one gives
and really updates its parameters on replay; replays substitute new arguments, skip the
function's Python and honour an lr changed between calls; the footguns (argument shape /
dtype / device changed, aliased arguments, nothing captured, nested jit) are JitErrors that
name the argument."""

from __future__ import annotations

import threading
import tracemalloc

import numpy as np
import pytest

import picograd as pg
import picograd.nn as nn
import picograd.nn.functional as F
from picograd.errors import JitError, PicogradError, ShapeError
from picograd.jit_replay import Jit

rng = np.random.default_rng(5)
X = [rng.standard_normal((16, 6)).astype(np.float32) for _ in range(5)]
Y = [rng.integers(0, 4, 16).astype(np.int32) for _ in range(5)]


def _mlp(device: str) -> nn.Module:
    pg.manual_seed(2)
    return nn.Sequential(nn.Linear(6, 12, device=device), nn.ReLU(),
                         nn.Linear(12, 4, device=device))


def _weights(model: nn.Module) -> dict[str, np.ndarray]:
    return {k: v.numpy() for k, v in model.state_dict().items()}


def test_jit_error_is_a_picograd_error() -> None:
    assert issubclass(JitError, PicogradError) and pg.JitError is JitError


def test_a_jitted_training_loop_matches_the_eager_one(device: str) -> None:
    eager, jitted = _mlp(device), _mlp(device)
    eager_opt, jit_opt = pg.optim.Adam(eager.parameters(), 1e-2), pg.optim.Adam(
        jitted.parameters(), 1e-2)

    def step(model: nn.Module, opt: pg.optim.Optimizer, x: pg.Tensor, y: pg.Tensor
             ) -> pg.Tensor:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    jit_step = pg.jit(lambda x, y: step(jitted, jit_opt, x, y))
    before = _weights(jitted)
    seen = []
    for i in range(5):
        x, y = pg.Tensor(X[i], device=device), pg.Tensor(Y[i], device=device)
        ours = jit_step(x, y)
        ref = step(eager, eager_opt, pg.Tensor(X[i], device=device),
                   pg.Tensor(Y[i], device=device))
        np.testing.assert_allclose(ours.item(), ref.item(), rtol=1e-6, atol=1e-6)
        seen.append(_weights(jitted))
    for k, v in _weights(eager).items():
        np.testing.assert_allclose(_weights(jitted)[k], v, rtol=1e-6, atol=1e-6, err_msg=k)
    # the parameters really change on every replay (calls 3, 4, 5)
    for k in before:
        for a, b in zip([before, *seen[:-1]], seen, strict=True):
            assert not np.array_equal(a[k], b[k]), k
    assert jit_opt.steps == eager_opt.steps == 5


def test_replay_substitutes_arguments_and_returns_new_tensors() -> None:
    calls = []

    @pg.jit
    def f(a: pg.Tensor, b: pg.Tensor) -> tuple[pg.Tensor, dict[str, pg.Tensor]]:
        calls.append(1)  # a python side effect: runs on calls 1 and 2 only
        s = (a + b).realize()
        return s * 2, {"diff": a - b, "sum": s}

    outs = []
    for i in range(5):
        a, b = np.full(3, i, np.float32), np.arange(3, dtype=np.float32)
        doubled, parts = f(pg.Tensor(a), pg.Tensor(b))
        np.testing.assert_array_equal(doubled.numpy(), 2 * (a + b))
        np.testing.assert_array_equal(parts["diff"].numpy(), a - b)
        np.testing.assert_array_equal(parts["sum"].numpy(), a + b)
        outs.append(doubled)
    assert len(calls) == 2
    assert outs[3]._node is not outs[4]._node and outs[3].numpy()[0] == 6.0


def test_a_replay_lets_go_of_each_intermediate_after_its_last_use() -> None:
    """Eight realizes, each reading only the one before: a replay holds two of their results
    at a time, as the eager call does, not all eight until it returns."""
    n = 1 << 20  # 4 MB per result

    @pg.jit
    def chain(x: pg.Tensor) -> pg.Tensor:
        for _ in range(8):
            x = (x * 2 + 1).realize()
        return x

    x = pg.Tensor(np.zeros(n, np.float32))
    for _ in range(2):  # warm-up and capture
        chain(x)
    tracemalloc.start()
    try:
        out = chain(x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(out.numpy()[:3], [255.0] * 3)
    assert peak < 3.5 * 4 * n, f"the replay peaked at {peak / 4 / n:.1f} results"


def test_pending_arguments_are_realized_first() -> None:
    f = pg.jit(lambda a: a * 3)
    for i in range(4):
        out = f(pg.Tensor([1.0, 2.0]) + i)
        np.testing.assert_array_equal(out.numpy(), [(1 + i) * 3, (2 + i) * 3])


def test_replay_reads_the_current_value_of_parameters_and_lr() -> None:
    w = pg.Tensor([1.0, 2.0], requires_grad=True)
    opt = pg.optim.SGD([w], lr=1.0)

    @pg.jit
    def step(x: pg.Tensor) -> pg.Tensor:
        opt.zero_grad()
        loss = (w * x).sum()
        loss.backward()
        opt.step()
        return loss

    x = pg.Tensor([1.0, 1.0])
    for lr in (1.0, 1.0, 0.5, 0.25):
        opt.lr = lr
        before = w.numpy()
        step(x)
        np.testing.assert_allclose(w.numpy(), before - lr, rtol=1e-6)
    assert opt.steps == 4


def test_assign_writes_in_place_and_is_replayed() -> None:
    acc = pg.Tensor([0.0, 0.0])
    node = acc._node

    @pg.jit
    def add(x: pg.Tensor) -> None:
        acc.assign(acc + x)

    for i in range(1, 5):
        add(pg.Tensor([float(i), 1.0]))
    np.testing.assert_array_equal(acc.numpy(), [10.0, 4.0])
    assert acc._node is node
    with pytest.raises(ShapeError, match=r"assign: needs a tensor of shape \(2,\)"):
        acc.assign(pg.Tensor([1.0]))
    with pytest.raises(pg.DTypeError, match="needs a float32 tensor, got int32"):
        acc.assign(pg.Tensor([1, 2]))


def test_a_changed_non_tensor_argument_captures_again() -> None:
    calls = []

    @pg.jit
    def scale(x: pg.Tensor, k: float) -> pg.Tensor:
        calls.append(k)
        return x * k

    x = pg.Tensor([1.0, 2.0])
    for k in (2.0, 2.0, 2.0, 3.0, 3.0, 3.0, 2.0):
        np.testing.assert_array_equal(scale(x, k).numpy(), [k, 2 * k])
    assert calls == [2.0, 2.0, 3.0, 3.0]  # warm-up and capture per value, then replays
    with pytest.raises(JitError, match=r"argument 1 \('k'\) is a non-tensor argument of type "
                                       "list, which is not hashable"):
        scale(x, [1.0])


def _warm(f: Jit, *args: pg.Tensor) -> None:
    f(*args)
    f(*args)


@pytest.mark.parametrize(("new", "message"), [
    (lambda: pg.Tensor(np.ones((3, 2), np.float32)),
     r"argument 1 \('b'\) has shape \(3, 2\); the capture was made with shape \(2, 2\)"),
    (lambda: pg.Tensor(np.ones((2, 2), np.int32)),
     r"argument 1 \('b'\) has dtype int32; the capture was made with dtype float32"),
    (lambda: pg.Tensor(np.ones((2, 2), np.float32), device="CPU:C"),
     r"argument 1 \('b'\) has device CPU:C; the capture was made with device CPU:LLVM"),
])
def test_a_changed_argument_is_a_jit_error_naming_it(new, message) -> None:
    f = pg.jit(lambda a, b: a + b)
    a = pg.Tensor(np.ones((2, 2), np.float32))
    _warm(f, a, pg.Tensor(np.ones((2, 2), np.float32)))
    with pytest.raises(JitError, match=message):
        f(a, new())


def test_aliased_arguments_are_refused() -> None:
    f = pg.jit(lambda a, b: a + b)
    a = pg.Tensor([1.0, 2.0])
    with pytest.raises(JitError, match=r"argument 1 \('b'\) aliases argument 0 \('a'\)"):
        f(a, a)
    _warm(f, a, pg.Tensor([3.0, 4.0]))
    with pytest.raises(JitError, match="aliases"):
        f(a, a.detach())  # another tensor on the same node
    b = pg.Tensor([0.0, 0.0])
    b.assign(a)  # shares a's buffer now
    with pytest.raises(JitError, match=r"argument 1 \('b'\) aliases argument 0"):
        f(a, b)


def test_a_capture_that_launched_nothing_is_refused() -> None:
    f = pg.jit(lambda a: a.shape)
    a = pg.Tensor([1.0])
    f(a)
    with pytest.raises(JitError, match="nothing was captured: the function realized no "
                                       "tensors"):
        f(a)


def test_nested_jit_is_refused() -> None:
    inner = pg.jit(lambda a: a + 1)
    outer = pg.jit(lambda a: inner(a) * 2)
    with pytest.raises(JitError, match="nested jit is not supported"):
        outer(pg.Tensor([1.0]))


def _bn_run(use_jit: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    pg.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.25),
                          nn.Linear(16, 3))
    opt = pg.optim.SGD(model.parameters(), lr=0.1)

    def step(x: pg.Tensor, y: pg.Tensor) -> pg.Tensor:
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    run = pg.jit(step) if use_jit else step
    rng = np.random.default_rng(0)
    losses = []
    for _ in range(5):
        x = pg.Tensor(rng.standard_normal((32, 8)).astype(np.float32))
        losses.append(run(x, pg.Tensor(rng.integers(0, 3, 32))).numpy())
    bn = model[1]
    return bn.running_mean.numpy(), bn.num_batches_tracked.numpy(), np.array(losses)


def test_replay_updates_batchnorm_statistics_and_draws_new_dropout_masks() -> None:
    """BatchNorm's running statistics are written in place by the optimiser step, and the
    random keys are rewritten before each replay: a jitted loop equals the eager one."""
    eager, jitted = _bn_run(False), _bn_run(True)
    assert jitted[1] == eager[1] == 5
    np.testing.assert_allclose(jitted[0], eager[0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(jitted[2], eager[2], rtol=1e-6, atol=1e-6)
    assert len(set(np.round(jitted[2], 6))) == 5  # the replays saw new data and new masks


def _linear_jit() -> tuple[nn.Linear, pg.Tensor, Jit]:
    pg.manual_seed(0)
    model = nn.Linear(3, 2)
    x = pg.Tensor(np.arange(3, dtype=np.float32).reshape(1, 3))
    step = pg.jit(lambda t: model(t))
    for _ in range(3):  # run, capture, replay
        step(x)
    return model, x, step


def _replaced_by_load(model: nn.Linear) -> None:
    model.load_state_dict({"weight": np.full((2, 3), 0.5, np.float32),
                           "bias": np.ones(2, np.float32)})


def _replaced_by_fill(model: nn.Linear) -> None:
    with pg.no_grad():
        model.weight.fill_(2.0)


def _replaced_by_setitem(model: nn.Linear) -> None:
    with pg.no_grad():
        model.weight[0] = 5.0


def _replaced_by_another_tensor(model: nn.Linear) -> None:
    model.weight = pg.Tensor(np.full((2, 3), -1.0, np.float32))


def _replaced_by_another_shape(model: nn.Linear) -> None:
    model.weight = pg.Tensor(np.full((4, 3), 0.25, np.float32))
    model.bias = pg.Tensor(np.zeros(4, np.float32))


@pytest.mark.parametrize("replace", [_replaced_by_load, _replaced_by_fill,
                                     _replaced_by_setitem, _replaced_by_another_tensor,
                                     _replaced_by_another_shape])
def test_a_replay_after_a_tensor_was_replaced_captures_again(replace) -> None:
    """A replay reads the nodes it captured; `load_state_dict`, `fill_`, `x[i] = v` and a new
    tensor in the module's attribute replace them, so the jit captures again instead of
    using the old values (or shapes)."""
    model, x, step = _linear_jit()
    replace(model)
    with pg.no_grad():
        want = model(x).numpy()
    np.testing.assert_allclose(step(x).numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(step(x).numpy(), want, rtol=1e-6)  # the new capture replays


def test_a_replay_after_train_or_eval_captures_again() -> None:
    pg.manual_seed(1)
    model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5))
    x = pg.Tensor(np.ones((4, 8), np.float32))
    step = pg.jit(lambda t: model(t))
    for _ in range(3):
        step(x)
    model.eval()
    with pg.no_grad():
        want = model(x).numpy()
    np.testing.assert_allclose(step(x).numpy(), want, rtol=1e-6)  # no dropout now


def test_grad_mode_is_part_of_the_capture() -> None:
    """A step captured with gradients (an optimiser step) is not replayed under no_grad."""
    model, x, _ = _linear_jit()
    opt = pg.optim.SGD(model.parameters(), lr=0.1)

    def train(t: pg.Tensor) -> pg.Tensor:
        opt.zero_grad()
        loss = model(t).sum()
        loss.backward()
        opt.step()
        return loss

    jitted = pg.jit(train)
    for _ in range(3):
        jitted(x)
    before = model.weight.numpy()
    with pg.no_grad(), pytest.raises(PicogradError):  # eager: backward has no graph
        jitted(x)
    np.testing.assert_array_equal(model.weight.numpy(), before)


def test_an_assignment_inside_a_jitted_step_is_replayed() -> None:
    """`cache[:, p] = v` inside a jit writes the realized cache in place (recorded like
    `assign`), so replays keep writing it at the new positions."""
    cache = pg.Tensor.zeros(1, 6).realize()
    pos = pg.Variable("pos", 0, 5)

    def step(v: pg.Tensor, p: pg.SymbolicInt) -> pg.Tensor:
        cache[:, p] = v
        return cache.sum()

    jitted = pg.jit(step)
    for t in range(6):
        total = jitted(pg.Tensor([float(t + 1)]), pos.bind(t))
        assert total.item() == sum(range(1, t + 2)), t
    np.testing.assert_array_equal(cache.numpy(), [[1, 2, 3, 4, 5, 6]])


def test_one_jit_called_from_two_threads_takes_turns() -> None:
    """Two threads replaying one jit: no 'nested jit' error (the running jit is per
    thread), each gets its own result."""
    step = pg.jit(lambda t: (t * 2 + 1).sum())
    for _ in range(3):
        step(pg.Tensor(np.ones(8, np.float32)))
    results: dict[int, float] = {}
    errors: list[BaseException] = []

    def run(k: int) -> None:
        try:
            for _ in range(20):
                results[k] = step(pg.Tensor(np.full(8, k, np.float32))).item()
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert results == {1: 24.0, 2: 40.0}
