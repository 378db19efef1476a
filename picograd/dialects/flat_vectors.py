"""Vector ops of the flat-kernel dialects: lanes of one register, moved and combined as
one value. The bases of `pg_uop`'s and `pg_c`'s vector ops, which spell them alike:

    %b = <dialect>.vload %w[%k] : !pg.buffer<256xf32> -> vector<16xf32>   w[k] ... w[k+15]
    %a = <dialect>.broadcast %x : f32 -> vector<16xf32>                   x in every lane
    <dialect>.vstore %p, %out[%i] : vector<16xf32>, !pg.buffer<64xf32>    out[i + l] = p[l]
    %s = <dialect>.vreduce add %p : vector<16xf32> -> f32                 ((p0 + p1) + p2) ...

A vector is a builtin `vector<Nxf32>` (one dimension, a non-bool element type). Each
dialect's binary and unary ops also apply lane by lane to vectors, and its accumulators or
locals may hold one (the init in every lane). `convert-loop-to-uop{vectorize=true}` emits
them for the lanes of an `upcast` range; `docs/design.md` ("Vector IR") says when.
"""

from __future__ import annotations

from xdsl.dialects.builtin import I64, IndexType, IntegerAttr, VectorType, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from picograd.dialects.dtypes import ELEMENT_TYPES, is_bool, is_float
from picograd.dialects.flat_ops import fail
from picograd.dialects.pg import BinaryKind, BinaryKindAttr, BufferType


def vector_of(element: Attribute, lanes: int) -> VectorType:
    """`vector<lanes x element>`."""
    return VectorType(element, [lanes])


def lanes_of(t: Attribute) -> int:
    """The lane count of a vector type (1 for a scalar)."""
    return t.get_shape()[0] if isinstance(t, VectorType) else 1


def check_vector(op: IRDLOperation, t: Attribute, element: Attribute | None = None) -> None:
    """`t` is a one-dimensional vector of a picograd element type other than bool (of
    `element` when given)."""
    if not isinstance(t, VectorType) or len(t.get_shape()) != 1 or t.get_shape()[0] < 1:
        raise fail(op, f"expected a one-dimensional vector type, got {t}")
    if t.element_type not in ELEMENT_TYPES or is_bool(t.element_type):
        raise fail(op, f"vector lanes must be a non-bool element type, got {t.element_type}")
    if element is not None and t.element_type != element:
        raise fail(op, f"vector type {t} does not hold {element}")


def _check_access(op: IRDLOperation, buffer: SSAValue, t: Attribute, stride: int = 1) -> None:
    """`t` is a vector of `buffer`'s elements whose lanes, `stride` apart, fit the buffer."""
    assert isinstance(buffer.type, BufferType)
    check_vector(op, t, buffer.type.element_type)
    reach = stride * (lanes_of(t) - 1) + 1
    if reach > buffer.type.size.data:
        raise fail(op, f"{lanes_of(t)} lanes {stride} apart do not fit a buffer of "
                       f"{buffer.type.size.data} elements")


class VLoadSyntax(IRDLOperation):
    """Read `buffer[index]`, `buffer[index + 1]`, ... into the lanes of one vector; with a
    `step`, every step-th element: lane `l` reads `buffer[index + step * l]` (a 2 x 2
    pool's taps, step 2).

    %v = <dialect>.vload %a[%i] : !pg.buffer<64xf32> -> vector<16xf32>
    %w = <dialect>.vload %a[%i] step(2) : !pg.buffer<64xf32> -> vector<16xf32>
    """

    buffer = operand_def(BufferType)
    index = operand_def(IndexType)
    step = opt_prop_def(IntegerAttr[I64])
    result = result_def(VectorType)
    assembly_format = ("$buffer `[` $index `]` (`step` `(` $step^ `)`)? attr-dict `:` "
                       "type($buffer) `->` type($result)")

    def __init__(self, buffer: SSAValue, index: SSAValue, result_type: Attribute,
                 step: int = 1):
        props = {"step": IntegerAttr(step, i64)} if step != 1 else {}
        super().__init__(operands=[buffer, index], result_types=[result_type],
                         properties=props)

    @property
    def stride(self) -> int:
        """The elements between two lanes' (1: consecutive)."""
        return self.step.value.data if self.step is not None else 1

    def verify_(self) -> None:
        _check_access(self, self.buffer, self.result.type, self.stride)
        if self.stride < 1:
            raise fail(self, f"a vload's step must be positive, got {self.stride}")


class VStoreSyntax(IRDLOperation):
    """Write lane `l` of `value` to `buffer[index + l]`, for every lane.

    <dialect>.vstore %v, %out[%i] : vector<16xf32>, !pg.buffer<64xf32>
    """

    value = operand_def(VectorType)
    buffer = operand_def(BufferType)
    index = operand_def(IndexType)
    assembly_format = (
        "$value `,` $buffer `[` $index `]` attr-dict `:` type($value) `,` type($buffer)"
    )

    def __init__(self, value: SSAValue, buffer: SSAValue, index: SSAValue):
        super().__init__(operands=[value, buffer, index])

    def verify_(self) -> None:
        _check_access(self, self.buffer, self.value.type)


class BroadcastSyntax(IRDLOperation):
    """A vector with `input` in every lane.

    %v = <dialect>.broadcast %x : f32 -> vector<16xf32>
    """

    input = operand_def()
    result = result_def(VectorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, x: SSAValue, lanes: int):
        super().__init__(operands=[x], result_types=[vector_of(x.type, lanes)])

    def verify_(self) -> None:
        check_vector(self, self.result.type, self.input.type)


# The horizontal reductions: the combining ops a vreduce may use (on float lanes).
VREDUCE_KINDS = (BinaryKind.ADD, BinaryKind.MUL)


class VReduceSyntax(IRDLOperation):
    """Combine the lanes of a vector in lane order, `((v0 op v1) op v2) op ...`: a float
    sum rounds exactly as that sequence of scalar ops does.

    %s = <dialect>.vreduce add %v : vector<16xf32> -> f32
    """

    kind = prop_def(BinaryKindAttr)
    input = operand_def(VectorType)
    result = result_def()
    traits = traits_def(Pure())
    assembly_format = "$kind $input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, kind: BinaryKind, x: SSAValue):
        assert isinstance(x.type, VectorType)
        super().__init__(properties={"kind": BinaryKindAttr(kind)}, operands=[x],
                         result_types=[x.type.element_type])

    def verify_(self) -> None:
        check_vector(self, self.input.type, self.result.type)
        if not is_float(self.result.type):
            raise fail(self, f"vreduce needs float lanes, got {self.result.type}")
        if self.kind.data not in VREDUCE_KINDS:
            raise fail(self, f"'{self.kind.data}' is not a reduction "
                             f"({', '.join(str(k) for k in VREDUCE_KINDS)})")


