"""The `Optimizer` base: parameter groups, per-step scalars as buffers, one graph per step,
and torch's `state_dict` layout.

`step()` builds every parameter's update lazily (under `no_grad`) and realizes, in one
graph, the new parameters, the optimiser's state, the gradients and the tensors `backward()`
was called on since the last step — so a training step is one compiled program (forward,
backward and update fused where the scheduler allows), compiled once and reused for every
later step. Parameters and state are then updated in place (`Tensor.assign`): their nodes
keep their identity, which is what lets `picograd.jit` replay a step. (A pending tensor
built on a parameter before a step and realized after it sees the new value; the gradients
are realized by the step for that reason.)

Values that change from step to step (each group's learning rate, bias corrections) enter
the graph as 0-d buffers the optimiser owns and rewrites before each step (never as
constants), so the graph's structure — the compile cache key — stays the same when a
scheduler changes `lr`; under `picograd.jit` the same rewrite runs before each replayed step
(`picograd.frontend.capture`), so `steps` counts and a changed `lr` is honoured.

    opt = pg.optim.Adam([{"params": body.parameters()},
                         {"params": head.parameters(), "lr": 1e-2}], lr=1e-3)
    loss.backward(); opt.step(); opt.zero_grad()
    saved = opt.state_dict()        # torch's layout: {"state": {0: {...}}, "param_groups": [...]}
    opt.load_state_dict(saved)      # takes torch.optim's state dicts too (tensors or arrays)

The step count is the optimiser's (`steps`), shared by its parameters: a parameter that had
no gradient at some step is still counted in its bias corrections (torch counts per
parameter).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, TypeGuard

import numpy as np

from picograd.errors import CheckpointError, OptimizerError, user_location
from picograd.frontend import autograd
from picograd.frontend.autograd import no_grad
from picograd.frontend.capture import on_host_state
from picograd.frontend.realize import realize
from picograd.frontend.tensor import Tensor

# ── what a hyper-parameter may be: each rule gives None or what was expected ──


def _is_number(value: object) -> TypeGuard[float]:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def non_negative(value: object) -> str | None:
    return None if _is_number(value) and value >= 0 else "a finite number >= 0"


def finite(value: object) -> str | None:
    return None if _is_number(value) else "a finite number"


def unit_interval(value: object) -> str | None:
    return None if _is_number(value) and 0 <= value <= 1 else "a number in [0, 1]"


def flag(value: object) -> str | None:
    return None if isinstance(value, bool) else "true or false"


def flag_or_none(value: object) -> str | None:
    return None if value is None or isinstance(value, bool) else "true, false or null"


def betas(value: object) -> str | None:
    ok = (isinstance(value, (list, tuple)) and len(value) == 2  # JSON makes the tuple a list
          and all(_is_number(b) and 0 <= b < 1 for b in value))
    return None if ok else "a pair of numbers in [0, 1)"


HParamRule = Callable[[object], "str | None"]

# flags a checkpoint written before they existed lacks: loading it keeps the current value
OPTIONAL_HPARAMS = frozenset({"maximize", "amsgrad", "foreach", "fused", "capturable",
                              "differentiable"})

# what the lr schedulers keep in a group, as torch's do (OneCycleLR's max_lr, ...)
SCHEDULER_KEYS = ("initial_lr", "max_lr", "min_lr", "base_momentum", "max_momentum")

# torch's implementation switches, taken everywhere and changing nothing here: one fused
# graph per step is what `foreach` / `fused` ask for; `capturable` and `differentiable` are
# about CUDA graphs and autograd through the step, neither of which applies
IMPLEMENTATION_FLAGS: dict[str, HParamRule] = {
    "foreach": flag_or_none, "fused": flag_or_none, "capturable": flag,
    "differentiable": flag}


def implementation_defaults(foreach: bool | None, fused: bool | None, capturable: bool,
                            differentiable: bool) -> dict[str, Any]:
    return {"foreach": foreach, "fused": fused, "capturable": capturable,
            "differentiable": differentiable}


def _as_array(value: Any) -> np.ndarray:
    """A state value from a state dict (a picograd Tensor, a numpy array, a torch tensor or a
    number) as a numpy array, without importing torch."""
    if isinstance(value, Tensor):
        return value.numpy()
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor
        return np.asarray(value.detach().cpu().numpy())
    return np.asarray(value)


class Optimizer:
    """Holds the parameter groups (`param_groups`, each a dict of `params` and its
    hyper-parameters, as torch's) and each parameter's state."""

    # every hyper-parameter of a group and what it may be (checked at construction, when a
    # group is added and when loaded)
    hparam_rules: ClassVar[dict[str, HParamRule]] = {"lr": non_negative}
    # the names of a parameter's state: it holds all of them or (never updated) none
    state_names: tuple[str, ...] = ()
    # the names `_host_state` gives (kept out of the tensor state when loaded)
    _HOST_STATE_NAMES: ClassVar[frozenset[str]] = frozenset()
    # whether a parameter's state in `state_dict` has torch's `step` (SGD's has none)
    counts_steps: ClassVar[bool] = True

    def __init__(self, params: Iterable[Tensor] | Iterable[dict[str, Any]],
                 defaults: dict[str, Any]):
        """OptimizerError, as torch's ValueError, for no parameters or a hyper-parameter
        that `hparam_rules` refuses (the same rules a loaded checkpoint meets)."""
        self.defaults = defaults
        self.param_groups: list[dict[str, Any]] = []
        self.state: dict[int, dict[str, Tensor]] = {}
        self.steps = 0
        self._scalars: dict[tuple[int, str, str], Tensor] = {}  # (group, name, device)
        items = list(params)
        if not items:
            raise OptimizerError(f"{type(self).__name__}: got an empty parameter list\n"
                                 f"  at {user_location()}")
        groups = items if isinstance(items[0], dict) else [{"params": items}]
        for group in groups:
            if not isinstance(group, dict):
                raise OptimizerError(f"{type(self).__name__}: give either parameters or "
                                     f"dicts of them, not both\n  at {user_location()}")
            self.add_param_group(group)

    @property
    def params(self) -> list[Tensor]:
        """Every parameter, group by group (the numbering of `state_dict`)."""
        return [p for group in self.param_groups for p in group["params"]]

    @property
    def lr(self) -> float:
        return self.param_groups[0]["lr"]

    @lr.setter
    def lr(self, value: float) -> None:
        for group in self.param_groups:
            group["lr"] = value

    def add_param_group(self, group: dict[str, Any]) -> None:
        """Add a group: its `params` and the hyper-parameters it sets (the rest are the
        optimiser's defaults). OptimizerError for a bad value or a parameter already in a
        group."""
        name = type(self).__name__
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        hparams = {**self.defaults, **{k: v for k, v in group.items() if k != "params"}}
        problems = self.hparam_problems(hparams)
        if problems:
            raise OptimizerError(f"{name}: {'; '.join(problems)}\n  at {user_location()}")
        known = {id(p) for p in self.params}
        if any(id(p) in known for p in params):
            raise OptimizerError(f"{name}: some parameters appear in more than one parameter "
                                 f"group\n  at {user_location()}")
        if not params:
            raise OptimizerError(f"{name}: got an empty parameter list\n  at {user_location()}")
        self.param_groups.append({"params": params, **hparams})

    def hparam_problems(self, hparams: object) -> list[str]:
        """What keeps `hparams` (a group's hyper-parameters, or those read back from a
        checkpoint) from being a group's: missing or unknown names, values of the wrong type
        or range. Empty when they fit."""
        if not isinstance(hparams, dict):
            return [f"expected a JSON object of hyper-parameters, got {hparams!r}"]
        problems = [f"missing {name!r}" for name in self.hparam_rules
                    if name not in hparams and name not in OPTIONAL_HPARAMS]
        problems += [f"unknown hyper-parameter {name!r} ({type(self).__name__} takes "
                     f"{', '.join(self.hparam_rules)})"
                     for name in hparams
                     if name not in self.hparam_rules and name not in SCHEDULER_KEYS]
        for name, value in hparams.items():
            rule = self.hparam_rules.get(name, finite if name in SCHEDULER_KEYS else None)
            expected = rule(value) if rule is not None else None
            if expected is not None:
                problems.append(f"{name} is {value!r}, expected {expected}")
        return problems or self._hparam_conflicts(hparams)

    def _hparam_conflicts(self, hparams: dict[str, Any]) -> list[str]:
        """Problems of valid values together (SGD's Nesterov without momentum)."""
        return []

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None

    # ── per-step scalars ──

    def _scalar_values(self, group: dict[str, Any]) -> dict[str, float]:
        """The per-step scalars of `group`'s update, for the current `steps`."""
        return {"lr": group["lr"]}

    def _scalar(self, name: str, like: Tensor, group: dict[str, Any]) -> Tensor:
        """The 0-d float32 buffer holding `group`'s scalar `name` on `like`'s device (a buffer
        leaf: its value is not part of the graph key)."""
        key = (self._group_index(group), name, like.device)
        if key not in self._scalars:
            value = np.float32(self._scalar_values(group)[name])
            self._scalars[key] = Tensor(value, device=like.device)
        return self._scalars[key]

    def _group_index(self, group: dict[str, Any]) -> int:
        return next(i for i, g in enumerate(self.param_groups) if g is group)

    def _before_step(self) -> None:
        """Host-side bookkeeping of a step, after `steps` is counted (NAdam's product)."""

    def _advance(self) -> None:
        """Count a step and write this step's scalars into their buffers."""
        self.steps += 1
        self._before_step()
        values = [self._scalar_values(g) for g in self.param_groups]
        for (index, name, _), t in self._scalars.items():
            buffer = t._node.buffer
            assert buffer is not None
            buffer[...] = values[index][name]

    # ── the step ──

    def _state(self, state: dict[str, Tensor], name: str, like: Tensor,
               fill: float = 0.0) -> Tensor:
        """State `name` of a parameter: a buffer of `fill` the first time."""
        if name not in state:
            state[name] = Tensor(np.full(like.shape, fill, like.dtype.np), device=like.device)
        return state[name]

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Tensor], group: dict[str, Any]
                ) -> tuple[Tensor, dict[str, Tensor]]:
        """The new parameter and the new values of its state (by name)."""
        raise NotImplementedError

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient, realizing everything in one graph;
        `closure` (re-evaluating the loss, as torch's) runs first and its value is returned."""
        loss = closure() if closure is not None else None
        self._advance()
        on_host_state(self._advance)
        with no_grad():
            writes: list[tuple[Tensor, Tensor]] = []
            grads: list[Tensor] = []
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    g = -p.grad if group.get("maximize") else p.grad
                    state = self.state.setdefault(id(p), {})
                    new_p, new_state = self._update(p, g, state, group)
                    grads.append(p.grad)
                    writes.append((p, new_p))
                    writes.extend((self._state(state, k, p), v) for k, v in new_state.items())
            roots, autograd.pending_roots[:] = list(autograd.pending_roots), []
            buffer_writes, autograd.pending_writes[:] = list(autograd.pending_writes), []
            realize(*roots, *grads, *(new for _, new in writes))
            for target, new in writes:
                target.assign(new)
            for leaf, buffer in buffer_writes:  # e.g. BatchNorm's running statistics
                value = Tensor._from_node(buffer._node)
                buffer._node = leaf
                buffer.assign(value)
        for p in self.params:
            if p.grad is not None:
                p.grad = p.grad.detach()  # the gradient graph no longer records anything
        return loss

    # ── torch's state-dict layout ──

    def _host_state(self, group: dict[str, Any]) -> dict[str, float]:
        """Per-parameter scalars torch keeps as state that picograd keeps on the host, per
        group."""
        return {}

    def _load_host_state(self, group: dict[str, Any], state: dict[str, float]) -> None:
        """Take back `_host_state`'s values from the loaded state of one of `group`'s
        parameters."""

    def state_dict(self) -> dict[str, Any]:
        """torch's layout: `state` maps a parameter's index (over the groups, in order) to its
        state (`step` as a 0-d float tensor, and the named buffers); `param_groups` lists
        each group's hyper-parameters with `params` as those indices."""
        state: dict[int, dict[str, Any]] = {}
        groups: list[dict[str, Any]] = []
        index = 0
        for group in self.param_groups:
            indices = []
            for p in group["params"]:
                own = self.state.get(id(p))
                if own:
                    entry: dict[str, Any] = (
                        {"step": Tensor(np.float32(self.steps))} if self.counts_steps else {})
                    entry |= {k: Tensor(np.float32(v))
                              for k, v in self._host_state(group).items()}
                    entry |= dict(own)
                    state[index] = entry
                indices.append(index)
                index += 1
            groups.append({**{k: v for k, v in group.items() if k != "params"},
                           "params": indices})
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state dict in torch's layout (from `state_dict`, or torch.optim's own; state
        values may be picograd or torch tensors or numpy arrays). CheckpointError (a
        ValueError, as torch's) when its groups or state do not fit the parameters; nothing is
        changed then."""
        groups, state = state_dict.get("param_groups"), state_dict.get("state")
        if not isinstance(groups, list) or not isinstance(state, dict):
            raise self._load_error("expected a dict of 'state' and 'param_groups'")
        new_groups, index_to_param = self._loaded_groups(groups)
        new_state, steps, hosts = self._loaded_state(state, index_to_param)
        for own, new in zip(self.param_groups, new_groups, strict=True):
            own.update(new)
        self.state, self.steps = new_state, steps
        for group in self.param_groups:
            host = next((hosts[id(p)] for p in group["params"] if id(p) in hosts), None)
            names = self._host_state(group)
            if host is not None and all(k in host for k in names):
                self._load_host_state(group, {k: float(_as_array(host[k])) for k in names})

    def _load_error(self, message: str) -> CheckpointError:
        return CheckpointError(f"{type(self).__name__}.load_state_dict: {message}\n"
                               f"  at {user_location()}")

    def _loaded_groups(self, groups: list[dict[str, Any]]
                       ) -> tuple[list[dict[str, Any]], dict[Any, Tensor]]:
        """The groups' new hyper-parameters, and which parameter each saved index names."""
        if len(groups) != len(self.param_groups):
            raise self._load_error(f"the state dict has {len(groups)} parameter groups, the "
                                   f"optimizer {len(self.param_groups)}")
        index_to_param: dict[Any, Tensor] = {}
        new_groups = []
        for saved, own in zip(groups, self.param_groups, strict=True):
            if len(saved["params"]) != len(own["params"]):
                raise self._load_error(f"a saved parameter group of {len(saved['params'])} "
                                       f"parameters does not match the optimizer's group of "
                                       f"{len(own['params'])}")
            index_to_param |= dict(zip(saved["params"], own["params"], strict=True))
            hparams = {k: v for k, v in saved.items()
                       if k in self.hparam_rules or k in SCHEDULER_KEYS}
            hparams = {**{k: own[k] for k in self.hparam_rules}, **hparams}
            problems = self.hparam_problems(hparams)
            if problems:
                raise self._load_error("; ".join(problems))
            new_groups.append({"params": own["params"], **{
                k: tuple(v) if isinstance(own.get(k), tuple) else v
                for k, v in hparams.items()}})
        return new_groups, index_to_param

    def _loaded_state(self, state: dict[Any, dict[str, Any]], index_to_param: dict[Any, Tensor]
                      ) -> tuple[dict[int, dict[str, Tensor]], int, dict[int, dict[str, Any]]]:
        """The parameters' new state, the step count and each parameter's saved entry (its
        host-side state is read from it once `steps` is set)."""
        new_state: dict[int, dict[str, Tensor]] = {}
        steps, hosts = 0, {}
        for key, entry in state.items():
            p = index_to_param.get(key)
            if p is None:
                raise self._load_error(f"state of parameter {key!r}, which no group names")
            own_state: dict[str, Tensor] = {}
            for k, v in entry.items():
                array = _as_array(v)
                if k == "step":
                    steps = max(steps, int(array))
                elif k in self._HOST_STATE_NAMES:
                    hosts[id(p)] = entry
                elif array.shape != p.shape:
                    raise self._load_error(f"state {k!r} of parameter {key!r} has shape "
                                           f"{array.shape}, the parameter {p.shape}")
                else:
                    own_state[k] = Tensor(array.astype(p.dtype.np), device=p.device)
            new_state[id(p)] = own_state
        return new_state, steps, hosts
