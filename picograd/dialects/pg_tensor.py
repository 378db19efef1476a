"""`pg_tensor`: the whole realize graph as SSA values of ranked tensor type.

The first stage. Values are builtin `tensor<4x8xf32>` with static shapes; every op is a
primitive with value semantics. Composite frontend ops (matmul, mean, softmax) are
decompositions into these. A graph is a `func.func` whose arguments are the realized input
tensors and whose results are the tensors to realize:

    func.func @main(%a: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x1xf32> {
      %bb = pg_tensor.reshape %b : tensor<8xf32> -> tensor<1x8xf32>
      %be = pg_tensor.expand %bb : tensor<1x8xf32> -> tensor<4x8xf32>
      %m = pg_tensor.binary mul %a, %be : tensor<4x8xf32>
      %s = pg_tensor.reduce sum %m {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
      func.return %s : tensor<4x1xf32>
    }
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    TensorType,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, Pure
from xdsl.utils.exceptions import VerifyException

from picograd.dialects.dtypes import bit_width, check_element_type, is_bool, is_float, is_int
from picograd.dialects.pg import (
    BinaryKind,
    BinaryKindAttr,
    CmpKind,
    CmpKindAttr,
    ReduceKind,
    ReduceKindAttr,
    UnaryKind,
    UnaryKindAttr,
)
from picograd.dialects.syntax import (
    int_array,
    int_tuple,
    parse_number,
    print_number,
    scalar_attr,
    scalar_value,
)

AnyTensor = base(TensorType)


def shape_of(value: SSAValue | Attribute) -> tuple[int, ...]:
    t = value.type if isinstance(value, SSAValue) else value
    assert isinstance(t, TensorType), t
    return tuple(t.get_shape())


def dtype_of(value: SSAValue | Attribute) -> Attribute:
    t = value.type if isinstance(value, SSAValue) else value
    assert isinstance(t, TensorType), t
    return t.element_type


def tensor(shape: Sequence[int], dtype: Attribute) -> TensorType:
    return TensorType(dtype, list(shape))


def _fail(op: Operation, message: str) -> VerifyException:
    return VerifyException(f"'{op.name}': {message}")


def _check_axes(op: Operation, axes: tuple[int, ...], rank: int, what: str) -> None:
    if any(a < 0 or a >= rank for a in axes) or len(set(axes)) != len(axes):
        raise _fail(op, f"{what} {list(axes)} must be distinct axes in [0, {rank})")


class TensorOp(IRDLOperation):
    """Checks that every result holds a supported element type."""

    def verify_(self) -> None:
        for r in self.results:
            check_element_type(dtype_of(r), self.name)
        self.verify_shapes()

    def verify_shapes(self) -> None:
        pass


# ── constants ────────────────────────────────────────────────────────────────


@irdl_op_definition
class ConstOp(TensorOp):
    """A tensor filled with one scalar.

    %c = pg_tensor.const 1.5 : tensor<4x4xf32>
    """

    name = "pg_tensor.const"
    value = prop_def(FloatAttr | IntegerAttr)
    result = result_def(AnyTensor)
    traits = traits_def(Pure(), ConstantLike())

    def __init__(self, value: float | int | bool, result_type: TensorType):
        attr = scalar_attr(value, result_type.element_type)
        super().__init__(properties={"value": attr}, result_types=[result_type])

    @property
    def scalar(self) -> float | int:
        return scalar_value(self.value)

    def verify_shapes(self) -> None:
        if self.value.type != dtype_of(self.result):
            raise _fail(
                self, f"value type {self.value.type} != element type {dtype_of(self.result)}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> ConstOp:
        value = parse_number(parser)
        parser.parse_punctuation(":")
        result_type = parser.parse_type()
        if not isinstance(result_type, TensorType):
            parser.raise_error(f"expected a tensor type, got {result_type}")
        op = cls(value, result_type)
        op.attributes.update(parser.parse_optional_attr_dict())
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        print_number(printer, self.scalar)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)
        printer.print_op_attributes(self.attributes)


# ── elementwise ──────────────────────────────────────────────────────────────


@irdl_op_definition
class UnaryOp(TensorOp):
    """An elementwise unary function.

    %y = pg_tensor.unary exp %x : tensor<4xf32>
    """

    name = "pg_tensor.unary"
    T: ClassVar = VarConstraint("T", AnyTensor)
    kind = prop_def(UnaryKindAttr)
    input = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$kind $input attr-dict `:` type($result)"

    def __init__(self, kind: UnaryKind, x: SSAValue | Operation):
        x = SSAValue.get(x)
        super().__init__(
            properties={"kind": UnaryKindAttr(kind)}, operands=[x], result_types=[x.type]
        )

    def verify_shapes(self) -> None:
        kind, dt = self.kind.data, dtype_of(self.input)
        if kind == UnaryKind.NOT and is_float(dt):
            raise _fail(self, f"'not' needs a bool or integer tensor, got {dt}")
        if kind not in (UnaryKind.NOT, UnaryKind.NEG) and not is_float(dt):
            raise _fail(self, f"'{kind}' needs a float tensor, got {dt}")


@irdl_op_definition
class BinaryOp(TensorOp):
    """An elementwise binary function of two tensors of one type.

    %z = pg_tensor.binary add %x, %y : tensor<4xf32>
    """

    name = "pg_tensor.binary"
    T: ClassVar = VarConstraint("T", AnyTensor)
    kind = prop_def(BinaryKindAttr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$kind $lhs `,` $rhs attr-dict `:` type($result)"

    def __init__(self, kind: BinaryKind, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        lhs = SSAValue.get(lhs)
        super().__init__(
            properties={"kind": BinaryKindAttr(kind)}, operands=[lhs, rhs], result_types=[lhs.type]
        )

    def verify_shapes(self) -> None:
        kind, dt = self.kind.data, dtype_of(self.lhs)
        if kind in (BinaryKind.AND, BinaryKind.OR, BinaryKind.XOR) and is_float(dt):
            raise _fail(self, f"'{kind}' needs bool or integer tensors, got {dt}")
        if kind in (BinaryKind.MOD, BinaryKind.SHL, BinaryKind.SHR) and is_float(dt):
            raise _fail(self, f"'{kind}' needs integer tensors, got {dt}")
        if is_bool(dt) and kind not in (
            BinaryKind.AND,
            BinaryKind.OR,
            BinaryKind.XOR,
            BinaryKind.MAX,
            BinaryKind.MIN,
        ):
            raise _fail(self, f"'{kind}' is not defined on bool tensors")


@irdl_op_definition
class CmpOp(TensorOp):
    """An elementwise comparison; the result is a bool (`i1`) tensor.

    %m = pg_tensor.cmp lt %x, %y : tensor<4xf32> -> tensor<4xi1>
    """

    name = "pg_tensor.cmp"
    T: ClassVar = VarConstraint("T", AnyTensor)
    kind = prop_def(CmpKindAttr)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(AnyTensor)
    traits = traits_def(Pure())
    assembly_format = "$kind $lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)"

    def __init__(self, kind: CmpKind, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        lhs = SSAValue.get(lhs)
        super().__init__(
            properties={"kind": CmpKindAttr(kind)},
            operands=[lhs, rhs],
            result_types=[tensor(shape_of(lhs), i1)],
        )

    def verify_shapes(self) -> None:
        if self.result.type != tensor(shape_of(self.lhs), i1):
            raise _fail(
                self, f"result must be {tensor(shape_of(self.lhs), i1)}, got {self.result.type}"
            )


@irdl_op_definition
class WhereOp(TensorOp):
    """Elementwise select: `cond ? lhs : rhs`.

    %r = pg_tensor.where %c, %x, %y : tensor<4xi1>, tensor<4xf32>
    """

    name = "pg_tensor.where"
    T: ClassVar = VarConstraint("T", AnyTensor)
    cond = operand_def(AnyTensor)
    lhs = operand_def(T)
    rhs = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$cond `,` $lhs `,` $rhs attr-dict `:` type($cond) `,` type($result)"

    def __init__(
        self, cond: SSAValue | Operation, lhs: SSAValue | Operation, rhs: SSAValue | Operation
    ):
        super().__init__(operands=[cond, lhs, rhs], result_types=[SSAValue.get(lhs).type])

    def verify_shapes(self) -> None:
        if self.cond.type != tensor(shape_of(self.lhs), i1):
            raise _fail(
                self, f"condition must be {tensor(shape_of(self.lhs), i1)}, got {self.cond.type}"
            )


class _ElementTypeChange(TensorOp):
    """An elementwise op from one element type to another, of the same shape (cast, bitcast).
    Not an op itself: the subclasses name it."""

    input = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `to` type($result)"

    def __init__(self, x: SSAValue | Operation, dtype: Attribute):
        x = SSAValue.get(x)
        super().__init__(operands=[x], result_types=[tensor(shape_of(x), dtype)])

    def verify_shapes(self) -> None:
        if shape_of(self.input) != shape_of(self.result):
            raise _fail(
                self, f"shape changes from {shape_of(self.input)} to {shape_of(self.result)}"
            )


@irdl_op_definition
class CastOp(_ElementTypeChange):
    """Elementwise conversion of the element type (C conversion rules; float to int truncates).

    %r = pg_tensor.cast %x : tensor<4xf32> to tensor<4xi32>
    """

    name = "pg_tensor.cast"


@irdl_op_definition
class IotaOp(TensorOp):
    """Each element's index along `axis` (an integer tensor; no operand, no buffer: later
    stages compute it from the loop index of that axis).

    %r = pg_tensor.iota {axis = 1 : i64} : tensor<4x8xi32>      r[i, j] = j
    """

    name = "pg_tensor.iota"
    axis = prop_def(IntegerAttr)
    result = result_def(AnyTensor)
    traits = traits_def(Pure())
    assembly_format = "attr-dict `:` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, axis: int, result_type: TensorType):
        super().__init__(properties={"axis": IntegerAttr(axis, 64)}, result_types=[result_type])

    @property
    def axis_index(self) -> int:
        return self.axis.value.data

    def verify_shapes(self) -> None:
        rank, dt = len(shape_of(self.result)), dtype_of(self.result)
        if not 0 <= self.axis_index < rank:
            raise _fail(self, f"axis {self.axis_index} is not in [0, {rank})")
        if dt not in (i32, i64):
            raise _fail(self, f"the element type must be i32 or i64, got {dt}")


@irdl_op_definition
class BitcastOp(_ElementTypeChange):
    """Elementwise reinterpretation of the bits as another element type of the same width
    (no bool, no conversion: f32 1.0 is i32 1065353216).

    %r = pg_tensor.bitcast %x : tensor<4xf32> to tensor<4xi32>
    """

    name = "pg_tensor.bitcast"

    def verify_shapes(self) -> None:
        super().verify_shapes()
        check_bitcast(self, dtype_of(self.input), dtype_of(self.result))


def check_bitcast(op: Operation, src: Attribute, dst: Attribute) -> None:
    """A bitcast keeps the bit width and involves no bool (whose width is not its storage)."""
    if is_bool(src) or is_bool(dst) or bit_width(src) != bit_width(dst):
        raise _fail(op, f"cannot bitcast {src} to {dst}: needs two non-bool types of one "
                        "bit width")


# ── gather ───────────────────────────────────────────────────────────────────


class _AlongAxisOp(TensorOp):
    """An op that indexes one `axis` with an integer tensor (gather, scatter_add). Not an op
    itself: the subclasses name it."""

    axis = prop_def(IntegerAttr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)

    @property
    def axis_index(self) -> int:
        return self.axis.value.data


@irdl_op_definition
class GatherOp(_AlongAxisOp):
    """Elements of `table` picked along `axis` by the integer tensor `index`: the result has
    the index's shape and `r[..., i, ...] = table[..., index[..., i, ...], ...]`, every other
    coordinate unchanged (torch's `take_along_dim` without broadcasting). Table and index
    have one rank and agree off `axis`. An index outside `[0, table.shape[axis])` gives 0;
    the frontend wraps negative indices and checks the rest before they get here.

    %r = pg_tensor.gather %w[%ids] {axis = 0 : i64}
        : tensor<100x8xf32>, tensor<6x8xi32> -> tensor<6x8xf32>
    """

    name = "pg_tensor.gather"
    table = operand_def(AnyTensor)
    index = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    assembly_format = ("$table `[` $index `]` attr-dict `:` type($table) `,` type($index) "
                       "`->` type($result)")

    def __init__(self, table: SSAValue | Operation, index: SSAValue | Operation, axis: int):
        table, index = SSAValue.get(table), SSAValue.get(index)
        super().__init__(properties={"axis": IntegerAttr(axis, 64)}, operands=[table, index],
                         result_types=[tensor(shape_of(index), dtype_of(table))])

    def verify_shapes(self) -> None:
        _check_indexing(self, shape_of(self.table), self.index, self.axis_index)
        index = shape_of(self.index)
        want = tensor(index, dtype_of(self.table))
        if self.result.type != want:
            raise _fail(self, f"result must be {want}, got {self.result.type}")


@irdl_op_definition
class ScatterAddOp(_AlongAxisOp):
    """`base` with the elements of `src` added at the positions `index` names along `axis`:
    `r = base`, then for every position c of the index, in row-major order,
    `r[c with c[axis] = index[c]] += src[c]` (`gather`'s gradient, torch's `scatter_add`).
    Index and src have one shape, which agrees with base's off `axis`; an index outside
    `[0, base.shape[axis])` adds nowhere. The additions into one element happen in the order
    of the index along `axis`.

    %r = pg_tensor.scatter_add %base[%ids], %g {axis = 0 : i64}
        : tensor<100x8xf32>, tensor<6x8xi32>, tensor<6x8xf32>
    """

    name = "pg_tensor.scatter_add"
    T: ClassVar = VarConstraint("T", AnyTensor)
    base = operand_def(T)
    index = operand_def(AnyTensor)
    src = operand_def(AnyTensor)
    result = result_def(T)
    assembly_format = ("$base `[` $index `]` `,` $src attr-dict `:` type($base) `,` "
                       "type($index) `,` type($src)")

    def __init__(self, base: SSAValue | Operation, index: SSAValue | Operation,
                 src: SSAValue | Operation, axis: int):
        base = SSAValue.get(base)
        super().__init__(properties={"axis": IntegerAttr(axis, 64)},
                         operands=[base, index, src], result_types=[base.type])

    def verify_shapes(self) -> None:
        _check_indexing(self, shape_of(self.base), self.index, self.axis_index)
        if is_bool(dtype_of(self.base)):
            raise _fail(self, "cannot add bool tensors")
        if self.src.type != tensor(shape_of(self.index), dtype_of(self.base)):
            raise _fail(self, f"src must be {tensor(shape_of(self.index), dtype_of(self.base))}"
                              f", got {self.src.type}")


# ── attention ────────────────────────────────────────────────────────────────


@irdl_op_definition
class AttentionOp(TensorOp):
    """Scaled dot-product attention over the last two dims, leading dims batched:
    `r[..., i, :] = sum_j w[i, j] * v[..., j, :]` with `w[i, :] = softmax_j(scale *
    (q[..., i, :] . k[..., j, :]) + bias[..., i, j])`, where a row whose scores are all
    -inf gets zero weights (a zero output), as torch's SDPA: the weight of a -inf score is
    0, and the row is divided by its sum only where that sum is not 0. q is (..., L, E),
    k (..., S, E), v (..., S, Ev), bias (..., L, S), the result (..., L, Ev); one float
    element type, `scale` of that type. Stage 2 makes it a kernel of its own, which
    computes one row of scores at a time (convert-sched-to-loop), never the L x S matrix.

    %r = pg_tensor.attention %q, %k, %v, %bias scale 0.125
        : tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x5xf32>, tensor<2x4x6xf32>
        -> tensor<2x4x5xf32>
    """

    name = "pg_tensor.attention"
    query = operand_def(AnyTensor)
    key = operand_def(AnyTensor)
    value = operand_def(AnyTensor)
    bias = operand_def(AnyTensor)
    scale = prop_def(FloatAttr | IntegerAttr)  # an integer one fails verification
    result = result_def(AnyTensor)
    traits = traits_def(Pure())

    def __init__(self, query: SSAValue | Operation, key: SSAValue | Operation,
                 value: SSAValue | Operation, bias: SSAValue | Operation, scale: float,
                 result_type: TensorType | None = None):
        q, v = SSAValue.get(query), SSAValue.get(value)
        t = dtype_of(q)
        if result_type is None:  # (..., L) of q, Ev of v
            result_type = tensor((*shape_of(q)[:-1], shape_of(v)[-1]), t)
        super().__init__(properties={"scale": scalar_attr(scale, t)},
                         operands=[q, key, v, bias], result_types=[result_type])

    @property
    def scale_value(self) -> float:
        return float(scalar_value(self.scale))

    def verify_shapes(self) -> None:
        q, k, v, b = (shape_of(x) for x in self.operands)
        t = dtype_of(self.query)
        if not is_float(t) or any(dtype_of(x) != t for x in self.operands) \
                or self.scale.type != t:
            raise _fail(self, f"q, k, v, bias and scale need one float type, got "
                              f"{[str(dtype_of(x)) for x in self.operands]}, scale "
                              f"{self.scale.type}")
        if len(q) < 2 or not len(q) == len(k) == len(v) == len(b):
            raise _fail(self, f"q {list(q)}, k {list(k)}, v {list(v)} and bias {list(b)} "
                              "need one rank of at least 2")
        lead, (big_l, e), (big_s, ev) = q[:-2], q[-2:], v[-2:]
        if k != (*lead, big_s, e) or v[:-2] != lead or b != (*lead, big_l, big_s):
            raise _fail(self, f"q {list(q)}, k {list(k)}, v {list(v)}, bias {list(b)}: want "
                              "q (..., L, E), k (..., S, E), v (..., S, Ev), bias "
                              "(..., L, S) with one leading shape")
        if self.result.type != tensor((*lead, big_l, ev), t):
            raise _fail(self, f"result must be {tensor((*lead, big_l, ev), t)}, got "
                              f"{self.result.type}")

    @classmethod
    def parse(cls, parser: Parser) -> AttentionOp:
        operands = parser.parse_comma_separated_list(parser.Delimiter.NONE,
                                                     parser.parse_unresolved_operand)
        parser.parse_keyword("scale")
        scale = parse_number(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        parser.parse_punctuation("->")
        result_type = parser.parse_type()
        if len(operands) != 4 or len(types) != 4:
            parser.raise_error("expected q, k, v, bias and their four types")
        if not all(isinstance(t, TensorType) for t in (*types, result_type)):
            parser.raise_error("expected tensor types")
        values = parser.resolve_operands(operands, types, parser.pos)
        op = cls(*values, scale, result_type)  # type: ignore[arg-type]
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_string(" scale ")
        print_number(printer, self.scale_value)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_list([x.type for x in self.operands], printer.print_attribute)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


def _check_indexing(op: Operation, table: tuple[int, ...], index_value: SSAValue,
                    axis: int) -> None:
    """The rules gather and scatter_add share: an integer index of the table's rank, an axis
    of it, and shapes that agree off the axis."""
    index = shape_of(index_value)
    if not is_int(dtype_of(index_value)):
        raise _fail(op, f"the index must be an integer tensor, got {index_value.type}")
    if len(table) != len(index) or not 0 <= axis < len(table):
        raise _fail(op, f"table {list(table)} and index {list(index)} need one rank and an "
                        f"axis in it, got axis {axis}")
    if any(a != b for d, (a, b) in enumerate(zip(table, index, strict=True)) if d != axis):
        raise _fail(op, f"table {list(table)} and index {list(index)} differ off axis {axis}")


# ── reduce ───────────────────────────────────────────────────────────────────


@irdl_op_definition
class ReduceOp(TensorOp):
    """Reduce over `axes`, keeping them as size-1 dimensions.

    %s = pg_tensor.reduce sum %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
    """

    name = "pg_tensor.reduce"
    kind = prop_def(ReduceKindAttr)
    axes = prop_def(DenseArrayBase)
    input = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    traits = traits_def(Pure())
    assembly_format = "$kind $input attr-dict `:` type($input) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, kind: ReduceKind, x: SSAValue | Operation, axes: Sequence[int]):
        x = SSAValue.get(x)
        shape = [1 if i in axes else d for i, d in enumerate(shape_of(x))]
        super().__init__(
            properties={"kind": ReduceKindAttr(kind), "axes": int_array(sorted(axes))},
            operands=[x],
            result_types=[tensor(shape, dtype_of(x))],
        )

    @property
    def axis_list(self) -> tuple[int, ...]:
        return int_tuple(self.axes)

    def verify_shapes(self) -> None:
        shape = shape_of(self.input)
        _check_axes(self, self.axis_list, len(shape), "axes")
        want = tuple(1 if i in self.axis_list else d for i, d in enumerate(shape))
        if self.result.type != tensor(want, dtype_of(self.input)):
            raise _fail(
                self, f"result must be {tensor(want, dtype_of(self.input))}, got {self.result.type}"
            )


# ── movement ─────────────────────────────────────────────────────────────────


class MovementOp(TensorOp):
    """A view: the result's elements are elements of the input (or a pad value)."""

    def verify_shapes(self) -> None:
        source = self.operands[0]
        if dtype_of(source) != dtype_of(self.results[0]):
            raise _fail(self, "a movement op must keep the element type")
        want = self.expected_shape(shape_of(source))
        got = shape_of(self.results[0])
        if want != got:
            raise _fail(self, f"result shape must be {list(want)}, got {list(got)}")

    def expected_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        raise NotImplementedError


@irdl_op_definition
class ReshapeOp(MovementOp):
    """Reinterpret the row-major elements under a new shape with the same element count.

    %r = pg_tensor.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
    """

    name = "pg_tensor.reshape"
    input = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, x: SSAValue | Operation, shape: Sequence[int]):
        x = SSAValue.get(x)
        super().__init__(operands=[x], result_types=[tensor(shape, dtype_of(x))])

    def expected_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        new = shape_of(self.result)
        if _numel(new) != _numel(shape):
            raise _fail(
                self,
                f"cannot reshape {list(shape)} ({_numel(shape)} elements) to "
                f"{list(new)} ({_numel(new)} elements)",
            )
        return new


@irdl_op_definition
class PermuteOp(MovementOp):
    """Reorder dimensions: result dim i is input dim perm[i].

    %t = pg_tensor.permute %x {perm = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<8x4xf32>
    """

    name = "pg_tensor.permute"
    perm = prop_def(DenseArrayBase)
    input = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, x: SSAValue | Operation, perm: Sequence[int]):
        x = SSAValue.get(x)
        shape = shape_of(x)
        super().__init__(
            properties={"perm": int_array(list(perm))},
            operands=[x],
            result_types=[tensor([shape[p] for p in perm], dtype_of(x))],
        )

    @property
    def order(self) -> tuple[int, ...]:
        return int_tuple(self.perm)

    def expected_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        if sorted(self.order) != list(range(len(shape))):
            raise _fail(self, f"{list(self.order)} is not a permutation of {len(shape)} dims")
        return tuple(shape[p] for p in self.order)


@irdl_op_definition
class ExpandOp(MovementOp):
    """Broadcast size-1 dimensions to a larger size (same rank).

    %e = pg_tensor.expand %x : tensor<4x1xf32> -> tensor<4x8xf32>
    """

    name = "pg_tensor.expand"
    input = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, x: SSAValue | Operation, shape: Sequence[int]):
        x = SSAValue.get(x)
        super().__init__(operands=[x], result_types=[tensor(shape, dtype_of(x))])

    def expected_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        new = shape_of(self.result)
        ok = len(new) == len(shape) and all(
            s == n or s == 1 for s, n in zip(shape, new, strict=True)
        )
        if not ok:
            raise _fail(self, f"cannot expand {list(shape)} to {list(new)}")
        return new


@irdl_op_definition
class PadOp(MovementOp):
    """Pad each dimension with `low[i]` elements before and `high[i]` after, set to `value`.

    %p = pg_tensor.pad %x low [1, 0] high [0, 2] value 0.0 : tensor<4x8xf32> -> tensor<5x10xf32>
    """

    name = "pg_tensor.pad"
    low = prop_def(DenseArrayBase)
    high = prop_def(DenseArrayBase)
    value = prop_def(FloatAttr | IntegerAttr)
    input = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    traits = traits_def(Pure())

    def __init__(
        self,
        x: SSAValue | Operation,
        low: Sequence[int],
        high: Sequence[int],
        value: float | int | bool = 0,
    ):
        x = SSAValue.get(x)
        shape = [d + lo + hi for d, lo, hi in zip(shape_of(x), low, high, strict=True)]
        super().__init__(
            properties={
                "low": int_array(list(low)),
                "high": int_array(list(high)),
                "value": scalar_attr(value, dtype_of(x)),
            },
            operands=[x],
            result_types=[tensor(shape, dtype_of(x))],
        )

    @property
    def pads(self) -> tuple[tuple[int, int], ...]:
        return tuple(zip(int_tuple(self.low), int_tuple(self.high), strict=True))

    @property
    def scalar(self) -> float | int:
        return scalar_value(self.value)

    def expected_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        low, high = int_tuple(self.low), int_tuple(self.high)
        if len(low) != len(shape) or len(high) != len(shape) or min(low + high, default=0) < 0:
            raise _fail(
                self,
                f"low {list(low)} and high {list(high)} must be {len(shape)} non-negative sizes",
            )
        if self.value.type != dtype_of(self.input):
            raise _fail(self, f"pad value type {self.value.type} != {dtype_of(self.input)}")
        return tuple(d + lo + hi for d, lo, hi in zip(shape, low, high, strict=True))

    @classmethod
    def parse(cls, parser: Parser) -> PadOp:
        x = parser.parse_unresolved_operand()
        parser.parse_keyword("low")
        low = _parse_ints(parser)
        parser.parse_keyword("high")
        high = _parse_ints(parser)
        parser.parse_keyword("value")
        value = parse_number(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        in_type = parser.parse_type()
        parser.parse_punctuation("->")
        parser.parse_type()
        (operand,) = parser.resolve_operands([x], [in_type], parser.pos)
        op = cls(operand, low, high, value)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.input)
        printer.print_string(
            f" low {list(int_tuple(self.low))} high {list(int_tuple(self.high))} value "
        )
        print_number(printer, self.scalar)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.input.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class SliceOp(MovementOp):
    """Take `start[i] + k*step[i]` for k < result dim i, in every dimension (step >= 1).

    %s = pg_tensor.slice %x {start = array<i64: 0, 1>, step = array<i64: 1, 2>}
           : tensor<4x8xf32> -> tensor<4x3xf32>
    """

    name = "pg_tensor.slice"
    start = prop_def(DenseArrayBase)
    step = prop_def(DenseArrayBase)
    input = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(
        self,
        x: SSAValue | Operation,
        start: Sequence[int],
        step: Sequence[int],
        shape: Sequence[int],
    ):
        x = SSAValue.get(x)
        super().__init__(
            properties={"start": int_array(list(start)), "step": int_array(list(step))},
            operands=[x],
            result_types=[tensor(shape, dtype_of(x))],
        )

    @property
    def starts(self) -> tuple[int, ...]:
        return int_tuple(self.start)

    @property
    def steps(self) -> tuple[int, ...]:
        return int_tuple(self.step)

    def expected_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        new = shape_of(self.result)
        if not (len(self.starts) == len(self.steps) == len(shape) == len(new)):
            raise _fail(self, f"start, step and result rank must match the input rank {len(shape)}")
        for d, (s, st, n, o) in enumerate(zip(self.starts, self.steps, shape, new, strict=True)):
            if st < 1 or s < 0 or o < 0 or (o > 0 and s + (o - 1) * st >= n):
                raise _fail(self, f"dim {d}: start {s}, step {st}, size {o} reads outside [0, {n})")
        return new


@irdl_op_definition
class FlipOp(MovementOp):
    """Reverse the order of elements along `axes`.

    %f = pg_tensor.flip %x {axes = array<i64: 0>} : tensor<4x8xf32>
    """

    name = "pg_tensor.flip"
    axes = prop_def(DenseArrayBase)
    T: ClassVar = VarConstraint("T", AnyTensor)
    input = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, x: SSAValue | Operation, axes: Sequence[int]):
        x = SSAValue.get(x)
        super().__init__(
            properties={"axes": int_array(sorted(axes))}, operands=[x], result_types=[x.type]
        )

    @property
    def axis_list(self) -> tuple[int, ...]:
        return int_tuple(self.axes)

    def expected_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        _check_axes(self, self.axis_list, len(shape), "axes")
        return shape


# ── layout ───────────────────────────────────────────────────────────────────


@irdl_op_definition
class ContiguousOp(TensorOp):
    """The input's value, stored in a buffer of its own (row-major in its shape).

    The identity on values; what it adds is a kernel boundary: `convert-tensor-to-sched`
    always materialises its result, so readers load that buffer instead of recomputing or
    re-indexing the input. `matmul-layout` puts one after a permute to give a matmul operand
    the memory order its kernel reads fastest; `Tensor.contiguous()` is one.

    %c = pg_tensor.contiguous %x : tensor<8x4xf32>
    """

    name = "pg_tensor.contiguous"
    T: ClassVar = VarConstraint("T", AnyTensor)
    input = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($result)"

    def __init__(self, x: SSAValue | Operation):
        x = SSAValue.get(x)
        super().__init__(operands=[x], result_types=[x.type])


def _numel(shape: Sequence[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _parse_ints(parser: Parser) -> list[int]:
    return parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False)
    )


MOVEMENT_OPS = (ReshapeOp, PermuteOp, ExpandOp, PadOp, SliceOp, FlipOp)
ELEMENTWISE_OPS = (ConstOp, UnaryOp, BinaryOp, CmpOp, WhereOp, CastOp, BitcastOp)

PG_TENSOR = Dialect(
    "pg_tensor",
    [ConstOp, IotaOp, UnaryOp, BinaryOp, CmpOp, WhereOp, CastOp, BitcastOp, GatherOp,
     ScatterAddOp, AttentionOp, ReduceOp, ContiguousOp, *MOVEMENT_OPS],
    [],
)
