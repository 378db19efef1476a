"""Binning and random draws, as torch names them.

    bucketize(boundaries, right=False)           x.bucketize(b) is torch.bucketize(x, b)
    searchsorted(values, right=False, side=None)  seq.searchsorted(v) is torch.searchsorted(
                                                  seq, v) (torch has no method form)
    histc(bins=100, min=0, max=0)
    multinomial(num_samples, replacement=False), bernoulli(p=None), bernoulli_(p)
    random_(from_=0, to=None);  Tensor.randperm(n)

`bucketize` and `searchsorted` count, for every value, the boundaries that sort before it
(strictly before with right=False, not after with right=True): one compare-and-sum over
(values x boundaries), so they stay lazy, fuse and differentiate nothing (int32 results).
NaN sorts as the largest value, as ops_sort.py and torch. `histc` bins on the device too:
the range, when not given (min == max == 0), is the data's min and max computed lazily
(widened by 1 each way when they are equal, as torch); elements outside it are dropped and
the maximum falls in the last bin. The draws use the counter-based generator of random.py
(reproducible under `manual_seed`, the same on every device): `bernoulli` compares uniform
samples with p; `multinomial` with replacement inverts the CDF (the count of cumulative
probabilities at or below u * total, so zero-probability categories are never drawn),
without replacement it takes the top-k of Gumbel-perturbed log-probabilities (which draws
sequentially without replacement, in law); `randperm` argsorts 32-bit random words, which
are distinct within one draw (random.py's bijection), so every permutation is equally likely.
"""

from __future__ import annotations

from typing import Any, Self

from picograd.frontend import random
from picograd.frontend.base import Scalar, TensorBase
from picograd.frontend.dtype import DType, float32, int32, to_dtype
from picograd.frontend.lazy import dtype_error, shape_error
from picograd.frontend.ops_advanced_index import AdvancedIndexOps
from picograd.runtimes.registry import canonical_device_name


class DrawOps(AdvancedIndexOps):
    __slots__ = ()

    # ── binning ─────────────────────────────────────────────────────────────

    def _count_before(self, op: str, seq: Any, values: Any, right: bool) -> Any:
        """For values (..., K) and a sorted seq (..., M) (or 1-D): the insertion position of
        each value, int32 (..., K), found as torch finds it: a binary search that moves right
        while not seq[mid] >= value (> with `right`). On a sequence without NaN that is the
        count of entries before the value; with NaN (a NaN value, or NaN entries at the end)
        it is what torch's search gives, which no count reproduces."""
        if seq.dtype.is_bool or values.dtype.is_bool:
            raise dtype_error(op, "needs numeric tensors, got bool")
        self._check_device(op, values)
        if seq.dtype != values.dtype:  # compare in the common dtype (ints with floats)
            common = float32 if seq.dtype.is_float or values.dtype.is_float else int32
            seq, values = seq.cast(common), values.cast(common)
        m = seq.shape[-1]
        lo = values._const(0, values.shape, int32)
        hi = values._const(m, values.shape, int32)
        for _ in range(m.bit_length()):  # a search of m entries takes at most this many halvings
            mid = (lo + hi) // 2
            at = mid.minimum(m - 1)  # lo == hi == m: a finished search, any index will do
            entry = (seq.index_select(0, at.reshape(-1)).reshape(at.shape) if seq.ndim == 1
                     else seq.gather(-1, at))
            go_right = (lo < hi) & ~((entry > values) if right else (entry >= values))
            stop_here = (lo < hi) & ~go_right
            lo = go_right.where(mid + 1, lo)
            hi = stop_here.where(mid, hi)
        return lo

    def bucketize(self, boundaries: TensorBase, right: bool = False,
                  out_int32: bool = False) -> Self:
        """The index of each element's bucket among the sorted 1-D `boundaries`: i with
        boundaries[i-1] < x <= boundaries[i] (< with right=True), int32."""
        if boundaries.ndim != 1:
            raise shape_error("bucketize", f"boundaries must be 1-D, got shape "
                                           f"{boundaries.shape}")
        x: Any = self
        flat = x.reshape(-1)
        return self._count_before("bucketize", boundaries, flat, right).reshape(self.shape)

    def searchsorted(self, values: TensorBase | Scalar, right: bool = False,
                     side: str | None = None, out_int32: bool = False) -> Self:
        """torch.searchsorted(self, values): where each value would be inserted into this
        sorted sequence (its last dim; leading dims must match values') to keep it sorted,
        before equal entries (after them with right=True or side="right")."""
        op = "searchsorted"
        if side is not None:
            if side not in ("left", "right"):
                raise shape_error(op, f"side must be 'left' or 'right', got {side!r}")
            if right and side == "left":
                raise shape_error(op, "side='left' contradicts right=True")
            right = side == "right"
        if self.ndim == 0:
            raise shape_error(op, "the sorted sequence must have at least one dim")
        vals: Any = values if isinstance(values, TensorBase) else self._const(
            values, (), self.dtype)
        scalar = vals.ndim == 0
        if self.ndim > 1 and (vals.ndim != self.ndim or vals.shape[:-1] != self.shape[:-1]):
            raise shape_error(op, f"values of shape {vals.shape} must match the sorted "
                                  f"sequence's leading dims {self.shape[:-1]}")
        v = vals.reshape(1) if scalar else vals
        out = self._count_before(op, self, v, right)
        return out.reshape(()) if scalar else out

    def histc(self, bins: int = 100, min: Scalar = 0, max: Scalar = 0) -> Self:
        """A histogram of the elements in `bins` equal bins over [min, max] (the data's
        range when both are 0), float; elements outside are not counted."""
        op = "histc"
        if isinstance(bins, bool) or not isinstance(bins, int) or bins <= 0:
            raise shape_error(op, f"bins must be a positive int, got {bins!r}")
        if not self.dtype.is_float:
            raise dtype_error(op, f"needs a float tensor, got {self.dtype.name}")
        if min > max:
            raise shape_error(op, f"max must be larger than min, got min={min}, max={max}")
        x: Any = self.reshape(-1)
        if x.shape[0] == 0:
            return self._const(0.0, (bins,), self.dtype)
        if min == max:
            lo, hi = (x.min(), x.max()) if min == 0 else (x._const(float(min), (), x.dtype),
                                                           x._const(float(max), (), x.dtype))
            same = lo == hi
            lo, hi = same.where(lo - 1, lo), same.where(hi + 1, hi)
        else:
            lo, hi = x._const(float(min), (), x.dtype), x._const(float(max), (), x.dtype)
        lo, hi = lo.detach().cast(float32), hi.detach().cast(float32)
        xf = x.detach().cast(float32)
        inside = (xf >= lo) & (xf <= hi)
        which = ((xf - lo) * bins / (hi - lo)).floor().cast(int32).minimum(bins - 1)
        which = inside.where(which, -1)
        counts = (which.unsqueeze(-1) == self._arange(bins)).cast(int32).sum(0)
        return counts.cast(self.dtype)

    # ── draws ───────────────────────────────────────────────────────────────

    def bernoulli(self, p: float | None = None) -> Self:
        """0/1 samples: 1 with probability p (this tensor's values when p is None), in
        this tensor's dtype and shape."""
        if not self.dtype.is_float:
            raise dtype_error("bernoulli", f"needs a float tensor, got {self.dtype.name}")
        prob: Any = self if p is None else p
        u = random.rand(type(self), self.shape, self.device, float32)
        return (u < prob).cast(self.dtype).detach()

    def bernoulli_(self, p: float | TensorBase = 0.5) -> Self:
        """Refill with 0/1 samples, 1 with probability p (a float or a tensor that
        broadcasts to this one)."""
        u = random.rand(type(self), self.shape, self.device, float32)
        me: Any = self
        return me._replace("bernoulli_", (u < p).cast(self.dtype))

    def random_(self, from_: int = 0, to: int | None = None) -> Self:
        """Refill with integers uniform in [from_, to) (to: the dtype's largest + 1 for an
        int dtype, 2**mantissa bits + 1 for a float one, as torch)."""
        dt: DType = self.dtype
        if to is None:
            if dt.is_bool:
                to = 2
            elif dt.is_float:
                to = 2 ** (24 if dt.name == "float32" else 11) + 1
            else:
                to = int(dt.max) + 1
        if not from_ < to:
            raise shape_error("random_", f"needs from < to, got from={from_}, to={to}")
        span = to - from_
        words = random.bits(type(self), self.shape, self.device)  # int32, uniform bits
        low31 = words & 0x7FFFFFFF
        drawn = (low31 % span + from_) if span < 2 ** 31 else low31 + from_
        me: Any = self
        return me._replace("random_", drawn.cast(dt))

    def multinomial(self, num_samples: int, replacement: bool = False) -> Self:
        """int32 category indices drawn from the probabilities (weights) along the last
        dim, (K,) -> (num_samples,), (N, K) -> (N, num_samples)."""
        op = "multinomial"
        if self.ndim not in (1, 2):
            raise shape_error(op, f"needs a 1-D or 2-D tensor, got shape {self.shape}")
        if not self.dtype.is_float:
            raise dtype_error(op, f"needs float probabilities, got {self.dtype.name}")
        k = self.shape[-1]
        if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples <= 0:
            raise shape_error(op, f"num_samples must be a positive int, got {num_samples!r}")
        if not replacement and num_samples > k:
            raise shape_error(op, f"cannot draw {num_samples} samples without replacement "
                                  f"from {k} categories")
        me: Any = self
        p = me.detach().cast(float32)
        rows = p if p.ndim == 2 else p.unsqueeze(0)
        n = rows.shape[0]
        if replacement:
            cdf = rows.cumsum(-1)
            u = random.rand(type(self), (n, num_samples), self.device, float32)
            target = u * cdf[:, k - 1:k]  # (n, S)
            drawn = (cdf.unsqueeze(1) <= target.unsqueeze(-1)).cast(int32).sum(-1)
            drawn = drawn.minimum(k - 1)
        else:
            u = random.rand(type(self), (n, k), self.device, float32)
            gumbel = -((1.0 - u).log().neg()).log()  # u in [0, 1): 1 - u in (0, 1]
            keys = rows.log() + gumbel
            drawn = keys.topk(num_samples, -1).indices
        drawn = drawn.cast(int32)
        return drawn if self.ndim == 2 else drawn.reshape(num_samples)

    @classmethod
    def randperm(cls, n: int, dtype: object = int32, device: str = "CPU") -> Any:
        """A random permutation of 0..n-1 (reproducible under manual_seed)."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise shape_error("randperm", f"n must be a non-negative int, got {n!r}")
        dt = to_dtype(dtype)
        words = random.bits(cls, (n,), canonical_device_name(device))
        return words.argsort().cast(dt)

