"""`einsum(equation, *operands)`: torch's Einstein summation, as a composition of movement
ops, sums and matmul (so autograd and every device apply unchanged).

    einsum("ij,jk->ik", a, b)     matrix product        einsum("ii", a)         trace
    einsum("ii->i", a)            diagonal              einsum("bij,bjk", a, b) batched
    einsum("...ij->...ji", a)     transpose the last two dims of any batch

Subscripts are letters (A-Z before a-z, as torch orders them) and at most one '...' per
term, which stands for the operand's leading or middle dims not named by a letter; the
ellipsis dims of all operands broadcast (right-aligned). Without '->' the output is the
ellipsis dims followed by the letters used exactly once, in alphabetical order. A label's
size may be 1 in some operands (it is then broadcast), as torch allows.

How it is computed, per operand then pairwise:

1. A label repeated within one operand is its diagonal: the repeated dims are moved last and
   flattened, and every (n^k - 1)/(n - 1)-th element is the diagonal (a strided slice).
2. A label no other operand and not the output uses is summed out at once (cheap).
3. Operands are combined left to right: the labels two operands share and a later operand or
   the output needs are batch dims, shared labels nobody needs later are contracted, the
   rest are each side's free dims. Both sides are permuted and reshaped into a batched
   (batch, M, K) @ (batch, K, N) matmul: one fused multiply-reduce, never an intermediate
   of the size of every label at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from picograd.frontend.base import prod
from picograd.frontend.lazy import shape_error
from picograd.frontend.tensor import Tensor

# a label is a subscript letter or, for the i-th ellipsis dim (counted from the right), -1-i
Label = str | int


class _Equation:
    """The parsed equation: per operand its labels (one per dim), the output labels, and
    each label's (broadcast) size."""

    def __init__(self, equation: str, operands: Sequence[Tensor]):
        self.text = equation
        self.shapes = [tuple(t.shape) for t in operands]
        spec = equation.replace(" ", "")
        if spec.count("->") > 1:
            raise self.error("more than one '->'")
        lhs, arrow, rhs = spec.partition("->")
        terms = lhs.split(",")
        if len(terms) != len(operands):
            raise self.error(f"{len(terms)} input term(s) but {len(operands)} operand(s)")
        self.inputs = [self._labels(term, shape) for term, shape in zip(terms, self.shapes,
                                                                        strict=True)]
        ellipsis = sorted({lb for labels in self.inputs for lb in labels
                           if isinstance(lb, int)})
        if arrow:
            self.output = self._output(rhs, ellipsis)
        else:
            counts: dict[Label, int] = {}
            for labels in self.inputs:
                for lb in labels:
                    counts[lb] = counts.get(lb, 0) + 1
            once = sorted(lb for lb, n in counts.items() if isinstance(lb, str) and n == 1)
            self.output = [*ellipsis, *once]
        self.sizes = self._sizes()

    def error(self, why: str) -> Exception:
        shapes = ", ".join(str(s) for s in self.shapes)
        return shape_error("einsum", f"equation {self.text!r} with operand shapes [{shapes}]: "
                                     f"{why}")

    def _labels(self, term: str, shape: tuple[int, ...]) -> list[Label]:
        if term.count("...") > 1:
            raise self.error(f"term {term!r} has more than one '...'")
        head, dots, tail = term.partition("...")
        for ch in head + tail:
            if not ("a" <= ch <= "z" or "A" <= ch <= "Z"):
                raise self.error(f"invalid subscript {ch!r} in term {term!r}: use letters "
                                 "and '...'")
        named = len(head) + len(tail)
        if len(shape) < named or (not dots and len(shape) != named):
            raise self.error(f"term {term!r} names {named} dim(s), the operand of shape "
                             f"{shape} has {len(shape)}")
        extra = len(shape) - named
        return [*head, *(-1 - i for i in reversed(range(extra))), *tail]

    def _output(self, rhs: str, ellipsis: list[int]) -> list[Label]:
        if rhs.count("...") > 1:
            raise self.error("the output has more than one '...'")
        head, dots, tail = rhs.partition("...")
        used = {lb for labels in self.inputs for lb in labels}
        for ch in head + tail:
            if not ("a" <= ch <= "z" or "A" <= ch <= "Z"):
                raise self.error(f"invalid output subscript {ch!r}")
            if ch not in used:
                raise self.error(f"output subscript {ch!r} appears in no input")
        if len(set(head + tail)) != len(head + tail):
            raise self.error(f"output {rhs!r} repeats a subscript")
        # without '...' in the output, the ellipsis dims are summed out (as torch does)
        return [*head, *(ellipsis if dots else []), *tail]

    def _sizes(self) -> dict[Label, int]:
        sizes: dict[Label, int] = {}
        for labels, shape in zip(self.inputs, self.shapes, strict=True):
            seen: dict[Label, int] = {}
            for lb, n in zip(labels, shape, strict=True):
                if lb in seen and seen[lb] != n:
                    raise self.error(f"subscript {lb!r} is repeated in one term with different "
                                     f"sizes {seen[lb]} and {n}")
                seen[lb] = n
                old = sizes.get(lb, 1)
                if n != old and 1 not in (n, old):
                    name = lb if isinstance(lb, str) else "..."
                    raise self.error(f"subscript {name!r} has sizes {old} and {n}, which do not "
                                     "broadcast")
                sizes[lb] = max(old, n) if 0 not in (n, old) else 0
        return sizes


def _diagonal(x: Tensor, labels: list[Label]) -> tuple[Tensor, list[Label]]:
    """x with each repeated label's dims replaced by their diagonal (moved last)."""
    for lb in dict.fromkeys(labels):
        dims = [d for d, other in enumerate(labels) if other == lb]
        if len(dims) < 2:
            continue
        rest = [d for d in range(x.ndim) if d not in dims]
        n, k = x.shape[dims[0]], len(dims)
        flat = x.permute(*rest, *dims).reshape(*(x.shape[d] for d in rest), n ** k)
        x = flat[..., ::sum(n ** j for j in range(k))] if n else flat
        labels = [labels[d] for d in rest] + [lb]
    return x, labels


def _sum_out(x: Tensor, labels: list[Label], needed: set[Label]) -> tuple[Tensor, list[Label]]:
    axes = tuple(d for d, lb in enumerate(labels) if lb not in needed)
    if not axes:
        return x, labels
    return x.sum(axes), [lb for lb in labels if lb in needed]


def _contract(a: Tensor, la: list[Label], b: Tensor, lb: list[Label], needed: set[Label],
              sizes: dict[Label, int]) -> tuple[Tensor, list[Label]]:
    """a and b (unique labels each) combined: shared needed labels are batch dims, shared
    others are summed over, as one batched matmul."""
    batch = [x for x in la if x in lb and x in needed]
    summed = [x for x in la if x in lb and x not in needed]
    left = [x for x in la if x not in lb]
    right = [x for x in lb if x not in la]

    def arrange(t: Tensor, labels: list[Label], order: list[Label], rows: list[Label],
                cols: list[Label]) -> Tensor:
        t = t.permute(*(labels.index(x) for x in order))
        t = t.expand(*(sizes[x] for x in order))  # size-1 dims broadcast to the label's size
        return t.reshape(prod(sizes[x] for x in batch), prod(sizes[x] for x in rows),
                         prod(sizes[x] for x in cols))

    am = arrange(a, la, batch + left + summed, left, summed)
    bm = arrange(b, lb, batch + summed + right, summed, right)
    out = (am @ bm).reshape(*(sizes[x] for x in batch + left + right))
    return out, batch + left + right


def einsum(equation: str, *operands: Tensor | Sequence[Tensor]) -> Tensor:
    """torch's `einsum`: the operands' product summed over the labels the output lacks."""
    ops: list[Any] = list(operands[0]) if len(operands) == 1 and isinstance(
        operands[0], list | tuple) else list(operands)
    for t in ops:
        if not isinstance(t, Tensor):
            raise shape_error("einsum", f"operands must be Tensors, got {type(t).__name__}")
    if not ops:
        raise shape_error("einsum", f"equation {equation!r} needs at least one operand")
    eq = _Equation(equation, ops)
    terms = [_diagonal(t, labels) for t, labels in zip(ops, eq.inputs, strict=True)]

    def needed_after(i: int) -> set[Label]:
        return {lb for _, labels in terms[i + 1:] for lb in labels} | set(eq.output)

    x, labels = _sum_out(*terms[0], needed_after(0) | set(terms[1][1] if len(terms) > 1 else ()))
    for i in range(1, len(terms)):
        y, ly = _sum_out(*terms[i], needed_after(i) | set(labels))
        x, labels = _contract(x, labels, y, ly, needed_after(i), eq.sizes)
    x, labels = _sum_out(x, labels, set(eq.output))
    x = x.permute(*(labels.index(lb) for lb in eq.output))
    # a label broadcast from size 1 in every operand it met keeps size 1 until here
    return x.expand(*(eq.sizes[lb] for lb in eq.output))
