"""`convert-tensor-to-sched`: group a `pg_tensor` graph into kernels over buffers.

Input: a module whose `func.func @main` takes and returns tensors and computes with
`pg_tensor` ops (stage 1).
Output (stage 2): one `pg_sched.kernel @kN` per materialised value (see `kernel_grouping.py`
for the fusion rule), named `@kN` after its position N in launch order, followed by a
`func.func @main` over `!pg.buffer`s whose body is only `pg_sched.alloc`, `pg_sched.launch`
and `func.return`. Values whose kernels would be built alike (the same ops on buffers of the
same types, names aside: the layers of a deep model) share the first one's kernel, which
each of their launches runs; `sched-dedup` merges what is left (kernels with regions).

Each kernel takes the buffers it reads (in order of first use in the kernel) and then the
buffer it writes; it `pg_sched.load`s every read buffer whole as a tensor of its original
shape, recomputes its cone with the original `pg_tensor` ops (views stay views of the loaded
tensors, constants are recreated in each kernel), and `pg_sched.store`s the result. A
`pg_tensor.scatter_add` is two kernels writing one buffer: the first stores its base there,
the second `pg_sched.load`s that buffer (its own output argument) as the scatter's base and
stores the scatter into it, which `convert-sched-to-loop` turns into additions in place.
A kernel that stores a `pg_tensor.attention` also takes a scratch buffer for its score rows
(`pg_sched.attention_scratch`, allocated in `@main`), just before its output.
The launch of a kernel that stores a `pg_tensor.contiguous` of views of `@main`'s arguments
only (a layout copy) is marked `invariant`: the runtime may keep its output across runs.
An alloc takes the name of the value it stores; a realize's node names (`%pg.n7`,
`pg_sched.node_hint`) are kept there and dropped inside kernels.

Guarantee: no `pg_tensor` op is left outside a kernel; the inputs of `@main` are only read;
a graph result that is directly an argument is returned as that argument's buffer, and every
other result is a buffer allocated in `@main`. The output is a function of the input text
alone (deterministic), built in one walk.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from picograd.dialects import pg_sched as S
from picograd.dialects import pg_tensor as T
from picograd.dialects.pg import BufferType
from picograd.passes.sched.kernel_grouping import MIN_BUFFER_LIMIT, KernelGroup, group_kernels


def buffer_type(t: TensorType) -> BufferType:
    """The flat buffer that holds a tensor of type `t`, row-major."""
    return BufferType(prod(t.get_shape()), t.element_type)


def _tensor_type(value: SSAValue, where: str) -> TensorType:
    t = value.type
    if not isinstance(t, TensorType) or not t.has_static_shape():
        raise PassFailedException(f"convert-tensor-to-sched: {where} must be a statically "
                                  f"shaped tensor, got {t}")
    if prod(t.get_shape()) == 0:
        raise PassFailedException(f"convert-tensor-to-sched: {where} has no elements ({t}); "
                                  "a buffer holds at least one")
    return t


def _find_main(module: ModuleOp) -> func.FuncOp:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == "main":
            return op
    raise PassFailedException("convert-tensor-to-sched: the module has no func.func @main")


def _kernel_hint(value: SSAValue) -> str | None:
    """A value's name inside a kernel: a realize's node names (`%pg.n7`) stay outside, so a
    kernel's text does not depend on where its ops sit in the graph."""
    hint = value.name_hint
    return None if S.hinted_node(hint) is not None else hint


def _scratch_type(group: KernelGroup, attention_rows: int) -> BufferType | None:
    """The score rows of an attention kernel (`pg_sched.attention_scratch`); None for any
    other kernel."""
    op = group.root.owner
    if not isinstance(op, T.AttentionOp):
        return None
    query, key = op.query.type, op.key.type
    assert isinstance(query, TensorType) and isinstance(key, TensorType)
    return S.attention_scratch(query, key, attention_rows)


def _build_kernel(name: str, group: KernelGroup, attention_rows: int) -> S.KernelOp:
    reads = [_tensor_type(v, "a kernel input") for v in group.reads]
    out = _tensor_type(group.root if group.into is None else group.into, "a kernel result")
    scratch = _scratch_type(group, attention_rows)
    kernel = S.KernelOp(name, [*map(buffer_type, reads), *([] if scratch is None else
                                                            [scratch]), buffer_type(out)])
    block = kernel.body.block
    for value, arg in zip(group.reads, block.args, strict=False):
        arg.name_hint = _kernel_hint(value)
    block.args[-1].name_hint = "out"
    if scratch is not None:
        block.args[-2].name_hint = "scratch"
    mapping: dict[SSAValue, SSAValue] = {}
    for value, arg, t in zip(group.reads, block.args, reads, strict=False):
        load = S.LoadOp(arg, t)
        load.result.name_hint = arg.name_hint
        block.add_op(load)
        mapping[value] = load.result
    for op in group.cone:
        if group.in_place and op is group.root.owner:
            # a scatter_add adds into its own output: its base is that buffer (other uses of
            # the base value, if any, compute it)
            own = S.LoadOp(block.args[-1], out)
            block.add_op(own)
            clone = op.clone(mapping)
            clone.operands = (own.result, *clone.operands[1:])  # only the base operand
        else:
            clone = op.clone(mapping)
        for result in clone.results:
            result.name_hint = _kernel_hint(result)
        block.add_op(clone)
    block.add_op(S.StoreOp(mapping[group.root], block.args[-1]))
    return kernel


def _structure(group: KernelGroup, attention_rows: int) -> tuple | None:
    """What `_build_kernel` makes of `group`, up to names: the types of its buffers, then per
    cone op its name, properties, attributes, result types and where each operand comes
    from (a read buffer by position, an earlier cone op by position). Groups of one
    structure build structurally identical kernels, which `sched-dedup` would merge into the
    first: a graph of N identical layers builds each kernel once, not N times. None for an
    op with regions or successors (not compared here: built, and left to `sched-dedup`)."""
    scratch = _scratch_type(group, attention_rows)
    out = group.root if group.into is None else group.into
    source: dict[SSAValue, tuple] = {v: ("read", n) for n, v in enumerate(group.reads)}
    ops = []
    for n, op in enumerate(group.cone):
        if op.regions or op.successors:
            return None
        if group.in_place and op is group.root.owner:  # the base is the output buffer
            operands = [("own",), *(source[x] for x in op.operands[1:])]
        else:
            operands = [source[x] for x in op.operands]
        ops.append((op.name, tuple(sorted(op.properties.items())),
                    tuple(sorted(op.attributes.items())),
                    tuple(r.type for r in op.results), tuple(operands)))
        for k, result in enumerate(op.results):
            source[result] = ("op", n, k)
    return (tuple(v.type for v in group.reads), out.type, scratch, group.in_place,
            source[group.root], tuple(ops))


@dataclass(frozen=True)
class ConvertTensorToSchedPass(ModulePass):
    """Lower `pg_tensor` (stage 1) to `pg_sched` kernels plus a buffer schedule (stage 2).

    Input dialects: builtin, func, pg_tensor. Output dialects: builtin, func, pg_sched,
    pg_tensor (inside kernels only). See the module docstring for the guarantee. Option
    `max-buffers` (0: no limit) caps the buffers of a kernel, its output included (a GPU
    target's binding limit; see kernel_grouping.py). Option `attention-rows` bounds the score
    rows an attention kernel keeps in flight (its scratch buffer; a GPU wants more work
    items than a CPU's threads). Option `share-kernels` (default true): values whose kernels
    would be built alike launch one kernel; false builds one per value (`sched-dedup`'s
    tests start from there).
    """

    name = "convert-tensor-to-sched"
    max_buffers: int = 0
    attention_rows: int = 256
    share_kernels: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.max_buffers and self.max_buffers < MIN_BUFFER_LIMIT:
            # group_kernels refuses it with a ValueError; say it in the option's words
            raise PassFailedException(
                f"convert-tensor-to-sched: max-buffers={self.max_buffers}: a kernel needs up "
                f"to {MIN_BUFFER_LIMIT} buffers (0: no limit)")
        if self.attention_rows < 1:
            raise PassFailedException("convert-tensor-to-sched: attention-rows must be "
                                      f"positive, got {self.attention_rows}")
        main = _find_main(op)
        arg_types = [buffer_type(_tensor_type(a, "an argument of @main"))
                     for a in main.body.block.args]
        grouping = group_kernels(main, self.max_buffers or None)

        new_block = Block(arg_types=arg_types)
        buffers: dict[SSAValue, SSAValue] = {}
        for old, new in zip(main.body.block.args, new_block.args, strict=True):
            new.name_hint = old.name_hint
            buffers[old] = new

        kernels: list[Operation] = []
        built: dict[tuple, str] = {}  # structure -> the name of the kernel built for it
        for n, group in enumerate(grouping.kernels):
            structure = _structure(group, self.attention_rows) if self.share_kernels else None
            name = built.get(structure) if structure is not None else None
            if name is None:
                name = f"k{n}"
                kernels.append(_build_kernel(name, group, self.attention_rows))
                if structure is not None:
                    built[structure] = name
            if group.in_place:  # the buffer its base's kernel wrote
                out = buffers[group.root]
            else:
                value = group.root if group.into is None else group.into
                alloc = S.AllocOp(buffer_type(_tensor_type(value, "a kernel result")))
                alloc.result.name_hint = value.name_hint
                new_block.add_op(alloc)
                buffers[value] = out = alloc.result
            launch_args = [buffers[v] for v in group.reads] + [out]
            if (scratch := _scratch_type(group, self.attention_rows)) is not None:
                rows = S.AllocOp(scratch)
                rows.result.name_hint = "scratch"
                new_block.add_op(rows)
                launch_args.insert(-1, rows.result)
            invariant = isinstance(group.root.owner, T.ContiguousOp) and all(
                isinstance(v, BlockArgument) for v in group.reads)
            new_block.add_op(S.LaunchOp(name, launch_args, invariant))
        results = [buffers[v] for v in grouping.results]
        new_block.add_op(func.ReturnOp(*results))

        new_main = func.FuncOp("main", (arg_types, [r.type for r in results]), Region(new_block))
        body = op.body.block
        for kernel in kernels:
            body.insert_op_before(kernel, main)
        body.insert_op_before(new_main, main)
        body.erase_op(main, safe_erase=False)
