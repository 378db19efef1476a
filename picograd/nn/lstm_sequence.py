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
from picograd.frontend.ops_shape import cat
from picograd.frontend.step_template import StepTemplate
from picograd.frontend.tensor import Tensor


class _Gates:
    """The constants of a step, made once per sequence, in the (1, B, 4, H) gate layout
    (i, f, g, o along dim 2; a step is a slice of the sequence, so its tensors keep the
    time dim, and a state is (1, B, 1, H): the layout a step's slices and selects need
    without a reshape or unsqueeze per use): `is_g` (1.0 in the cell gate's row, else 0.0),
    `scale` = 1 + is_g, the masks of the f and o rows, and the recurrent weight laid out
    for the steps' products (`times`). Broadcast here once, they are shared by every step
    (`StepTemplate` records a step on them)."""

    __slots__ = ("is_f", "is_g", "is_o", "neg_scale", "not_g", "scale", "w_hh", "w_hh_t")

    def __init__(self, like: Tensor, batch: int, w_hh: Tensor):
        hidden = w_hh.shape[1]
        full = (1, batch, 4, hidden)
        row = Tensor.arange(4, device=like.device).reshape(1, 1, 4, 1)
        self.is_f, self.is_o = (row == 1).expand(*full), (row == 3).expand(*full)
        is_g = (row == 2).cast(like.dtype)
        self.is_g, self.not_g = is_g.expand(*full), (1.0 - is_g).expand(*full)
        self.scale, self.neg_scale = (is_g + 1.0).expand(*full), (-1.0 - is_g).expand(*full)
        # W (4H, H) and W^T (H, 4H) as (1, B, M, K): a state (1, B, 1, K) times it, summed
        # over K, is the step's product state @ W^T
        self.w_hh = w_hh.reshape(1, 1, 4 * hidden, hidden).expand(1, batch, 4 * hidden, hidden)
        self.w_hh_t = w_hh.transpose(0, 1).reshape(1, 1, hidden, 4 * hidden).expand(
            1, batch, hidden, 4 * hidden)

    @staticmethod
    def times(v: Tensor, w: Tensor) -> Tensor:
        """v (1, B, 1, K) @ W^T for `w` (1, B, M, K) laid out as above -> (1, B, M, 1)."""
        return (v.expand(*w.shape) * w).sum(axis=-1, keepdim=True)

    def activations(self, gates: Tensor) -> Tensor:
        """sigmoid of the i, f, o rows and tanh of the g row of `gates` (1, B, 4, H), as one
        expression: tanh(z) = 2 sigmoid(2z) - 1 (within 2 ulps of 1 absolute), and
        sigmoid(z) = 1 / (1 + exp(-z)) (exp(-z) = inf gives 0, NaN stays NaN)."""
        s = 1.0 / ((gates * self.neg_scale).exp() + 1.0)
        return s * self.scale - self.is_g

    def derivatives(self, a: Tensor) -> Tensor:
        """d activation / d gate from the activations: a (1 - a) for the sigmoids, 1 - a^2
        for the tanh row, as a ((1 - is_g) - a) + is_g."""
        return a * (self.not_g - a) + self.is_g


def _tanh(z: Tensor) -> Tensor:
    """tanh(z) as 2 sigmoid(2z) - 1, as the cell gate's: 5 nodes where `Tensor.tanh` (exact
    near 0 in relative terms) builds ~20, within 2 ulps of 1 absolute; +-inf give +-1 and
    NaN stays NaN."""
    return 2.0 / ((z * -2.0).exp() + 1.0) - 1.0


class _Step:
    """What the backward needs of one forward step: the gate activations (1, B, 4, H), the
    cell state before the step and tanh of the one after it (1, B, 1, H)."""

    __slots__ = ("act", "c_prev", "tanh_c")

    def __init__(self, act: Tensor, c_prev: Tensor, tanh_c: Tensor):
        self.act, self.c_prev, self.tanh_c = act, c_prev, tanh_c


def _forward(xg: Tensor, h: Tensor, c: Tensor, steps: range, rows: _Gates
             ) -> tuple[list[Tensor], list[_Step], Tensor]:
    """The hidden state of every step (in time order), what each step saved, the last c:
    `xg` (T, B, 4, H), states (1, B, 1, H). Every step builds the same nodes over its
    inputs: recorded once and replayed per step (`StepTemplate`: through the Tensor
    methods a node costs ~4 us, and a step is ~25 nodes)."""
    hidden = h.shape[-1]

    def step(x_t: Tensor, h: Tensor, c: Tensor) -> tuple[Tensor, ...]:
        gates = x_t + rows.times(h, rows.w_hh).reshape(x_t.shape)
        act = rows.activations(gates)
        i, f, g, o = (act._narrow(2, k, 1) for k in range(4))
        c_next = f * c + i * g
        tanh_c = _tanh(c_next)
        return o * tanh_c, c_next, act, tanh_c

    outputs: list[Tensor] = [h] * len(steps)
    saved: list[_Step] = [None] * len(steps)  # type: ignore[list-item]  # (all filled)
    cell = StepTemplate(step, xg._narrow(0, 0, 1), h, c)
    for t in steps:
        h, c_next, act, tanh_c = cell(xg._narrow(0, t, 1), h, c)
        saved[t] = _Step(act, c, tanh_c)
        outputs[t] = h
        c = c_next
    assert hidden == c.shape[-1]
    return outputs, saved, c


def _gate_gradients(dout: Tensor, dc_last: Tensor, saved: list[_Step], steps: range,
                    rows: _Gates) -> tuple[Tensor, Tensor, Tensor]:
    """The gradients of the pre-activation gates of every step (T, B, 4, H), of h0 and
    of c0 ((1, B, 1, H)), walking the steps backwards (one `StepTemplate` replayed per
    step, as the forward's). A step's four gate gradients are one (1, B, 4, H)
    expression: what multiplies each row's derivative is picked by selects on the row
    (a select, not a product with a 0/1 mask: a NaN of c_{t-1} stays in df, as torch's)."""

    def step(dout_t: Tensor, dh_next: Tensor, dc: Tensor, act: Tensor, c_prev: Tensor,
             tanh_c: Tensor) -> tuple[Tensor, ...]:
        f, o = act._narrow(2, 1, 1), act._narrow(2, 3, 1)
        dh = dout_t + dh_next
        dc = dc + dh * o * (1.0 - tanh_c * tanh_c)
        # rows i, f, g take dc times g, c_{t-1}, i; row o takes dh * tanh(c_t). The rows
        # i, f, g, o with their halves swapped are g, o, i, f: g and i where they are needed
        _, b, _, hidden = act.shape
        swapped = act.reshape(1, b, 2, 2 * hidden).flip(2).reshape(act.shape)
        other = rows.is_f.where(c_prev, swapped)
        upstream = rows.is_o.where(dh * tanh_c, dc * other)
        dgates = upstream * rows.derivatives(act)
        dh_prev = rows.times(dgates.reshape(1, b, 1, 4 * hidden), rows.w_hh_t)
        return dgates, dh_prev.reshape(dh.shape), dc * f

    # zeros, not dout * 0: an inf in the upstream gradient would make the last step NaN
    dh_next = Tensor.zeros(*dc_last.shape, dtype=dc_last.dtype, device=dc_last.device)
    dc = dc_last
    dgates: list[Tensor] = [dh_next] * len(steps)
    first = saved[steps[-1]]
    cell = StepTemplate(step, dout._narrow(0, 0, 1), dh_next, dc, first.act, first.c_prev,
                        first.tanh_c)
    for t in reversed(steps):
        s = saved[t]
        dgates[t], dh_next, dc = cell(dout._narrow(0, t, 1), dh_next, dc, s.act, s.c_prev,
                                      s.tanh_c)
    return cat(dgates, 0), dh_next, dc


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
    state = (1, batch, 1, hidden)
    with no_grad(), gc_paused(promote=True):
        xg = x2 @ w_ih.transpose(0, 1)
        for b in (b_ih, b_hh):
            if b is not None:
                xg = xg + b
        rows = _Gates(xg, batch, w_hh)
        outputs, saved, c_n = _forward(xg.reshape(length, batch, 4, hidden),
                                       h0.reshape(state), c0.reshape(state), steps, rows)
        # one tensor holds every result, so one rule gives every gradient: the outputs and
        # then c_n as row T (h_n is an output row: `out[steps[-1]]`)
        joined = cat([*outputs, c_n], 0).reshape(length + 1, batch, hidden)
    sources = (x, h0, c0, w_ih, w_hh, b_ih, b_hh)

    def gradients(g: Tensor) -> tuple[Tensor | None, ...]:
        g4 = g.reshape(length + 1, batch, 1, hidden)
        dgates, dh0, dc0 = _gate_gradients(g4[:length], g4._narrow(0, length, 1), saved,
                                           steps, rows)
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
        return (dx, dh0.reshape(batch, hidden), dc0.reshape(batch, hidden), dw_ih, dw_hh,
                None if b_ih is None else db, None if b_hh is None else db)

    result = joined._with_gradient(sources, gradients)
    out = result[:length]
    return out, out[steps[-1]], result[length]
