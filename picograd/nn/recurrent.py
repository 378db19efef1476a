"""Recurrent layers, as torch's: RNN, LSTM, GRU and their cells, with torch's parameter
names and state-dict layout (`weight_ih_l0`, `weight_hh_l0`, `bias_ih_l0`, `bias_hh_l0`,
`_reverse` for the backward direction, `weight_hr_l0` for an LSTM's `proj_size`), so a
torch state dict loads unchanged.

    lstm = nn.LSTM(16, 32, num_layers=2, batch_first=True)
    out, (h_n, c_n) = lstm(x)               # x (B, T, 16) -> out (B, T, 32)
    cell = nn.GRUCell(16, 32); h = cell(x_t, h)

The whole sequence is one lazy graph (nothing is realized step by step), so the compiler
sees the loop whole and one realize computes it. The input projection of every step is one
matmul over the whole sequence (x of shape (T*B, I) @ W_ih^T, with both biases folded in);
each step then adds one (B, H) @ W_hh^T matmul for all of its gates at once (the gates are
slices of one (B, G*H) product), which keeps each step's part of the graph small.
"""

from __future__ import annotations

import math
from typing import Any

from picograd.frontend.gc_pause import gc_paused
from picograd.frontend.grad_mode import is_grad_enabled
from picograd.frontend.lazy import shape_error
from picograd.frontend.ops_shape import cat, stack
from picograd.frontend.step_template import StepTemplate
from picograd.frontend.tensor import Tensor
from picograd.nn.basic import dropout
from picograd.nn.layers import uniform
from picograd.nn.lstm_sequence import lstm_sequence
from picograd.nn.module import Module

# gates per mode: LSTM (input, forget, cell, output), GRU (reset, update, new), RNN one
_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _step(mode: str, xg: Tensor, h: Tensor, c: Tensor | None, w_hh_t: Tensor,
          b_hh: Tensor | None, w_hr_t: Tensor | None) -> tuple[Tensor, Tensor | None]:
    """One time step: `xg` is this step's input projection (B, G*H), with b_hh already
    added except for a GRU (whose b_hh of the new gate sits inside r * (...)); the weights
    come transposed (once per sequence, not once per step)."""
    hg = h @ w_hh_t
    if mode == "GRU":
        if b_hh is not None:
            hg = hg + b_hh
        xr, xz, xn = xg.chunk(3, -1)
        hr, hz, hn = hg.chunk(3, -1)
        r = (xr + hr).sigmoid()
        z = (xz + hz).sigmoid()
        n = (xn + r * hn).tanh()
        return n + z * (h - n), None
    gates = xg + hg
    if mode == "LSTM":
        assert c is not None
        i, f, g, o = gates.chunk(4, -1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        if w_hr_t is not None:
            h = h @ w_hr_t
        return h, c
    return (gates.tanh() if mode == "RNN_TANH" else gates.relu()), None


def _project(mode: str, x: Tensor, w_ih: Tensor, b_ih: Tensor | None, b_hh: Tensor | None
             ) -> Tensor:
    """The input projection of every step at once: x (T, B, I) -> (T, B, G*H)."""
    t, b, i = x.shape
    xg = x.reshape(t * b, i) @ w_ih.transpose(0, 1)
    if b_ih is not None:
        xg = xg + b_ih
    if b_hh is not None and mode != "GRU":
        xg = xg + b_hh
    return xg.reshape(t, b, w_ih.shape[0])


def _run_direction(mode: str, x: Tensor, h: Tensor, c: Tensor | None,
                   weights: list[Tensor | None], reverse: bool
                   ) -> tuple[Tensor, Tensor, Tensor | None]:
    """The outputs of one layer in one direction (T, B, H) in time order, and its last h
    and c. An LSTM without a projection is one op with its own backward
    (`lstm_sequence`); the other layers are differentiated through their steps."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    assert w_ih is not None and w_hh is not None
    if mode == "LSTM" and w_hr is None:
        assert c is not None
        return lstm_sequence(x, h, c, w_ih, w_hh, b_ih, b_hh, reverse)
    xg = _project(mode, x, w_ih, b_ih, b_hh)
    steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    outputs: list[Tensor] = [h] * x.shape[0]
    w_hh_t = w_hh.transpose(0, 1)
    w_hr_t = None if w_hr is None else w_hr.transpose(0, 1)

    def step(x_t: Tensor, h: Tensor, *c: Tensor) -> tuple[Tensor, ...]:
        h, c_next = _step(mode, x_t, h, c[0] if c else None, w_hh_t, b_hh, w_hr_t)
        return (h,) if c_next is None else (h, c_next)

    state = () if c is None else (c,)
    run: Any = step
    if not (is_grad_enabled() and any(t is not None and t.requires_grad
                                      for t in (x, h, c, *weights))):
        run = StepTemplate(step, xg[0], h, *state)  # inference: replay one recorded step
    with gc_paused(promote=True):  # (a graph of thousands of nodes: module docstring of gc_pause)
        for t in steps:
            h, *state = run(xg[t], h, *state)
            outputs[t] = h
        return stack(outputs, 0), h, (state[0] if state else None)


class RNNBase(Module):
    """The shared machinery of RNN, LSTM and GRU (torch's `nn.RNNBase`)."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: str = "CPU"):
        super().__init__()
        if not 0 <= dropout <= 1:
            raise shape_error(mode, f"dropout must be in [0, 1], got {dropout}")
        if hidden_size <= 0 or num_layers <= 0:
            raise shape_error(mode, f"hidden_size and num_layers must be positive, got "
                                    f"{hidden_size} and {num_layers}")
        if proj_size < 0 or (proj_size and (mode != "LSTM" or proj_size >= hidden_size)):
            raise shape_error(mode, f"proj_size must be 0 or in [1, hidden_size) for an LSTM,"
                                    f" got {proj_size}")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = dropout, bidirectional, proj_size
        gate_size = _GATES[mode] * hidden_size
        out_size = proj_size or hidden_size
        bound = 1 / math.sqrt(hidden_size)
        directions = 2 if bidirectional else 1
        self._weight_names: list[list[str]] = []
        for layer in range(num_layers):
            layer_in = input_size if layer == 0 else out_size * directions
            for direction in range(directions):
                sfx = f"_l{layer}" + ("_reverse" if direction else "")
                shapes = {f"weight_ih{sfx}": (gate_size, layer_in),
                          f"weight_hh{sfx}": (gate_size, out_size)}
                if bias:
                    shapes |= {f"bias_ih{sfx}": (gate_size,), f"bias_hh{sfx}": (gate_size,)}
                if proj_size:
                    shapes[f"weight_hr{sfx}"] = (proj_size, hidden_size)
                for name, shape in shapes.items():
                    setattr(self, name, uniform(shape, bound, device))
                self._weight_names.append(
                    [f"{kind}{sfx}" for kind in ("weight_ih", "weight_hh", "bias_ih",
                                                 "bias_hh", "weight_hr")])

    def _weights(self, layer: int, direction: int) -> list[Tensor | None]:
        names = self._weight_names[layer * (2 if self.bidirectional else 1) + direction]
        return [getattr(self, n, None) for n in names]

    def _initial(self, name: str, state: Tensor | None, batch: int, size: int,
                 like: Tensor, batched: bool) -> Tensor:
        rows = self.num_layers * (2 if self.bidirectional else 1)
        if state is None:
            return Tensor.zeros(rows, batch, size, dtype=like.dtype, device=like.device)
        want = (rows, batch, size) if batched else (rows, size)
        if state.shape != want:
            raise shape_error(self.mode, f"expected {name} of shape {want}, got {state.shape}")
        return state if batched else state.unsqueeze(1)

    def _forward(self, x: Tensor, hx: Tensor | None, cx: Tensor | None
                 ) -> tuple[Tensor, Tensor, Tensor | None]:
        if x.ndim not in (2, 3):
            raise shape_error(self.mode, f"expected a 2-D (unbatched) or 3-D input, got "
                                         f"shape {x.shape}")
        if x.shape[-1] != self.input_size:
            raise shape_error(self.mode, f"input has {x.shape[-1]} features, the layer "
                                         f"expects input_size={self.input_size}")
        batched = x.ndim == 3
        if not batched:
            x = x.unsqueeze(1)
        elif self.batch_first:
            x = x.transpose(0, 1)
        if x.shape[0] == 0:  # torch's RuntimeError (a ShapeError is one)
            raise shape_error(self.mode, f"expected a sequence length larger than 0, got "
                                         f"input of shape {tuple(x.shape)}")
        batch = x.shape[1]
        out_size = self.proj_size or self.hidden_size
        h0 = self._initial("h0", hx, batch, out_size, x, batched)
        c0 = (self._initial("c0", cx, batch, self.hidden_size, x, batched)
              if self.mode == "LSTM" else None)
        directions = 2 if self.bidirectional else 1
        last_h: list[Tensor] = []
        last_c: list[Tensor] = []
        for layer in range(self.num_layers):
            if layer and self.dropout and self.training:
                x = dropout(x, self.dropout, True)
            per_direction = []
            for direction in range(directions):
                row = layer * directions + direction
                out, h, c = _run_direction(
                    self.mode, x, h0[row], None if c0 is None else c0[row],
                    self._weights(layer, direction), reverse=direction == 1)
                per_direction.append(out)
                last_h.append(h)
                if c is not None:
                    last_c.append(c)
            x = per_direction[0] if directions == 1 else cat(per_direction, -1)
        h_n = stack(last_h, 0)
        c_n = stack(last_c, 0) if last_c else None
        if not batched:
            x, h_n = x.squeeze(1), h_n.squeeze(1)
            c_n = None if c_n is None else c_n.squeeze(1)
        elif self.batch_first:
            x = x.transpose(0, 1)
        return x, h_n, c_n

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        for name, default in (("num_layers", 1), ("bias", True), ("batch_first", False),
                              ("dropout", 0.0), ("bidirectional", False), ("proj_size", 0)):
            if getattr(self, name) != default:
                text += f", {name}={getattr(self, name)}"
        return text


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu).
    `rnn(x, h0=None)` -> (output, h_n)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", **kwargs: Any):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: unknown nonlinearity {nonlinearity!r}")
        self.nonlinearity = nonlinearity
        super().__init__(f"RNN_{nonlinearity.upper()}", input_size, hidden_size, num_layers,
                         **kwargs)

    def forward(self, x: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        out, h_n, _ = self._forward(x, hx, None)
        return out, h_n


class LSTM(RNNBase):
    """`lstm(x, (h0, c0)=None)` -> (output, (h_n, c_n)); gates in torch's order i, f, g, o."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, **kwargs: Any):
        super().__init__("LSTM", input_size, hidden_size, num_layers, **kwargs)

    def forward(self, x: Tensor, hx: tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        h0, c0 = (None, None) if hx is None else hx
        out, h_n, c_n = self._forward(x, h0, c0)
        assert c_n is not None
        return out, (h_n, c_n)


class GRU(RNNBase):
    """`gru(x, h0=None)` -> (output, h_n); gates in torch's order r, z, n."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, **kwargs: Any):
        super().__init__("GRU", input_size, hidden_size, num_layers, **kwargs)

    def forward(self, x: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        out, h_n, _ = self._forward(x, hx, None)
        return out, h_n


class RNNCellBase(Module):
    """One step of a recurrent layer; parameters weight_ih, weight_hh, bias_ih, bias_hh."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, bias: bool = True,
                 device: str = "CPU"):
        super().__init__()
        self.mode, self.input_size, self.hidden_size, self.bias = (mode, input_size,
                                                                   hidden_size, bias)
        gate_size = _GATES[mode] * hidden_size
        bound = 1 / math.sqrt(hidden_size)
        self.weight_ih = uniform((gate_size, input_size), bound, device)
        self.weight_hh = uniform((gate_size, hidden_size), bound, device)
        self.bias_ih = uniform((gate_size,), bound, device) if bias else None
        self.bias_hh = uniform((gate_size,), bound, device) if bias else None

    def _cell(self, x: Tensor, h: Tensor | None, c: Tensor | None
              ) -> tuple[Tensor, Tensor | None]:
        if x.ndim not in (1, 2) or x.shape[-1] != self.input_size:
            raise shape_error(type(self).__name__, f"expected input of shape (B, "
                                                   f"{self.input_size}) or "
                                                   f"({self.input_size},), got {x.shape}")
        batched = x.ndim == 2
        if not batched:
            x = x.unsqueeze(0)
        zeros = Tensor.zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device)
        states = []
        for state in (h, c):
            states.append(zeros if state is None else (state if batched
                                                        else state.unsqueeze(0)))
        h0, c0 = states
        for state in states:
            if state.shape != (x.shape[0], self.hidden_size):
                raise shape_error(type(self).__name__, f"hidden state of shape {state.shape}"
                                                       f" does not match input "
                                                       f"{tuple(x.shape)}")
        xg = _project(self.mode, x.unsqueeze(0), self.weight_ih, self.bias_ih,
                      self.bias_hh)[0]
        h1, c1 = _step(self.mode, xg, h0, c0 if self.mode == "LSTM" else None,
                       self.weight_hh.transpose(0, 1), self.bias_hh, None)
        if not batched:
            h1 = h1.squeeze(0)
            c1 = None if c1 is None else c1.squeeze(0)
        return h1, c1

    def extra_repr(self) -> str:
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class RNNCell(RNNCellBase):
    """`cell(x, h=None)` -> h'."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: str = "CPU"):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: unknown nonlinearity {nonlinearity!r}")
        self.nonlinearity = nonlinearity
        super().__init__(f"RNN_{nonlinearity.upper()}", input_size, hidden_size, bias, device)

    def forward(self, x: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._cell(x, hx, None)[0]


class LSTMCell(RNNCellBase):
    """`cell(x, (h, c)=None)` -> (h', c')."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: str = "CPU"):
        super().__init__("LSTM", input_size, hidden_size, bias, device)

    def forward(self, x: Tensor, hx: tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor, Tensor]:
        h, c = (None, None) if hx is None else hx
        h1, c1 = self._cell(x, h, c)
        assert c1 is not None
        return h1, c1


class GRUCell(RNNCellBase):
    """`cell(x, h=None)` -> h'."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: str = "CPU"):
        super().__init__("GRU", input_size, hidden_size, bias, device)

    def forward(self, x: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._cell(x, hx, None)[0]
