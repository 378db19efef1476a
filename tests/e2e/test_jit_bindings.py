"""`@picograd.jit` never replays a tensor a name no longer leads to: a module global, a
closure variable, a class attribute, another module's attribute (through an alias), an
attribute of a default argument, `__defaults__`, a helper function's global, an object's
attribute, a list or dict item rebound to another tensor (of the same shape, another shape,
or back to the first) makes the next call capture again, and the capture after it replays.
A function that rebinds a tensor it reads captures on every call; one that only writes a
tensor to a name keeps replaying."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import picograd as pg
import picograd.nn as nn

from . import jit_state
from . import jit_state as state_alias


def _matrix(rows: int, cols: int, scale: float) -> pg.Tensor:
    return pg.Tensor((np.arange(rows * cols, dtype=np.float32).reshape(rows, cols) + 1)
                     * scale)


X = pg.Tensor(np.array([[1.0, -2.0]], np.float32))


class _Case:
    """A jitted `x @ W` where W is reached through one kind of binding: `get` reads W as
    the function would, `set` rebinds it; `calls` counts the function's Python runs."""

    def __init__(self, make: Callable[[list[int]], tuple[Callable, Callable[[], pg.Tensor],
                                                         Callable[[pg.Tensor], None]]]):
        self.calls: list[int] = []
        fn, self.get, self.set = make(self.calls)
        self.jitted = pg.jit(fn)


_GLOBAL_W = _matrix(2, 2, 1.0)


def _module_global(calls: list[int]):
    def f(x: pg.Tensor) -> pg.Tensor:
        calls.append(1)
        return x @ _GLOBAL_W

    def rebind(t: pg.Tensor) -> None:
        global _GLOBAL_W
        _GLOBAL_W = t

    return f, lambda: _GLOBAL_W, rebind


def _closure(calls: list[int]):
    w = _matrix(2, 2, 1.0)

    def f(x: pg.Tensor) -> pg.Tensor:
        calls.append(1)
        return x @ w

    def rebind(t: pg.Tensor) -> None:
        nonlocal w
        w = t

    return f, lambda: w, rebind


class _Config:
    W = _matrix(2, 2, 1.0)


def _class_attribute(calls: list[int]):
    def f(x: pg.Tensor) -> pg.Tensor:
        calls.append(1)
        return x @ _Config.W

    return f, lambda: _Config.W, lambda t: setattr(_Config, "W", t)


def _other_module(calls: list[int]):
    def f(x: pg.Tensor) -> pg.Tensor:
        calls.append(1)
        return x @ state_alias.W

    return f, lambda: jit_state.W, lambda t: setattr(jit_state, "W", t)


class _State:
    def __init__(self) -> None:
        self.W = _matrix(2, 2, 1.0)

    def apply(self, x: pg.Tensor) -> pg.Tensor:
        return x @ self.W


_DEFAULT_STATE = _State()


def _default_argument(calls: list[int]):
    def f(x: pg.Tensor, state: _State = _DEFAULT_STATE) -> pg.Tensor:
        calls.append(1)
        return x @ state.W

    return f, lambda: _DEFAULT_STATE.W, lambda t: setattr(_DEFAULT_STATE, "W", t)


_DEFAULT_W = _matrix(2, 2, 1.0)


def _replaced_defaults(calls: list[int]):
    def f(x: pg.Tensor, w: pg.Tensor = _DEFAULT_W) -> pg.Tensor:
        calls.append(1)
        return x @ w

    return f, lambda: (f.__defaults__ or ())[0], lambda t: setattr(f, "__defaults__", (t,))


_HELPER_W = _matrix(2, 2, 1.0)


def _helper(x: pg.Tensor) -> pg.Tensor:
    return x @ _HELPER_W


def _helper_global(calls: list[int]):
    def f(x: pg.Tensor) -> pg.Tensor:
        calls.append(1)
        return _helper(x)

    def rebind(t: pg.Tensor) -> None:
        global _HELPER_W
        _HELPER_W = t

    return f, lambda: _HELPER_W, rebind


def _bound_method(calls: list[int]):
    state = _State()

    def f(x: pg.Tensor) -> pg.Tensor:
        calls.append(1)
        return state.apply(x)  # reads state.W in a method

    return f, lambda: state.W, lambda t: setattr(state, "W", t)


def _list_item(calls: list[int]):
    weights = [_matrix(2, 2, 1.0)]

    def f(x: pg.Tensor) -> pg.Tensor:
        calls.append(1)
        return x @ weights[0]

    return f, lambda: weights[0], lambda t: weights.__setitem__(0, t)


def _dict_item(calls: list[int]):
    params = {"w": _matrix(2, 2, 1.0)}

    def f(x: pg.Tensor) -> pg.Tensor:
        calls.append(1)
        return x @ params["w"]

    return f, lambda: params["w"], lambda t: params.__setitem__("w", t)


_A_LIST = [_matrix(2, 2, 1.0)]
_Z_LIST = _A_LIST  # two globals, one list: the walk follows it once, from `_A_LIST`


def _second_name_of_a_list(calls: list[int]):
    def f(x: pg.Tensor) -> pg.Tensor:
        calls.append(1)
        return x @ _Z_LIST[0] + 0 * len(_A_LIST)

    def rebind(t: pg.Tensor) -> None:
        global _Z_LIST
        _Z_LIST = [t]

    return f, lambda: _Z_LIST[0], rebind


CASES = [_module_global, _closure, _class_attribute, _other_module, _default_argument,
         _replaced_defaults, _helper_global, _bound_method, _list_item, _dict_item,
         _second_name_of_a_list]


def _check(case: _Case) -> None:
    """Two calls give `x @ W` for the current W; the first may capture, the second replays."""
    for _ in range(2):
        np.testing.assert_allclose(case.jitted(X).numpy(), X.numpy() @ case.get().numpy(),
                                   rtol=1e-6)


@pytest.mark.parametrize("make", CASES, ids=lambda m: m.__name__.strip("_"))
def test_a_rebound_tensor_is_captured_again(make) -> None:
    case = _Case(make)
    first = case.get()
    _check(case)
    _check(case)  # run, capture, replay, replay
    assert len(case.calls) == 2
    for new in (_matrix(2, 2, -3.0),  # same shape, other values
                _matrix(2, 5, 0.5),   # another shape: a new capture, no JitError
                first):               # back to the original
        case.set(new)
        before = len(case.calls)
        _check(case)
        _check(case)
        assert len(case.calls) == before + 1, "one capture per rebinding, then replays"


def test_a_replaced_submodule_of_a_jitted_module_is_captured_again() -> None:
    """`pg.jit(model)` reads `forward`'s `self.fc`: a new layer there (not a new tensor in
    a parameter, which Module.__setattr__ already notes) captures again."""

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(2, 3)

        def forward(self, x: pg.Tensor) -> pg.Tensor:
            return self.fc(x)

    pg.manual_seed(0)
    net = Net()
    step = pg.jit(net)
    for _ in range(3):
        step(X)
    net.fc = nn.Linear(2, 4)
    with pg.no_grad():
        want = net(X).numpy()
    for _ in range(2):
        np.testing.assert_allclose(step(X).numpy(), want, rtol=1e-6)


class _Base:
    W = _matrix(2, 2, 1.0)


class _Derived(_Base):
    pass


def test_a_class_attribute_shadowed_in_a_subclass_is_captured_again() -> None:
    f = pg.jit(lambda x: x @ _Derived.W)
    for _ in range(3):
        f(X)
    _Derived.W = _matrix(2, 2, 2.0)  # now found before _Base.W
    try:
        np.testing.assert_allclose(f(X).numpy(), X.numpy() @ _Derived.W.numpy(), rtol=1e-6)
    finally:
        del _Derived.W


_REBOUND = _matrix(2, 2, 1.0)
_LAST: Any = None


def _doubles_its_weight(x: pg.Tensor) -> pg.Tensor:
    global _REBOUND
    out = x @ _REBOUND
    _REBOUND = (_REBOUND * 2).realize()
    return out


def test_a_function_that_rebinds_a_tensor_it_reads_is_right_on_every_call() -> None:
    """A replay could not rebind `_REBOUND`: the jit captures again on every call instead."""
    global _REBOUND
    jitted = pg.jit(_doubles_its_weight)
    start = _REBOUND
    ours = [jitted(X).numpy() for _ in range(5)]
    _REBOUND = start
    eager = [_doubles_its_weight(X).numpy() for _ in range(5)]
    for a, b in zip(ours, eager, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_a_tensor_only_written_to_a_global_does_not_stop_replays() -> None:
    calls = []

    def f(x: pg.Tensor) -> pg.Tensor:
        global _LAST
        calls.append(1)
        _LAST = x @ _matrix(2, 2, 1.0)
        return _LAST + 1

    jitted = pg.jit(f)
    for i in range(5):
        x = pg.Tensor(np.full((1, 2), float(i), np.float32))
        np.testing.assert_allclose(jitted(x).numpy(), x.numpy() @ _matrix(2, 2, 1.0).numpy()
                                   + 1, rtol=1e-6)
    assert len(calls) == 2  # a Python side effect: `_LAST` is set on calls 1 and 2 only


def test_a_list_the_function_appends_to_and_reads_is_right_on_every_call() -> None:
    """A cache kept in a Python list (a KV cache's pattern): each call reads every item and
    appends one, which a replay could not do."""
    def f(items: list[pg.Tensor], x: pg.Tensor) -> pg.Tensor:
        total = x * 0
        for t in items:
            total = total + t
        items.append((x * 2).realize())
        return total

    cache: list[pg.Tensor] = []
    jitted = pg.jit(lambda x: f(cache, x))
    eager_cache: list[pg.Tensor] = []
    for i in range(5):
        x = pg.Tensor(np.full(3, float(i + 1), np.float32))
        np.testing.assert_allclose(jitted(x).numpy(), f(eager_cache, x).numpy(), rtol=1e-6)


def test_the_check_is_a_few_lookups_of_what_the_code_names() -> None:
    """Only the bindings on the way to a tensor the capture read are checked per replay:
    library modules and functions the code names (np, pg, a picograd function) are not."""
    unused = _matrix(2, 2, 1.0)

    def f(x: pg.Tensor) -> pg.Tensor:
        y = pg.Tensor(np.ones((1, 2), np.float32)) + unused.shape[0]
        return pg.nn.functional.relu(x @ _GLOBAL_W) + y

    jitted = pg.jit(f)
    for _ in range(3):
        jitted(X)
    bindings = next(iter(jitted._plans.values())).bindings
    assert len(bindings) == 1  # _GLOBAL_W; not `unused` (only its shape is read), np, pg


def test_a_variable_bound_outside_and_read_by_name_is_not_replayed_stale() -> None:
    """`p = start.bind(t)` read through a closure variable: each new binding captures again
    (before, the calls after the capture kept the capture's position)."""
    start = pg.Variable("jit_bindings_p", 0, 9)
    p = start.bind(0)
    f = pg.jit(lambda x: x + p)
    x = pg.Tensor(np.zeros(2, np.float32))
    for t in range(5):
        p = start.bind(t)
        np.testing.assert_array_equal(f(x).numpy(), [t, t])


def test_a_training_step_keeps_replaying() -> None:
    """The model, the optimiser and its state are reached through bindings that do not
    change between steps (the optimiser writes its tensors with assign): one capture."""
    pg.manual_seed(3)
    model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = pg.optim.Adam(model.parameters(), lr=1e-2)
    calls = []

    def step(x: pg.Tensor, y: pg.Tensor) -> pg.Tensor:
        calls.append(1)
        opt.zero_grad()
        loss = pg.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    jitted = pg.jit(step)
    losses = [jitted(X, pg.Tensor(np.array([1], np.int32))).item() for _ in range(6)]
    assert len(calls) == 2 and len(set(losses)) == 6  # replays, which train
