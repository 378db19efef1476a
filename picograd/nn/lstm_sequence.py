"""One LSTM layer in one direction over a whole sequence, as one op with its own backward.

    out, h_n, c_n = lstm_sequence(x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse)
    # x (T, B, I), h0 / c0 (B, H) -> out (T, B, H), h_n / c_n (B, H)

Why its own backward: through the decomposition, autograd differentiates every step's
sigmoid and tanh node by node (a tanh is a dozen primitives) and gives the input projection
`xg` the gradient of T slices, a sum of T zero-padded (T, B, 4H) tensors (a kernel of
O(T^2) masked loads: 106 ms of a 1.2 s step at T=100). The rule below is the one torch's
LSTM backward uses: per step, from the saved gate activations,

    dh = dout[t] + dgates[t+1] @ W_hh          do = dh * tanh(c_t) * o (1 - o)
    dc = dc[t+1] * f[t+1] + dh * o (1 - tanh(c_t)^2)
    di = dc * g * i (1 - i)    df = dc * c_{t-1} * f (1 - f)    dg = dc * i (1 - g^2)

and then one matmul per weight over the stacked gate gradients of every step:
dW_ih = dG^T x, dW_hh = dG^T h_prev, dx = dG W_ih, db = sum(dG), so the recurrence in the
backward is one (B, 4H) @ (4H, H) matmul and one fused elementwise kernel per step.
"""

from __future__ import annotations

from picograd.frontend.gc_pause import gc_paused
from picograd.frontend.grad_mode import no_grad
from picograd.frontend.ops_shape import cat, stack
from picograd.frontend.tensor import Tensor


class _Gates:
    """Per-gate constants of the (B, 4, H) gate layout (i, f, g, o along dim 1), made once
    per sequence: `is_g` (1.0 in the cell gate's row, else 0.0), `scale` = 1 + is_g, and
    the masks of the i, f and o rows."""

    __slots__ = ("is_f", "is_g", "is_i", "is_o", "scale")

    def __init__(self, like: Tensor):
        row = Tensor.arange(4, device=like.device).reshape(1, 4, 1)
        self.is_i, self.is_f, self.is_o = row == 0, row == 1, row == 3
        self.is_g = (row == 2).cast(like.dtype)
        self.scale = self.is_g + 1.0

    def activations(self, gates: Tensor) -> Tensor:
        """sigmoid of the i, f, o rows and tanh of the g row of `gates` (B, 4, H), as one
        expression: tanh(z) = 2 sigmoid(2z) - 1 (within 2 ulps of 1 absolute), and
        sigmoid(z) = 1 / (1 + exp(-z)) (exp(-z) = inf gives 0, NaN stays NaN)."""
        s = 1.0 / ((gates * -self.scale).exp() + 1.0)
        return s * self.scale - self.is_g

    def derivatives(self, a: Tensor) -> Tensor:
        """d activation / d gate from the activations: a (1 - a) for the sigmoids, 1 - a^2
        for the tanh row, as a ((1 - is_g) - a) + is_g."""
        return a * ((1.0 - self.is_g) - a) + self.is_g


class _Step:
    """What the backward needs of one forward step: the gate activations (B, 4, H) and
    their rows, the cell state before the step and tanh of the one after it."""

    __slots__ = ("act", "c_prev", "f", "g", "i", "o", "tanh_c")

    def __init__(self, act: Tensor, c_prev: Tensor, tanh_c: Tensor):
        self.act, self.c_prev, self.tanh_c = act, c_prev, tanh_c
        self.i, self.f, self.g, self.o = act.unbind(1)


def _forward(xg: Tensor, h: Tensor, c: Tensor, w_hh_t: Tensor, steps: range, rows: _Gates
             ) -> tuple[list[Tensor], list[_Step], Tensor]:
    """The hidden state of every step (in time order), what each step saved, the last c."""
    batch, hidden = h.shape
    outputs: list[Tensor] = [h] * len(steps)
    saved: list[_Step] = [None] * len(steps)  # type: ignore[list-item]  # (all filled)
    xs = xg.unbind(0)
    for t in steps:
        gates = (xs[t] + h @ w_hh_t).reshape(batch, 4, hidden)
        s = _Step(rows.activations(gates), c, c)
        c_next = s.f * c + s.i * s.g
        s.tanh_c = c_next.tanh()
        h = s.o * s.tanh_c
        saved[t] = s
        outputs[t] = h
        c = c_next
    return outputs, saved, c


def _gate_gradients(dout: Tensor, dc_last: Tensor, saved: list[_Step], w_hh: Tensor,
                    steps: range, rows: _Gates) -> tuple[Tensor, Tensor, Tensor]:
    """The gradients of the pre-activation gates of every step (T, B, 4H), of h0 and of
    c0, walking the steps backwards. A step's four gate gradients are one (B, 4, H)
    expression: what multiplies each row's derivative is picked by selects on the row
    (a select, not a product with a 0/1 mask: a NaN of c_{t-1} stays in df, as torch's)."""
    batch, hidden = dc_last.shape
    # zeros, not dout * 0: an inf in the upstream gradient would make the last step NaN
    dh_next = Tensor.zeros(*dc_last.shape, dtype=dc_last.dtype, device=dc_last.device)
    dc = dc_last
    dgates: list[Tensor] = [dh_next] * len(steps)
    douts = dout.unbind(0)
    for t in reversed(steps):
        s = saved[t]
        dh = douts[t] + dh_next
        dc = dc + dh * s.o * (1.0 - s.tanh_c * s.tanh_c)
        # rows i, f, g take dc times g, c_{t-1}, i; row o takes dh * tanh(c_t)
        other = rows.is_i.where(s.g.unsqueeze(1), s.i.unsqueeze(1))
        other = rows.is_f.where(s.c_prev.unsqueeze(1), other)
        upstream = rows.is_o.where((dh * s.tanh_c).unsqueeze(1), dc.unsqueeze(1) * other)
        dgates[t] = (upstream * rows.derivatives(s.act)).reshape(batch, 4 * hidden)
        dh_next = dgates[t] @ w_hh
        dc = dc * s.f
    return stack(dgates, 0), dh_next, dc


def lstm_sequence(x: Tensor, h0: Tensor, c0: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None, b_hh: Tensor | None, reverse: bool
                  ) -> tuple[Tensor, Tensor, Tensor]:
    """The LSTM over `x` (T, B, I) from (h0, c0) (B, H), gates in torch's order i, f, g, o:
    the outputs (T, B, H) in time order and the last (h, c). A reverse direction runs from
    the last step to the first (its h_n is the state after step 0)."""
    length, batch, features = x.shape
    hidden = w_hh.shape[1]
    steps = range(length - 1, -1, -1) if reverse else range(length)
    x2 = x.reshape(length * batch, features)
    with no_grad(), gc_paused():
        xg = x2 @ w_ih.transpose(0, 1)
        for b in (b_ih, b_hh):
            if b is not None:
                xg = xg + b
        rows = _Gates(xg)
        outputs, saved, c_n = _forward(xg.reshape(length, batch, 4 * hidden), h0, c0,
                                       w_hh.transpose(0, 1), steps, rows)
        # one tensor holds every result, so one rule gives every gradient: the outputs and
        # then c_n as row T (h_n is an output row: `out[steps[-1]]`)
        joined = stack([*outputs, c_n], 0)
    sources = (x, h0, c0, w_ih, w_hh, b_ih, b_hh)

    def gradients(g: Tensor) -> tuple[Tensor | None, ...]:
        dout, dc_last = g[:length], g[length]
        dgates, dh0, dc0 = _gate_gradients(dout, dc_last, saved, w_hh, steps, rows)
        dg2 = dgates.reshape(length * batch, 4 * hidden)
        # the state each step started from, in time order
        if reverse:
            h_prev = cat([joined[1:length], h0.unsqueeze(0)], 0)
        else:
            h_prev = cat([h0.unsqueeze(0), joined[:length - 1]], 0)
        dx = (dg2 @ w_ih).reshape(length, batch, features) if x.requires_grad else None
        # dW = dG^T a: on CPUs matmul-layout reads the strided dG^T through a row-major
        # copy and `a` in column panels (the reduce is T*B long), 6-7 ms at T*B = 3200,
        # 4H = 1024, I = 256, copies included, against 18 for (a^T dG)^T (2-core Emerald
        # Rapids, kernels only)
        dt = dg2.transpose(0, 1)
        dw_ih = dt @ x2
        dw_hh = dt @ h_prev.reshape(length * batch, hidden)
        db = dg2.sum(0)
        return (dx, dh0, dc0, dw_ih, dw_hh, None if b_ih is None else db,
                None if b_hh is None else db)

    result = joined._with_gradient(sources, gradients)
    out = result[:length]
    return out, out[steps[-1]], result[length]
