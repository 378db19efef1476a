"""The recurrent ONNX ops LSTM, GRU and RNN (inference), as onnxruntime computes them.

Each is unrolled over the time steps on the whole batch: the input projection X @ W^T of
every step and direction is one matmul before the loop (most of the work), each step adds
its recurrent matmul H @ R^T and the gate arithmetic. ONNX orders the gates i, o, f, c
(LSTM) and z, r, h (GRU), and keeps the input (Wb) and recurrent (Rb) biases apart.

`sequence_lens` is a mask, not a gather: a step at or past a sequence's length keeps that
sequence's state and outputs zeros. Walking the reverse direction from the last padded
step, the masked steps leave the initial state as it is, so each sequence starts its
reverse walk at its own last valid step, which is onnxruntime's per-sequence reversal.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx

from picograd.frontend.ops_shape import cat, stack
from picograd.frontend.tensor import Tensor
from picograd.onnx.registry import NodeContext, Value, op

Activation = Callable[[Tensor], Tensor]

# (number of alphas, number of betas, default alpha, default beta) of each activation, by
# its lower-case name as onnxruntime matches them; None: no default (must be given)
_ACTIVATION_ARGS: dict[str, tuple[int, int, float | None, float | None]] = {
    "sigmoid": (0, 0, None, None), "tanh": (0, 0, None, None), "relu": (0, 0, None, None),
    "softsign": (0, 0, None, None), "softplus": (0, 0, None, None),
    "leakyrelu": (1, 0, 0.01, None), "thresholdedrelu": (1, 0, 1.0, None),
    "elu": (1, 0, 1.0, None), "hardsigmoid": (1, 1, 0.2, 0.5),
    "affine": (1, 1, None, None), "scaledtanh": (1, 1, None, None),
}
# the gates (how many blocks of hidden_size W has) and the default activations per op
_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
_DEFAULT_ACTIVATIONS = {"LSTM": ("Sigmoid", "Tanh", "Tanh"), "GRU": ("Sigmoid", "Tanh"),
                        "RNN": ("Tanh",)}
_DIRECTIONS = {"forward": 1, "reverse": 1, "bidirectional": 2}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _make_activation(name: str, alpha: float, beta: float) -> Activation:
    """The activation `name` (lower case) with its alpha and beta as a Tensor function."""
    table: dict[str, Activation] = {
        "sigmoid": lambda x: x.sigmoid(),
        "tanh": lambda x: x.tanh(),
        "relu": lambda x: x.relu(),
        "softsign": lambda x: x.softsign(),
        "softplus": lambda x: x.softplus(),
        "leakyrelu": lambda x: x.leaky_relu(alpha),
        "thresholdedrelu": lambda x: (x > alpha).where(x, x * 0),
        "elu": lambda x: x.elu(alpha),
        "hardsigmoid": lambda x: (x * alpha + beta).clamp(0.0, 1.0),
        "affine": lambda x: x * alpha + beta,
        "scaledtanh": lambda x: (x * beta).tanh() * alpha,
    }
    return table[name]


def _activation_specs(attrs: dict[str, Any], op_type: str
                      ) -> tuple[list[tuple[str, float, float]] | None, str | None]:
    """The (name, alpha, beta) of every activation of every direction, in the order of the
    `activations` attribute, or the reason the node is unsupported. The alpha and beta lists
    are consumed in order by the activations that take them, as onnxruntime does."""
    directions = _DIRECTIONS.get(_text(attrs.get("direction", "forward")))
    if directions is None:
        return None, f"direction={_text(attrs.get('direction'))!r}"
    per_direction = len(_DEFAULT_ACTIVATIONS[op_type])
    names = [_text(n) for n in attrs.get("activations", [])]
    if not names:
        names = list(_DEFAULT_ACTIVATIONS[op_type]) * directions
    if len(names) != per_direction * directions:
        return None, (f"{len(names)} activations given, {op_type} with {directions} "
                      f"direction(s) takes {per_direction * directions}")
    alphas = list(attrs.get("activation_alpha", []))
    betas = list(attrs.get("activation_beta", []))
    specs = []
    for name in names:
        key = name.lower()
        if key not in _ACTIVATION_ARGS:
            return None, f"the activation {name!r} is not supported"
        n_alpha, n_beta, alpha, beta = _ACTIVATION_ARGS[key]
        if n_alpha:
            alpha = float(alphas.pop(0)) if alphas else alpha
        if n_beta:
            beta = float(betas.pop(0)) if betas else beta
        if (n_alpha and alpha is None) or (n_beta and beta is None):
            return None, f"the activation {name!r} needs activation_alpha / activation_beta"
        specs.append((key, alpha or 0.0, beta or 0.0))
    return specs, None


def _check(node: onnx.NodeProto, attrs: dict[str, Any], opset: int) -> str | None:
    _, why = _activation_specs(attrs, node.op_type)
    if why is not None:
        return why
    if attrs.get("layout", 0) not in (0, 1):
        return f"layout={attrs['layout']}"
    if attrs.get("linear_before_reset", 0) not in (0, 1):
        return f"linear_before_reset={attrs['linear_before_reset']}"
    if attrs.get("input_forget", 0) not in (0, 1):
        return f"input_forget={attrs['input_forget']}"
    return None


@dataclass
class _Direction:
    """One direction's weights (recurrence-ready: R transposed) and activations."""

    xw: Tensor  # (T, B, G*H): X @ W^T + the biases added outside the recurrence
    r_t: Tensor  # (H, G*H)
    rb_h: Tensor | None  # GRU's Rbh when linear_before_reset keeps it inside r * (...)
    acts: list[Activation]
    reverse: bool


class _Recurrence:
    """What every translation shares: the node's inputs in the time-major layout, the
    directions, the clip and the sequence-length mask."""

    def __init__(self, ctx: NodeContext, x: Value, w: Value, r: Value, b: Value | None,
                 lens: Value | None):
        self.ctx = ctx
        op_type = ctx.node.op_type
        gates = _GATES[op_type]
        self.layout = int(ctx.attr("layout", 0))
        tx = ctx.t(x)
        if self.layout == 1:  # (B, T, I) -> (T, B, I)
            tx = tx.permute(1, 0, 2)
        tw, tr = ctx.t(w), ctx.t(r)
        self.steps, self.batch = tx.shape[0], tx.shape[1]
        self.hidden = tr.shape[-1]
        n_dir, gh = tw.shape[0], gates * self.hidden
        direction = _text(ctx.attr("direction", "forward"))
        if n_dir != _DIRECTIONS[direction] or tw.shape[1] != gh or tuple(tr.shape) != (
                n_dir, gh, self.hidden):
            raise ctx.unsupported(f"W {tuple(tw.shape)} and R {tuple(tr.shape)} do not fit "
                                  f"direction={direction!r} and {gates} gates")
        clip = ctx.attr("clip")
        self.clip = None if clip is None else float(clip)
        specs, _ = _activation_specs(ctx.attrs, op_type)
        assert specs is not None  # checked at load
        per_dir = len(specs) // n_dir
        keep_rbh = op_type == "GRU" and ctx.attr("linear_before_reset", 0)
        # the input projection of every step and direction: one matmul
        proj = tx.matmul(tw.reshape(n_dir * gh, tx.shape[2]).permute(1, 0))
        tb = None if b is None else ctx.t(b)
        self.dirs: list[_Direction] = []
        for d in range(n_dir):
            xw = proj[:, :, d * gh:(d + 1) * gh]
            rb_h = None
            if tb is not None:
                wb, rb = tb[d, :gh], tb[d, gh:]
                if keep_rbh:
                    rb_h = rb[2 * self.hidden:]
                    rb = cat([rb[:2 * self.hidden], rb_h * 0], 0)
                xw = xw + (wb + rb)
            reverse = direction == "reverse" or d == 1
            acts = [_make_activation(*s) for s in specs[d * per_dir:(d + 1) * per_dir]]
            self.dirs.append(_Direction(xw, tr[d].permute(1, 0), rb_h, acts, reverse))
        self.mask = self._mask(lens)

    def _mask(self, lens: Value | None) -> list[Tensor] | None:
        """Per step, a (B, 1) bool of the sequences still running (None: all of them)."""
        if lens is None:
            return None
        host = None if isinstance(lens, Tensor) else np.asarray(lens)
        if host is not None and bool(np.all(host == self.steps)):
            return None
        tl = self.ctx.t(lens).reshape(self.batch, 1)
        return [tl > t for t in range(self.steps)]

    def initial(self, v: Value | None, d: int) -> Tensor:
        """Direction d's initial state (B, H): the given one or zeros."""
        if v is not None:  # (D, B, H), or (B, D, H) in layout 1
            tv = self.ctx.t(v)
            return tv[:, d] if self.layout == 1 else tv[d]
        like = self.dirs[d].xw
        return Tensor.zeros(self.batch, self.hidden, dtype=like.dtype, device=like.device)

    def pre(self, x: Tensor) -> Tensor:
        """A gate's input before its activation, clipped by `clip`."""
        return x if self.clip is None else x.clamp(-self.clip, self.clip)

    def order(self, d: int) -> range:
        return range(self.steps - 1, -1, -1) if self.dirs[d].reverse else range(self.steps)

    def keep(self, t: int, new: Tensor, old: Tensor) -> Tensor:
        """The state after step t: `new`, or `old` for sequences already ended."""
        return new if self.mask is None else self.mask[t].where(new, old)

    def output(self, t: int, h: Tensor) -> Tensor:
        """Step t's output: `h`, zeros for sequences already ended."""
        return h if self.mask is None else self.mask[t].where(h, h * 0)

    def run_hidden(self, h0: Value | None,
                   step_of: Callable[[_Direction], Callable[[Tensor, Tensor], Tensor]]
                   ) -> tuple[Tensor, ...]:
        """Y and the final hidden state of a recurrence whose only state is h (RNN, GRU):
        `step_of(direction)(x_t @ W^T + Wb, h)` is the next h of that direction."""
        ys, finals = [], []
        for d, dr in enumerate(self.dirs):
            step = step_of(dr)
            h = self.initial(h0, d)
            out = [h] * self.steps
            for t in self.order(d):
                h = self.keep(t, step(dr.xw[t], h), h)
                out[t] = self.output(t, h)
            ys.append(out)
            finals.append((h,))
        return self.results(ys, finals)

    def results(self, ys: Sequence[list[Tensor]], finals: Sequence[Sequence[Tensor]]
                ) -> tuple[Tensor, ...]:
        """Y (T, D, B, H) and the final states (D, B, H), in the node's layout."""
        y = stack([stack(steps, 0) for steps in ys], 1)
        states = [stack(list(s), 0) for s in zip(*finals, strict=True)]
        if self.layout == 1:
            y = y.permute(2, 0, 1, 3)
            states = [s.permute(1, 0, 2) for s in states]
        return (y, *states)


def _split(x: Tensor, n: int, size: int) -> list[Tensor]:
    return [x[:, k * size:(k + 1) * size] for k in range(n)]


_RNN_ATTRS = ("activation_alpha", "activation_beta", "activations", "clip", "direction",
              "hidden_size", "layout")


@op("RNN", attrs=_RNN_ATTRS, min_opset=7, check=_check)
def _rnn(ctx: NodeContext, x: Value, w: Value, r: Value, b: Value | None = None,
         lens: Value | None = None, h0: Value | None = None) -> tuple[Tensor, ...]:
    rec = _Recurrence(ctx, x, w, r, b, lens)

    def step_of(dr: _Direction) -> Callable[[Tensor, Tensor], Tensor]:
        return lambda xw, h: dr.acts[0](rec.pre(xw + h @ dr.r_t))

    return rec.run_hidden(h0, step_of)


@op("GRU", attrs=(*_RNN_ATTRS, "linear_before_reset"), min_opset=7, check=_check)
def _gru(ctx: NodeContext, x: Value, w: Value, r: Value, b: Value | None = None,
         lens: Value | None = None, h0: Value | None = None) -> tuple[Tensor, ...]:
    rec = _Recurrence(ctx, x, w, r, b, lens)
    size = rec.hidden
    before_reset = bool(ctx.attr("linear_before_reset", 0))

    def step_of(dr: _Direction) -> Callable[[Tensor, Tensor], Tensor]:
        f, g = dr.acts
        r_zr, r_h = dr.r_t[:, :2 * size], dr.r_t[:, 2 * size:]

        def step(xw: Tensor, h: Tensor) -> Tensor:
            xz, xr, xh = _split(xw, 3, size)
            if before_reset:  # one matmul for all three gates; r scales H @ Rh^T + Rbh
                hz, hr, hh = _split(h @ dr.r_t, 3, size)
                if dr.rb_h is not None:
                    hh = hh + dr.rb_h
                z, reset = f(rec.pre(xz + hz)), f(rec.pre(xr + hr))
                recurrent = reset * hh
            else:  # r scales H before its matmul with Rh
                hz, hr = _split(h @ r_zr, 2, size)
                z, reset = f(rec.pre(xz + hz)), f(rec.pre(xr + hr))
                recurrent = (reset * h) @ r_h
            cand = g(rec.pre(xh + recurrent))
            return (1.0 - z) * cand + z * h

        return step

    return rec.run_hidden(h0, step_of)


@op("LSTM", attrs=(*_RNN_ATTRS, "input_forget"), min_opset=7, check=_check)
def _lstm(ctx: NodeContext, x: Value, w: Value, r: Value, b: Value | None = None,
          lens: Value | None = None, h0: Value | None = None, c0: Value | None = None,
          p: Value | None = None) -> tuple[Tensor, ...]:
    rec = _Recurrence(ctx, x, w, r, b, lens)
    size = rec.hidden
    couple = bool(ctx.attr("input_forget", 0))
    tp = None if p is None else ctx.t(p)
    ys, finals = [], []
    for d, dr in enumerate(rec.dirs):
        f, g, act_h = dr.acts
        h, c = rec.initial(h0, d), rec.initial(c0, d)
        pi = po = pf = None
        if tp is not None:
            pi, po, pf = (tp[d, k * size:(k + 1) * size] for k in range(3))
        out = [h] * rec.steps
        for t in rec.order(d):
            gi, go, gf, gc = _split(dr.xw[t] + h @ dr.r_t, 4, size)
            if pi is not None and pf is not None:
                gi, gf = gi + pi * c, gf + pf * c
            i = f(rec.pre(gi))
            # input_forget couples the gates: the forget gate is 1 - i
            forget = (1.0 - i) if couple else f(rec.pre(gf))
            c_new = forget * c + i * g(rec.pre(gc))
            if po is not None:
                go = go + po * c_new
            h_new = f(rec.pre(go)) * act_h(c_new)
            h, c = rec.keep(t, h_new, h), rec.keep(t, c_new, c)
            out[t] = rec.output(t, h)
        ys.append(out)
        finals.append((h, c))
    return rec.results(ys, finals)
