"""picograd.onnx's control flow (If, Loop, Scan), sequences and optionals against
onnxruntime: subgraphs that read outer values (two levels up), host and device conditions,
loops of every form (trip count, condition, both, zero trips), Scan's axes and directions,
the sequence ops, sequence graph inputs / outputs, and the typed errors of malformed
bodies. Models are built with onnx.helper; every output is compared in value and dtype."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import picograd.onnx as pgx
from picograd.errors import IndexRangeError
from picograd.frontend.tensor import Tensor
from picograd.onnx import ops_control
from picograd.onnx.errors import OnnxModelError, OnnxUnsupportedError
from tests.e2e.onnx_helpers import ort_run

R = np.random.default_rng(0)
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
tvi = helper.make_tensor_value_info
node = helper.make_node


def rand(*shape: int) -> np.ndarray:
    return R.standard_normal(shape).astype(np.float32)


def const(name: str, value: Any, dtype: Any = np.int64) -> onnx.NodeProto:
    """A Constant node giving `value` (as `dtype`) under `name`."""
    return node("Constant", [], [name],
                value=numpy_helper.from_array(np.asarray(value, dtype), name + "_v"))


def graph(nodes: list[onnx.NodeProto], name: str, inputs: list[onnx.ValueInfoProto],
          outputs: list[onnx.ValueInfoProto]) -> onnx.GraphProto:
    return helper.make_graph(nodes, name, inputs, outputs)


def model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto],
          outputs: list[onnx.ValueInfoProto], opset: int = 17,
          check: bool = True) -> onnx.ModelProto:
    """A main graph of `nodes`; checked by onnx's checker (full, with shape inference)
    unless `check` is False (a model that is malformed on purpose)."""
    m = helper.make_model(graph(nodes, "main", inputs, outputs),
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    if check:
        onnx.checker.check_model(m, full_check=True)
    return m


def seq_vi(name: str, elem: int = F, shape: Any = None) -> onnx.ValueInfoProto:
    return helper.make_tensor_sequence_value_info(name, elem, shape)


def assert_same(ours: Any, theirs: Any) -> None:
    """One output: arrays equal in dtype, shape and value; sequences element by element."""
    if isinstance(theirs, list):
        assert isinstance(ours, list), type(ours)
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs, strict=True):
            assert_same(a, b)
        return
    if theirs is None:
        assert ours is None
        return
    ours = np.asarray(ours)
    assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    if ours.dtype.kind == "f":
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_array_equal(ours, theirs)


def check(m: onnx.ModelProto, feeds: dict[str, Any]) -> list[Any]:
    """picograd's outputs equal onnxruntime's; returns them (for extra checks)."""
    expected = ort_run(m, feeds)
    got = pgx.load(m).run(None, feeds)
    assert len(got) == len(expected)
    for ours, theirs in zip(got, expected, strict=True):
        assert_same(ours, theirs)
    return got


# ── If ─────────────────────────────────────────────────────────────────────


def if_node(cond: str, outs: list[str], then: onnx.GraphProto, other: onnx.GraphProto,
            name: str = "the_if") -> onnx.NodeProto:
    return node("If", [cond], outs, name=name, then_branch=then, else_branch=other)


def branch(op: str, ins: list[str], name: str, shape: Any = (3,)) -> onnx.GraphProto:
    """A branch of one `op` node over the (outer) names `ins`, output `name`_out."""
    return graph([node(op, ins, [name + "_out"])], name, [], [tvi(name + "_out", F, shape)])


@pytest.fixture
def flag_types(monkeypatch: pytest.MonkeyPatch) -> list[type]:
    """The types of the conditions If / Loop read in the test (a Tensor: a device value
    read back; a numpy array: known on the host)."""
    seen: list[type] = []
    flag = ops_control._flag

    def spy(ctx: Any, v: Any, what: str) -> bool:
        seen.append(type(v))
        return flag(ctx, v, what)
    monkeypatch.setattr(ops_control, "_flag", spy)
    return seen


@pytest.mark.parametrize("x", [np.array([1, 2, 3], np.float32), np.array([-1, -2, 1], np.float32)])
def test_if_device_condition(x: np.ndarray, flag_types: list[type]) -> None:
    """The condition is computed on the device (a sum of a graph input), read back."""
    m = model([node("ReduceSum", ["x"], ["s"], keepdims=0), const("zero", 0.0, np.float32),
               node("Greater", ["s", "zero"], ["c"]),
               if_node("c", ["y"], branch("Mul", ["x", "x"], "then"),
                       branch("Neg", ["x"], "else"))],
              [tvi("x", F, [3])], [tvi("y", F, [3])])
    check(m, {"x": x})
    assert flag_types == [Tensor]


@pytest.mark.parametrize("n", [2, 5])
def test_if_host_condition_different_shapes(n: int, flag_types: list[type]) -> None:
    """The condition comes from a shape (a host value: the If reads no device value); the
    branches give different shapes (n values, or those concatenated with themselves)."""
    m = model([node("Shape", ["x"], ["shp"]), const("three", [3]),
               node("Less", ["shp", "three"], ["c1"]), const("axes", [0]),
               node("Squeeze", ["c1", "axes"], ["c"]),
               if_node("c", ["y"], graph([node("Concat", ["x", "x"], ["cat"], axis=0)],
                                         "then", [], [tvi("cat", F, [None])]),
                       graph([node("Identity", ["x"], ["same"])], "else", [],
                             [tvi("same", F, [None])]))],
              [tvi("x", F, [None])], [tvi("y", F, [None])])
    got = check(m, {"x": rand(n)})
    assert got[0].shape == ((2 * n,) if n < 3 else (n,))
    assert flag_types == [np.ndarray]


def test_if_constant_condition_several_outputs() -> None:
    """A Constant condition (folded at load) and a branch giving two outputs of two dtypes,
    one of them its own initializer."""
    then = helper.make_graph([node("Add", ["x", "w"], ["a"]), node("Shape", ["x"], ["s"])],
                             "then", [], [tvi("a", F, [3]), tvi("s", I64, [1])],
                             [numpy_helper.from_array(np.array([10, 20, 30], np.float32), "w")])
    other = graph([node("Neg", ["x"], ["b"]), const("k", [7])], "else", [],
                  [tvi("b", F, [3]), tvi("k", I64, [1])])
    for flag in (True, False):
        m = model([const("c", flag, np.bool_), if_node("c", ["y", "z"], then, other)],
                  [tvi("x", F, [3])], [tvi("y", F, [3]), tvi("z", I64, [1])])
        check(m, {"x": rand(3)})


# ── Loop ───────────────────────────────────────────────────────────────────


def loop_body(nodes: list[onnx.NodeProto], carried: list[onnx.ValueInfoProto],
              outs: list[onnx.ValueInfoProto], cond_out: str = "cond_in") -> onnx.GraphProto:
    """A Loop body: inputs (i, cond_in, *carried), outputs (cond_out, *outs)."""
    return graph(nodes, "body", [tvi("i", I64, []), tvi("cond_in", B, []), *carried],
                 [tvi(cond_out, B, []), *outs])


@pytest.mark.parametrize("cond_from", ["counter", "device"])
def test_if_in_loop_reads_main_graph_values(cond_from: str) -> None:
    """An If inside a Loop body reads `x` and `w` of the main graph (two levels up) and the
    loop's carried value; its condition is the loop counter (a host value) or the sign of
    the carried value's sum (computed on the device, read back each iteration)."""
    then = branch("Add", ["acc", "x"], "then")
    other = branch("Mul", ["acc", "w"], "else")
    cond_nodes = ([const("two", 2), node("Less", ["i", "two"], ["small"])]
                  if cond_from == "counter" else
                  [node("ReduceSum", ["acc"], ["tot"], keepdims=0),
                   const("zero", 0.0, np.float32), node("Less", ["tot", "zero"], ["small"])])
    body = loop_body([*cond_nodes,
                      if_node("small", ["acc2"], then, other, name="inner_if"),
                      node("Identity", ["acc2"], ["scan"])],
                     [tvi("acc", F, [3])], [tvi("acc2", F, [3]), tvi("scan", F, [3])])
    m = model([node("Loop", ["n", "", "a0"], ["final", "all"], body=body)],
              [tvi("n", I64, []), tvi("a0", F, [3]), tvi("x", F, [3]), tvi("w", F, [3])],
              [tvi("final", F, [3]), tvi("all", F, [None, 3])])
    # the device condition holds for two iterations, then the else branch runs
    check(m, {"n": np.array(4, np.int64), "a0": np.array([-2, -1, 0], np.float32),
              "x": np.array([1, 0.5, 0.25], np.float32), "w": rand(3)})


def counting_body(cond_from: str) -> onnx.GraphProto:
    """A body that adds the outer `x` to its carried sum, stacks i * x and the counter,
    and continues while the sum's first element stays below 10 (`cond_from` "sum"), or
    always passes on False ("false": the for-loop form must ignore it)."""
    nodes = [node("Add", ["acc", "x"], ["acc2"]), node("Cast", ["i"], ["fi"], to=F),
             node("Mul", ["fi", "x"], ["ix"]), node("Identity", ["i"], ["i_out"])]
    if cond_from == "sum":
        nodes += [const("ten", 10.0, np.float32), const("ax", [0]),
                  node("Gather", ["acc2", "ax"], ["first"], axis=0),
                  node("ReduceMax", ["first"], ["m"], keepdims=0),
                  node("Less", ["m", "ten"], ["c"])]
    else:
        nodes += [const("c", False, np.bool_)]
    return loop_body(nodes, [tvi("acc", F, [2])],
                     [tvi("acc2", F, [2]), tvi("ix", F, [2]), tvi("i_out", I64, [])],
                     cond_out="c")


LOOP_OUTS = [tvi("sum", F, [2]), tvi("ixs", F, [None, 2]), tvi("counts", I64, [None])]


@pytest.mark.parametrize("form", ["trips", "cond", "both"])
def test_loop_forms(form: str) -> None:
    """The for form (a trip count; the body's False condition still stops it, as in
    onnxruntime), the while form (a device condition read back every iteration) and both
    (the first to stop)."""
    trips, cond = {"trips": ("n", ""), "cond": ("", "go"), "both": ("n", "go")}[form]
    body = counting_body("false" if form == "trips" else "sum")
    ins = [tvi("x", F, [2]), tvi("a0", F, [2])]
    ins += [tvi("n", I64, [])] if trips else []
    ins += [tvi("go", B, [])] if cond else []
    m = model([node("Loop", [trips, cond, "a0"], ["sum", "ixs", "counts"], body=body)],
              ins, LOOP_OUTS)
    feeds = {"x": np.array([3, 1], np.float32), "a0": np.array([0.5, 0], np.float32)}
    feeds |= {"n": np.array(2 if form == "both" else 6, np.int64)} if trips else {}
    feeds |= {"go": np.array(True)} if cond else {}
    check(m, feeds)


def test_loop_zero_trips_empty_scan_outputs() -> None:
    """No iteration: the carried value is the initial one and each scan output is empty
    along a new first axis, its other dims and dtype from the body's declared output."""
    m = model([node("Loop", ["n", "", "a0"], ["sum", "ixs", "counts"],
                    body=counting_body("false"))],
              [tvi("x", F, [2]), tvi("a0", F, [2]), tvi("n", I64, [])], LOOP_OUTS)
    got = check(m, {"x": rand(2), "a0": rand(2), "n": np.array(0, np.int64)})
    assert got[1].shape == (0, 2) and got[2].shape == (0,)


def test_loop_false_initial_condition() -> None:
    """A while loop whose initial condition is False runs no iteration either."""
    m = model([node("Loop", ["", "go", "a0"], ["sum", "ixs", "counts"],
                    body=counting_body("sum"))],
              [tvi("x", F, [2]), tvi("a0", F, [2]), tvi("go", B, [])], LOOP_OUTS)
    check(m, {"x": rand(2), "a0": rand(2), "go": np.array(False)})


def test_loop_counter_builds_shapes() -> None:
    """The loop counter (a host int64) drives a Range and a Slice: the carried value grows
    by i elements per iteration (a shape that changes from one iteration to the next)."""
    body = loop_body([const("one", 1), node("Add", ["i", "one"], ["i1"]), const("zero", 0),
                      node("Range", ["zero", "i1", "one"], ["r"]),
                      node("Cast", ["r"], ["rf"], to=F),
                      node("Concat", ["acc", "rf"], ["acc2"], axis=0),
                      node("ReduceSum", ["rf"], ["tot"], keepdims=0)],
                     [tvi("acc", F, [None])], [tvi("acc2", F, [None]), tvi("tot", F, [])])
    m = model([node("Loop", ["n", "", "a0"], ["grown", "totals"], body=body)],
              [tvi("n", I64, []), tvi("a0", F, [1])],
              [tvi("grown", F, [None]), tvi("totals", F, [None])])
    check(m, {"n": np.array(4, np.int64), "a0": np.array([9], np.float32)})


def test_loop_carries_a_sequence_and_reads_outer_tensor() -> None:
    """A loop-carried sequence (a new list each iteration), grown by a slice of the outer
    `x` whose end is the loop counter; the final sequence is a graph output."""
    body = loop_body([const("one", 1), node("Add", ["i", "one"], ["end"]), const("z", [0]),
                      const("ax", [0]), node("Unsqueeze", ["end", "ax"], ["end1"]),
                      node("Slice", ["x", "z", "end1"], ["piece"]),
                      node("SequenceInsert", ["seq", "piece"], ["seq2"])],
                     [seq_vi("seq", F, [None])], [seq_vi("seq2", F, [None])])
    m = model([node("SequenceEmpty", [], ["empty"], dtype=F),
               node("Loop", ["n", "", "empty"], ["pieces"], body=body)],
              [tvi("n", I64, []), tvi("x", F, [5])], [seq_vi("pieces", F, [None])])
    got = check(m, {"n": np.array(3, np.int64), "x": rand(5)})
    assert [p.shape for p in got[0]] == [(1,), (2,), (3,)]


def test_loop16_seq_none_case() -> None:
    """onnx's backend case test_loop16_seq_none (excluded from the suite runner, which
    compares a sequence's 0-d first element with len()): an optional sequence carried
    through a Loop, an If on OptionalHasElement inside the body; picograd's list equals
    the case's expected list and onnxruntime's, element by element."""
    case_module = pytest.importorskip("onnx.backend.test.case.node")
    case = next(c for c in case_module.collect_testcases("Loop")
                if c.name == "test_loop16_seq_none")
    (inputs, expected), = case.data_sets
    got = pgx.load(case.model).run(None, dict(zip(["trip_count", "cond", "opt_seq"], inputs,
                                                  strict=True)))
    assert_same(got[0], expected[0])
    assert [e.shape for e in got[0]] == [(), (1,), (2,), (3,), (4,), (5,)]
    feeds = dict(zip(["trip_count", "cond", "opt_seq"], inputs, strict=True))
    check(case.model, feeds)
    check(case.model, {**feeds, "opt_seq": None})  # the empty optional: the then branch


# ── Scan ───────────────────────────────────────────────────────────────────


def scan_model(in_axes: list[int], in_dirs: list[int], out_axes: list[int],
               out_dirs: list[int], check: bool = True) -> onnx.ModelProto:
    """Scan over x [T, 2] and y [2, T] (each along its axis) with two states, a running sum
    [2] and an int64 step count; scan outputs sum + x_t and x_t * y_t."""
    body = graph([node("Add", ["s", "xt"], ["s2"]), const("one", 1),
                  node("Add", ["k", "one"], ["k2"]), node("Mul", ["xt", "yt"], ["p"]),
                  node("Identity", ["s2"], ["so"])], "scan_body",
                 [tvi("s", F, [2]), tvi("k", I64, []), tvi("xt", F, [2]), tvi("yt", F, [2])],
                 [tvi("s2", F, [2]), tvi("k2", I64, []), tvi("so", F, [2]), tvi("p", F, [2])])
    out_shape = [[None, None]] * 2
    return model([node("Scan", ["s0", "k0", "x", "y"], ["sf", "kf", "o1", "o2"], body=body,
                       num_scan_inputs=2, scan_input_axes=in_axes,
                       scan_input_directions=in_dirs, scan_output_axes=out_axes,
                       scan_output_directions=out_dirs)],
                 [tvi("s0", F, [2]), tvi("k0", I64, []), tvi("x", F, [4, 2]),
                  tvi("y", F, [2, 4])],
                 [tvi("sf", F, [2]), tvi("kf", I64, []),
                  *[tvi(f"o{j}", F, sh) for j, sh in enumerate(out_shape, 1)]], opset=16,
                 check=check)


@pytest.mark.parametrize(("in_axes", "in_dirs", "out_axes", "out_dirs"), [
    ([0, 1], [0, 0], [0, 0], [0, 0]),
    ([0, -1], [1, 0], [1, -1], [0, 1]),
    ([-2, 1], [0, 1], [-2, 1], [1, 1]),
])
def test_scan_axes_and_directions(in_axes: list[int], in_dirs: list[int],
                                  out_axes: list[int], out_dirs: list[int]) -> None:
    m = scan_model(in_axes, in_dirs, out_axes, out_dirs)
    check(m, {"s0": rand(2), "k0": np.array(5, np.int64), "x": rand(4, 2), "y": rand(2, 4)})


def test_scan_reads_outer_value_and_defaults() -> None:
    """Default axes and directions (opset 9 attributes omitted); the body reads the main
    graph's `w`."""
    body = graph([node("Mul", ["xt", "w"], ["xw"]), node("Add", ["s", "xw"], ["s2"]),
                  node("Identity", ["s2"], ["so"])], "scan_body",
                 [tvi("s", F, [3]), tvi("xt", F, [3])], [tvi("s2", F, [3]), tvi("so", F, [3])])
    m = model([node("Scan", ["s0", "x"], ["sf", "all"], body=body, num_scan_inputs=1)],
              [tvi("s0", F, [3]), tvi("x", F, [5, 3]), tvi("w", F, [3])],
              [tvi("sf", F, [3]), tvi("all", F, [5, 3])], opset=9)
    check(m, {"s0": rand(3), "x": rand(5, 3), "w": rand(3)})


# ── sequences and optionals ────────────────────────────────────────────────


@pytest.mark.parametrize("insert_at", [0, -1, 3, None])
@pytest.mark.parametrize("erase_at", [1, -3, None])
def test_sequence_insert_erase_at_length(insert_at: int | None, erase_at: int | None) -> None:
    """Construct [a, b, c] (different shapes), insert d at a position (None: appended),
    erase one (None: the last), read the last element with a negative index and the
    length; the sequence itself is a graph output."""
    nodes = [node("SequenceConstruct", ["a", "b", "c"], ["s"])]
    pos = []
    if insert_at is not None:
        nodes.append(const("ip", insert_at))
        pos = ["ip"]
    nodes.append(node("SequenceInsert", ["s", "d", *pos], ["s1"]))
    pos = []
    if erase_at is not None:
        nodes.append(const("ep", erase_at, np.int32))
        pos = ["ep"]
    nodes += [node("SequenceErase", ["s1", *pos], ["s2"]), const("last", -1),
              node("SequenceAt", ["s2", "last"], ["e"]),
              node("SequenceLength", ["s2"], ["n"])]
    m = model(nodes, [tvi("a", F, [2]), tvi("b", F, [3]), tvi("c", F, [1]),
                      tvi("d", F, [4])],
              [seq_vi("s2", F, None), tvi("e", F, [None]), tvi("n", I64, [])], check=False)
    check(m, {"a": rand(2), "b": rand(3), "c": rand(1), "d": rand(4)})


@pytest.mark.parametrize(("split", "attrs"), [
    (None, {"axis": 1}),
    (None, {"axis": -1, "keepdims": 0}),
    (None, {"axis": 0, "keepdims": 1}),
    (np.array(2, np.int64), {"axis": 1}),         # pieces of 2, the last one smaller
    (np.array([1, 3, 1], np.int64), {"axis": 1, "keepdims": 0}),  # keepdims ignored
    (np.array([2, 1], np.int32), {"axis": -3}),
])
def test_split_to_sequence(split: np.ndarray | None, attrs: dict[str, Any]) -> None:
    ins = ["x"] if split is None else ["x", "split"]
    nodes = [] if split is None else [const("split", split, split.dtype)]
    m = model([*nodes, node("SplitToSequence", ins, ["s"], **attrs),
               node("SequenceLength", ["s"], ["n"])],
              [tvi("x", F, [3, 5, 2])], [seq_vi("s", F, None), tvi("n", I64, [])],
              check=False)
    check(m, {"x": rand(3, 5, 2)})


@pytest.mark.parametrize(("axis", "new_axis"), [(0, 0), (-1, 0), (0, 1), (2, 1), (-1, 1),
                                                 (-3, 1)])
def test_concat_from_sequence_input(axis: int, new_axis: int) -> None:
    """ConcatFromSequence of a sequence graph input (fed as a list of arrays)."""
    m = model([node("ConcatFromSequence", ["s"], ["y"], axis=axis, new_axis=new_axis)],
              [seq_vi("s", F, [2, 3])], [tvi("y", F, [None] * (2 + new_axis))])
    check(m, {"s": [rand(2, 3) for _ in range(4)]})


def test_sequence_of_host_and_device_values() -> None:
    """A sequence mixing host values (a Shape, cast) and device values, concatenated."""
    m = model([node("Shape", ["x"], ["sh"]), node("Cast", ["sh"], ["shf"], to=F),
               node("Neg", ["x"], ["nx"]),
               node("SequenceConstruct", ["shf", "nx"], ["s"]),
               node("ConcatFromSequence", ["s"], ["y"], axis=0)],
              [tvi("x", F, [3])], [tvi("y", F, [4])], check=False)
    check(m, {"x": rand(3)})


def test_optional_of_tensor_and_empty() -> None:
    """Optional(x) has an element and gives x back; Optional() of a type is empty."""
    empty_type = helper.make_tensor_type_proto(F, [3])
    m = model([node("Optional", ["x"], ["o"]), node("OptionalHasElement", ["o"], ["h"]),
               node("OptionalGetElement", ["o"], ["g"]),
               node("Optional", [], ["e"], type=empty_type),
               node("OptionalHasElement", ["e"], ["he"])],
              [tvi("x", F, [3])], [tvi("h", B, []), tvi("g", F, [3]), tvi("he", B, [])],
              opset=18)
    check(m, {"x": rand(3)})


def test_optional_sequence_graph_input() -> None:
    """An optional sequence graph input, given (a list) and empty (None): If on whether it
    has an element, the else branch reading the element from the outer scope."""
    opt = helper.make_optional_type_proto(
        helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, [2])))
    then = graph([node("SequenceConstruct", ["x"], ["fresh"])], "then", [],
                 [seq_vi("fresh", F, [2])])
    other = graph([node("OptionalGetElement", ["o"], ["held"])], "else", [],
                  [seq_vi("held", F, [2])])
    m = model([node("OptionalHasElement", ["o"], ["has"]), node("Not", ["has"], ["none"]),
               if_node("none", ["s"], then, other),
               node("SequenceLength", ["s"], ["n"])],
              [helper.make_value_info("o", opt), tvi("x", F, [2])],
              [seq_vi("s", F, [2]), tvi("n", I64, [])], opset=18)
    for given in ([rand(2), rand(2)], None):
        ours = pgx.load(m).run(None, {"o": given, "x": np.array([1, 2], np.float32)})
        want = given if given is not None else [np.array([1, 2], np.float32)]
        assert_same(ours[0], want)
        assert_same(ours[1], np.array(len(want), np.int64))
    check(m, {"o": [rand(2), rand(2)], "x": rand(2)})


def test_loop_zero_trips_shape_from_inference() -> None:
    """A body output declared without a shape: the empty scan output is shaped from onnx's
    shape inference (the outer `x` is [2, 3]), as onnxruntime shapes it from its own."""
    body = loop_body([node("Identity", ["x"], ["sc"])], [], [tvi("sc", F, None)])
    m = model([node("Loop", ["n", ""], ["all"], body=body)],
              [tvi("n", I64, []), tvi("x", F, [2, 3])], [tvi("all", F, [None] * 3)],
              check=False)
    got = check(m, {"n": np.array(0, np.int64), "x": rand(2, 3)})
    assert got[0].shape == (0, 2, 3)


def test_loop_zero_trips_unknown_shape_is_refused() -> None:
    """No declared or inferable shape (a data-dependent Reshape): a zero-trip loop's empty
    scan output is refused by name, never given a made-up shape."""
    body = loop_body([node("Reshape", ["x", "shp"], ["sc"])], [], [tvi("sc", F, None)])
    m = model([node("Loop", ["n", "", ], ["all"], body=body, name="zero_loop")],
              [tvi("n", I64, []), tvi("x", F, [6]), tvi("shp", I64, [2])],
              [tvi("all", F, [None] * 3)], check=False)
    loaded = pgx.load(m)
    feeds = {"x": rand(6), "shp": np.array([2, 3], np.int64)}
    ours = loaded.run(None, {"n": np.array(2, np.int64), **feeds})
    assert_same(ours[0], ort_run(m, {"n": np.array(2, np.int64), **feeds})[0])
    with pytest.raises(OnnxUnsupportedError, match=r"zero_loop.*zero iterations"):
        loaded.run(None, {"n": np.array(0, np.int64), **feeds})


# ── malformed control flow: typed errors naming the node ───────────────────


def test_loop_body_with_wrong_input_count() -> None:
    """A body taking (i, cond) for a Loop that carries one value fails at load."""
    body = graph([node("Identity", ["cond_in"], ["c"]), node("Identity", ["x"], ["a2"])],
                 "body", [tvi("i", I64, []), tvi("cond_in", B, [])],
                 [tvi("c", B, []), tvi("a2", F, [2])])
    m = model([node("Loop", ["n", "", "a0"], ["fin"], body=body, name="bad_loop")],
              [tvi("n", I64, []), tvi("a0", F, [2]), tvi("x", F, [2])], [tvi("fin", F, [2])],
              check=False)
    with pytest.raises(OnnxModelError, match=r"'bad_loop'.*Loop.*body graph takes 2 inputs"):
        pgx.load(m)


def test_if_branch_with_extra_output() -> None:
    """A branch giving two outputs for an If naming one fails at load (an extra output is
    never silently dropped)."""
    then = graph([node("Neg", ["x"], ["a"]), node("Abs", ["x"], ["b"])], "then", [],
                 [tvi("a", F, [2]), tvi("b", F, [2])])
    m = model([const("c", True, np.bool_), if_node("c", ["y"], then, then, name="bad_if")],
              [tvi("x", F, [2])], [tvi("y", F, [2])], check=False)
    with pytest.raises(OnnxModelError, match=r"'bad_if'.*then_branch graph .*2 outputs"):
        pgx.load(m)


def test_scan_body_and_axes_mismatch() -> None:
    """A Scan body taking fewer inputs than the node passes, and a scan_input_axes list of
    the wrong length, fail at load naming the node."""
    body = graph([node("Identity", ["s"], ["s2"])], "scan_body", [tvi("s", F, [2])],
                 [tvi("s2", F, [2])])
    m = model([node("Scan", ["s0", "x"], ["sf"], body=body, num_scan_inputs=1,
                    name="bad_scan")],
              [tvi("s0", F, [2]), tvi("x", F, [3, 2])], [tvi("sf", F, [2])], check=False)
    with pytest.raises(OnnxModelError, match=r"'bad_scan'.*body graph takes 1 inputs"):
        pgx.load(m)
    good = scan_model([0, 1], [0, 0], [0, 0], [0, 0])
    good.graph.node[0].attribute.remove(
        next(a for a in good.graph.node[0].attribute if a.name == "scan_input_axes"))
    good.graph.node[0].attribute.append(helper.make_attribute("scan_input_axes", [0]))
    with pytest.raises(OnnxModelError, match="scan_input_axes has 1 entries for 2"):
        pgx.load(good)


def test_loop_without_trip_count_or_condition() -> None:
    body = counting_body("sum")
    m = model([node("Loop", ["", "", "a0"], ["sum", "ixs", "counts"], body=body,
                    name="endless")],
              [tvi("x", F, [2]), tvi("a0", F, [2])], LOOP_OUTS, check=False)
    with pytest.raises(OnnxUnsupportedError, match=r"'endless'.*neither a trip count"):
        pgx.load(m)


def test_scan_inputs_of_different_lengths() -> None:
    """Scan inputs whose scan axes differ in length: a typed error at the call."""
    m = scan_model([0, 0], [0, 0], [0, 0], [0, 0], check=False)
    with pytest.raises(OnnxModelError, match=r"'<unnamed>'.*different lengths"):
        pgx.load(m).run(None, {"s0": rand(2), "k0": np.array(0, np.int64),
                               "x": rand(4, 2), "y": rand(2, 4)})


@pytest.mark.parametrize(("op", "pos"), [("SequenceAt", 3), ("SequenceAt", -4),
                                         ("SequenceErase", 3), ("SequenceInsert", 4)])
def test_sequence_position_out_of_range(op: str, pos: int) -> None:
    """A position outside the sequence is picograd's IndexRangeError naming the node."""
    ins = ["s", "x", "p"] if op == "SequenceInsert" else ["s", "p"]
    m = model([node("SequenceConstruct", ["x", "x", "x"], ["s"]), const("p", pos),
               node(op, ins, ["y"], name="seq_op")],
              [tvi("x", F, [2])], [tvi("y", F, [2]) if op == "SequenceAt"
                                   else seq_vi("y", F, [2])], check=False)
    with pytest.raises(IndexRangeError, match=rf"'seq_op'.*position {pos}"):
        pgx.load(m).run(None, {"x": rand(2)})


# ── more nesting, host values, optional outputs ───────────────────────────


def test_loop_in_loop_reads_both_enclosing_scopes() -> None:
    """An inner Loop's body reads the outer body's counter (one level up) and the main
    graph's `x` (two levels up); its trip count is a main-graph input."""
    inner = graph([node("Add", ["acc_in", "x"], ["t"]), node("Cast", ["i_outer"], ["fo"], to=F),
                   node("Add", ["t", "fo"], ["acc_out"]), node("Identity", ["ci"], ["co"])],
                  "inner", [tvi("j", I64, []), tvi("ci", B, []), tvi("acc_in", F, [2])],
                  [tvi("co", B, []), tvi("acc_out", F, [2])])
    outer = graph([node("Loop", ["m", "", "acc"], ["acc2"], body=inner),
                   node("Identity", ["cond_o"], ["cond_o2"]), node("Identity", ["acc2"], ["sc"])],
                  "outer", [tvi("i_outer", I64, []), tvi("cond_o", B, []), tvi("acc", F, [2])],
                  [tvi("cond_o2", B, []), tvi("acc2", F, [2]), tvi("sc", F, [2])])
    m = model([node("Loop", ["n", "", "a0"], ["fin", "all"], body=outer)],
              [tvi("n", I64, []), tvi("m", I64, []), tvi("a0", F, [2]), tvi("x", F, [2])],
              [tvi("fin", F, [2]), tvi("all", F, [None, 2])])
    check(m, {"n": np.array(3, np.int64), "m": np.array(2, np.int64), "a0": rand(2),
              "x": rand(2)})


def test_loop_with_huge_trip_count_and_condition() -> None:
    """torch's exported while loops: trip count INT64_MAX, the condition ends the loop."""
    m = model([node("Loop", ["n", "go", "a0"], ["sum", "ixs", "counts"],
                    body=counting_body("sum"))],
              [tvi("x", F, [2]), tvi("a0", F, [2]), tvi("n", I64, []), tvi("go", B, [])],
              LOOP_OUTS)
    check(m, {"x": np.array([3, 1], np.float32), "a0": np.array([0.5, 0], np.float32),
              "n": np.array(np.iinfo(np.int64).max, np.int64), "go": np.array(True)})


def test_loop_scan_output_of_host_counter() -> None:
    """A scan output of the host loop counter stacks on the host, as int64."""
    body = loop_body([node("Identity", ["i"], ["io"])], [], [tvi("io", I64, [])])
    m = model([node("Loop", ["n", "c"], ["all"], body=body)],
              [tvi("n", I64, []), tvi("c", B, [])], [tvi("all", I64, [None])])
    check(m, {"n": np.array(3, np.int64), "c": np.array(True)})


def test_scan_over_host_initializer() -> None:
    """Scan over a small initializer (a host value) along axis 1, backwards, stacked along
    the last axis."""
    body = graph([node("Add", ["s", "xt"], ["s2"]), node("Identity", ["s2"], ["so"])], "b",
                 [tvi("s", F, [2]), tvi("xt", F, [2])], [tvi("s2", F, [2]), tvi("so", F, [2])])
    g = helper.make_graph([node("Scan", ["s0", "xc"], ["sf", "all"], body=body,
                                num_scan_inputs=1, scan_input_axes=[1],
                                scan_input_directions=[1], scan_output_axes=[-1])],
                          "main", [tvi("s0", F, [2])], [tvi("sf", F, [2]), tvi("all", F, [2, 3])],
                          [numpy_helper.from_array(rand(2, 3), "xc")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)])
    m.ir_version = 8
    check(m, {"s0": rand(2)})


def test_split_then_stack_scalars() -> None:
    """SplitToSequence with keepdims=0 makes 0-d pieces; ConcatFromSequence with new_axis
    stacks them back (axis 0 and -1)."""
    m = model([node("SplitToSequence", ["x"], ["s"], keepdims=0),
               node("ConcatFromSequence", ["s"], ["y"], axis=0, new_axis=1),
               node("ConcatFromSequence", ["s"], ["z"], axis=-1, new_axis=1)],
              [tvi("x", F, [4])], [tvi("y", F, [4]), tvi("z", F, [4])])
    check(m, {"x": rand(4)})


def test_optional_graph_outputs() -> None:
    """An optional sequence output (a list) and an empty optional output (None), and
    OptionalHasElement of an omitted input and of a plain tensor (opset 18)."""
    seq_type = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, [2]))
    m = model([node("SequenceConstruct", ["x"], ["s"]), node("Optional", ["s"], ["o"]),
               node("Optional", [], ["e"], type=helper.make_tensor_type_proto(F, [2])),
               node("OptionalHasElement", [""], ["h"]),
               node("OptionalHasElement", ["x"], ["h2"])],
              [tvi("x", F, [2])],
              [helper.make_value_info("o", helper.make_optional_type_proto(seq_type)),
               helper.make_value_info("e", helper.make_optional_type_proto(
                   helper.make_tensor_type_proto(F, [2]))),
               tvi("h", B, []), tvi("h2", B, [])], opset=18)
    got = check(m, {"x": rand(2)})
    assert got[1] is None and isinstance(got[0], list)


@pytest.mark.parametrize("op", ["SequenceConstruct", "SequenceInsert"])
def test_sequence_of_mixed_dtypes_is_refused(op: str) -> None:
    """A sequence mixing float32 and int64 elements (which onnxruntime refuses at load) is
    an OnnxModelError naming the node, never a silently promoted concatenation."""
    nodes = ([node("SequenceConstruct", ["x", "k"], ["s"], name="mixed")] if op != "SequenceInsert"
             else [node("SequenceConstruct", ["x"], ["s0"]),
                   node("SequenceInsert", ["s0", "k"], ["s"], name="mixed")])
    m = model([*nodes, node("ConcatFromSequence", ["s"], ["y"], axis=0)],
              [tvi("x", F, [2]), tvi("k", I64, [2])], [tvi("y", F, [4])], check=False)
    with pytest.raises(OnnxModelError, match=r"'mixed'.*float32, int64"):
        pgx.load(m).run(None, {"x": rand(2), "k": np.array([1, 2], np.int64)})


@pytest.mark.parametrize(("op", "attrs"), [("SplitToSequence", {"axis": -4}),
                                           ("SplitToSequence", {"axis": 3}),
                                           ("ConcatFromSequence", {"axis": -4}),
                                           ("ConcatFromSequence", {"axis": 4, "new_axis": 1}),
                                           ("ConcatFromSequence", {"axis": -5, "new_axis": 1})])
def test_sequence_axis_out_of_range(op: str, attrs: dict[str, Any]) -> None:
    """An axis outside the rank (x is [2, 3, 1]; with new_axis the result has rank 4) is an
    OnnxModelError naming the node, not another axis taken from the back."""
    rank = 3 + attrs.get("new_axis", 0)
    if op == "SplitToSequence":
        m = model([node(op, ["x"], ["s"], name="bad_axis", **attrs)], [tvi("x", F, [2, 3, 1])],
                  [seq_vi("s", F, None)], check=False)
    else:
        m = model([node("SequenceConstruct", ["x", "x"], ["s"]),
                   node(op, ["s"], ["y"], name="bad_axis", **attrs)],
                  [tvi("x", F, [2, 3, 1])], [tvi("y", F, [None] * rank)], check=False)
    with pytest.raises(OnnxModelError, match=rf"'bad_axis'.*axis {attrs['axis']} .*rank {rank}"):
        pgx.load(m).run(None, {"x": rand(2, 3, 1)})


@pytest.mark.parametrize(("in_axes", "out_axes"), [([0, -3], [0, 0]), ([0, 1], [0, 2])])
def test_scan_axis_out_of_range(in_axes: list[int], out_axes: list[int]) -> None:
    """A scan axis outside its value's rank (y is [2, 4]: -3 is out of range, and would
    wrap onto axis 1, which has the right length) is an OnnxModelError, not another axis;
    so is an output axis beyond the stacked output's rank 2."""
    m = scan_model(in_axes, [0, 0], out_axes, [0, 0], check=False)
    with pytest.raises(OnnxModelError, match=r"axis -?\d is out of range for rank 2"):
        pgx.load(m).run(None, {"s0": rand(2), "k0": np.array(0, np.int64), "x": rand(4, 2),
                               "y": rand(2, 4)})


def symbolic_scan_model(out_axes: list[int], out_dirs: list[int]) -> onnx.ModelProto:
    """scan_model over x [T, 2] and y [2, T] with T symbolic, so length 0 may be fed."""
    m = scan_model([0, 1], [0, 0], out_axes, out_dirs, check=False)
    for vi in m.graph.input:
        if vi.name in ("x", "y"):
            vi.type.tensor_type.shape.dim[0 if vi.name == "x" else 1].dim_param = "T"
    return m


def test_scan_of_zero_steps() -> None:
    """Scan inputs of length 0 (onnxruntime 1.31 dies of SIGFPE on this model, so the
    spec is the oracle): the states come back as given, each scan output is empty along
    its axis with the body's declared [2] elsewhere; an axis beyond the rank is refused."""
    s0, k0 = rand(2), np.array(5, np.int64)
    feeds = {"s0": s0, "k0": k0, "x": rand(0, 2), "y": rand(2, 0)}
    sf, kf, o1, o2 = pgx.load(symbolic_scan_model([0, -1], [0, 1])).run(None, feeds)
    assert_same(sf, s0)
    assert_same(kf, k0)
    assert (o1.shape, o1.dtype, o2.shape, o2.dtype) == ((0, 2), np.float32, (2, 0), np.float32)
    with pytest.raises(OnnxModelError, match="axis 2 is out of range for rank 2"):
        pgx.load(symbolic_scan_model([0, 2], [0, 0])).run(None, feeds)
