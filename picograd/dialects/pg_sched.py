"""`pg_sched`: buffers, kernels and the order they run in.

The second stage. `convert-tensor-to-sched` groups the tensor graph into kernels: each
`pg_sched.kernel` is a symbol whose body reads whole buffers as tensors (`pg_sched.load`),
computes with `pg_tensor` ops (a fused group) and writes its result (`pg_sched.store`).
The graph itself becomes a `func.func` over buffers that allocates intermediates and
launches kernels in order:

    pg_sched.kernel @k0(%a: !pg.buffer<32xf32>, %out: !pg.buffer<4xf32>) {
      %x = pg_sched.load %a : !pg.buffer<32xf32> -> tensor<4x8xf32>
      %s = pg_tensor.reduce sum %x {axes = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x1xf32>
      pg_sched.store %s, %out : tensor<4x1xf32>, !pg.buffer<4xf32>
    }
    func.func @main(%a: !pg.buffer<32xf32>) -> !pg.buffer<4xf32> {
      %t = pg_sched.alloc : !pg.buffer<4xf32>
      pg_sched.launch @k0(%a, %t) : !pg.buffer<32xf32>, !pg.buffer<4xf32>
      func.return %t : !pg.buffer<4xf32>
    }

Kernel symbols keep their names through every later stage (`pg_loop.kernel`,
`pg_uop.kernel`, `llvm.func`, `pg_c.func`), so `pg_sched.launch` stays valid to the end.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import StringAttr, SymbolRefAttr, TensorType, UnitAttr
from xdsl.ir import Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    base,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    NoTerminator,
    SymbolOpInterface,
    SymbolTable,
)
from xdsl.utils.exceptions import VerifyException

from picograd.dialects.pg import BufferType
from picograd.dialects.syntax import parse_kernel_signature, print_kernel_signature


def _numel(t: TensorType) -> int:
    n = 1
    for d in t.get_shape():
        n *= d
    return n


def _check_fits(op: Operation, tensor_type: TensorType, buffer_type: BufferType) -> None:
    if (
        tensor_type.element_type != buffer_type.element_type
        or _numel(tensor_type) != buffer_type.size.data
    ):
        raise VerifyException(
            f"'{op.name}': {tensor_type} does not fit {buffer_type} "
            "(element type and element count must match)"
        )


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A kernel: a fused group of tensor ops reading and writing whole buffers.

    pg_sched.kernel @k0(%a: !pg.buffer<16xf32>, %out: !pg.buffer<16xf32>) {
      %x = pg_sched.load %a : !pg.buffer<16xf32> -> tensor<16xf32>
      %y = pg_tensor.unary exp %x : tensor<16xf32>
      pg_sched.store %y, %out : tensor<16xf32>, !pg.buffer<16xf32>
    }
    """

    name = "pg_sched.kernel"
    sym_name = prop_def(StringAttr)
    body = region_def("single_block")
    traits = traits_def(SymbolOpInterface(), IsolatedFromAbove(), NoTerminator())

    def __init__(self, name: str, arg_types: Sequence[BufferType], body: Region | None = None):
        body = body if body is not None else Region(Block(arg_types=arg_types))
        super().__init__(properties={"sym_name": StringAttr(name)}, regions=[body])

    @property
    def args(self) -> tuple[SSAValue, ...]:
        return tuple(self.body.block.args)

    def verify_(self) -> None:
        for arg in self.body.block.args:
            if not isinstance(arg.type, BufferType):
                raise VerifyException(
                    f"'{self.name}' @{self.sym_name.data}: argument types must "
                    f"be !pg.buffer, got {arg.type}"
                )
        if not any(isinstance(op, StoreOp) for op in self.body.block.ops):
            raise VerifyException(f"'{self.name}' @{self.sym_name.data} stores nothing")

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        name, args = parse_kernel_signature(parser)
        attrs = parser.parse_optional_attr_dict_with_keyword()
        op = cls(name, [], parser.parse_region(args))
        if attrs is not None:
            op.attributes.update(attrs.data)
        return op

    def print(self, printer: Printer) -> None:
        print_kernel_signature(printer, self.sym_name.data, self.body.block.args)
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        # An empty body prints as `{ }`: its block and arguments come from the header.
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)


@irdl_op_definition
class LoadOp(IRDLOperation):
    """Read a whole buffer as a row-major tensor.

    %x = pg_sched.load %a : !pg.buffer<32xf32> -> tensor<4x8xf32>
    """

    name = "pg_sched.load"
    buffer = operand_def(BufferType)
    result = result_def(base(TensorType))
    traits = traits_def(HasParent(KernelOp))
    assembly_format = "$buffer attr-dict `:` type($buffer) `->` type($result)"

    def __init__(self, buffer: SSAValue, result_type: TensorType):
        super().__init__(operands=[buffer], result_types=[result_type])

    def verify_(self) -> None:
        assert isinstance(self.buffer.type, BufferType) and isinstance(self.result.type, TensorType)
        _check_fits(self, self.result.type, self.buffer.type)


@irdl_op_definition
class StoreOp(IRDLOperation):
    """Write a tensor, row-major, into a whole buffer.

    pg_sched.store %s, %out : tensor<4x1xf32>, !pg.buffer<4xf32>
    """

    name = "pg_sched.store"
    value = operand_def(base(TensorType))
    buffer = operand_def(BufferType)
    traits = traits_def(HasParent(KernelOp))
    assembly_format = "$value `,` $buffer attr-dict `:` type($value) `,` type($buffer)"

    def __init__(self, value: SSAValue, buffer: SSAValue):
        super().__init__(operands=[value, buffer])

    def verify_(self) -> None:
        assert isinstance(self.buffer.type, BufferType) and isinstance(self.value.type, TensorType)
        _check_fits(self, self.value.type, self.buffer.type)


# A realize names each value of its pg_tensor graph after the lazy node it computes,
# `%pg.n7` for node 7 (postorder). `convert-tensor-to-sched` keeps such a name on the
# `pg_sched.alloc` of a stored value (and on no value inside a kernel), and it reaches the
# runtime's Program, which can then hand that buffer back to the node (picograd/frontend/
# realize.py: a stored intermediate that live tensors still reference is not recomputed).
NODE_HINT_PREFIX = "pg.n"


def node_hint(position: int) -> str:
    """The name hint of the value of the realize graph's node `position`."""
    return f"{NODE_HINT_PREFIX}{position}"


def hinted_node(hint: str | None) -> int | None:
    """The node position a `node_hint` names; None for any other hint."""
    if hint is None or not hint.startswith(NODE_HINT_PREFIX):
        return None
    digits = hint[len(NODE_HINT_PREFIX):]
    return int(digits) if digits.isdigit() else None


# A kernel that stores a `pg_tensor.attention` takes one more buffer just before its output:
# the score rows it works on. Its rows (leading index x query) go in tiles of
# `attention_tile(L)` consecutive queries of one head, computed together (their
# multiply-adds interleave); the work items split the tiles evenly, each owning a tile's
# rows of S scores, so the buffer holds items x tile x S elements: a bounded number of rows
# (`attention_items`), not L x S per head. `convert-sched-to-loop` reads the number of work
# items back from the buffer's size.


def attention_tile(queries: int) -> int:
    """The queries (of L) computed together: 4, 2 or 1, a divisor of L."""
    return next(t for t in (4, 2, 1) if queries % t == 0)


def attention_items(rows: int, tile: int, max_rows: int) -> int:
    """The work items of an attention of `rows` rows in tiles of `tile`: the largest number
    that divides the tiles evenly with at most `max_rows` rows in flight (at least 1)."""
    tiles = max(rows // tile, 1)
    cap = max(max_rows // tile, 1)
    return max(d for d in range(1, min(tiles, cap) + 1) if tiles % d == 0)


def attention_scratch(query: TensorType, key: TensorType, max_rows: int) -> BufferType:
    """The scratch buffer of the kernel storing an attention of these q and k types."""
    q, k = query.get_shape(), key.get_shape()
    rows = 1
    for d in q[:-1]:
        rows *= d
    tile = attention_tile(q[-2])
    return BufferType(attention_items(rows, tile, max_rows) * tile * max(k[-2], 1),
                      query.element_type)


@irdl_op_definition
class AllocOp(IRDLOperation):
    """A new buffer for an intermediate or output of the graph.

    %t = pg_sched.alloc : !pg.buffer<4xf32>

    An alloc named `%pg.n<K>` (`node_hint`) holds the value of node K of a realize's lazy
    graph; the name is only a hint (any pass may drop it).
    """

    name = "pg_sched.alloc"
    result = result_def(BufferType)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, buffer_type: BufferType):
        super().__init__(result_types=[buffer_type])


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """Run a kernel symbol on buffers, in program order.

    pg_sched.launch @k0(%a, %t) : !pg.buffer<32xf32>, !pg.buffer<4xf32>

    `invariant` marks a layout copy of @main's arguments (a kernel that computes a
    `pg_tensor.contiguous` of views of arguments only, `matmul-layout`): its output is a
    function of those buffers alone, so a runtime may keep it from one run to the next while
    they are the same, unchanged buffers (a weight's transposed copy is made once):

    pg_sched.launch @k1(%w, %wt) {invariant} : !pg.buffer<32xf32>, !pg.buffer<32xf32>
    """

    name = "pg_sched.launch"
    kernel = prop_def(SymbolRefAttr)
    args = var_operand_def(BufferType)
    invariant = opt_prop_def(UnitAttr)
    assembly_format = "$kernel `(` $args `)` attr-dict `:` type($args)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, kernel: str, args: Sequence[SSAValue], invariant: bool = False):
        super().__init__(properties={"kernel": SymbolRefAttr(kernel),
                                     **({"invariant": UnitAttr()} if invariant else {})},
                         operands=[list(args)])

    @property
    def kernel_name(self) -> str:
        return self.kernel.root_reference.data

    def verify_(self) -> None:
        target = SymbolTable.lookup_symbol(self, self.kernel)
        if target is None:
            raise VerifyException(f"'{self.name}': no kernel named @{self.kernel_name}")
        # Until the target stage, kernels take their buffers as typed entry-block arguments;
        # target-stage functions (llvm.func, pg_c.func) take pointers and are not checked here.
        if not target.regions or not target.regions[0].blocks:
            return
        want = [a.type for a in target.regions[0].blocks[0].args]
        if not all(isinstance(t, BufferType) for t in want):
            return
        got = [a.type for a in self.args]
        if want != got:
            raise VerifyException(
                f"'{self.name}' @{self.kernel_name}: argument types "
                f"{[str(t) for t in got]} do not match the kernel's "
                f"{[str(t) for t in want]}"
            )


PG_SCHED = Dialect("pg_sched", [KernelOp, LoadOp, StoreOp, AllocOp, LaunchOp], [])
