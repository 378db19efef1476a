"""Source locations for `opt-tool`'s error messages.

xDSL ops carry no source location unless the text spells one (`loc(...)`), and a
`VerifyException` does not say which op failed. `LocatingParser` records where each op's
name was written, and `locate_verify_error` finds the op whose verifier raised, so that
every diagnostic reads like a compiler's:

    tests/x.mlir:12:8: error: 'pg_tensor.unary': 'exp' needs a float tensor, got i32
      %y = pg_tensor.unary exp %x : tensor<4xi32>
           ^^^^^^^^^^^^^^^
"""

from __future__ import annotations

import struct
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Operation, SSAValue, TypeAttribute
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Span

from picograd.tools.source_check import check_source

OpSpans = dict[Operation, Span[Any]]

# What xDSL raises building an attribute from a number its storage cannot hold: dense
# arrays are packed with `struct` (i32 holding 2**40), floats converted to C doubles.
_OUT_OF_RANGE = (struct.error, OverflowError)


class LocatingParser(Parser):
    """A `Parser` that remembers the span of every parsed op's name in `op_spans`."""

    def __init__(self, ctx: Context, source: str | bytes, name: str):
        super().__init__(ctx, source, name)
        self.op_spans: OpSpans = {}
        self._name_spans: list[Span[Any]] = []
        self._first_uses: dict[str, Span[Any]] = {}

    # Relies on xDSL 0.74's `parse_operation`: it parses the result list (`%x =`) first, so
    # right after that the current token is the op name (or the generic form's string).
    def _parse_op_result_list(self):  # type: ignore[override]
        results = super()._parse_op_result_list()
        self._name_spans.append(self._current_token.span)
        return results

    # A type or attribute verifies when it is built, so a bad one (`!pg.buffer<4xbf16>`)
    # raises VerifyException in the middle of parsing: report it at the type, as a parse error.
    def parse_optional_type(self) -> TypeAttribute | None:
        start = self._current_token.span
        try:
            return super().parse_optional_type()
        except VerifyException as e:
            raise ParseError(start, str(e)) from None
        except _OUT_OF_RANGE as e:
            raise ParseError(start, f"constant out of range: {e}") from None

    def parse_optional_attribute(self) -> Attribute | None:
        start = self._current_token.span
        try:
            return super().parse_optional_attribute()
        except VerifyException as e:
            raise ParseError(start, str(e)) from None
        except _OUT_OF_RANGE as e:
            raise ParseError(start, f"constant out of range: {e}") from None

    def resolve_operand(self, operand: UnresolvedOperand, type: Attribute) -> SSAValue:
        if operand.operand_name not in self.ssa_values:  # a forward reference, maybe undefined
            self._first_uses.setdefault(operand.operand_name, operand.span)
        return super().resolve_operand(operand, type)

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        try:
            return super().parse_module(allow_implicit_module)
        except ParseError as e:
            # xDSL reports undefined values at the end of the input; point at the first use.
            undefined = [n for n in self.forward_ssa_references if n in self._first_uses]
            if not undefined or not e.msg.startswith("values used but not defined"):
                raise
            name = min(undefined, key=lambda n: self._first_uses[n].start)
            raise ParseError(self._first_uses[name],
                             f"value %{name} is used but not defined") from None

    def _get_op_by_name(self, name: str) -> type[Operation]:
        try:
            return super()._get_op_by_name(name)
        except ParseError as e:  # point at the name, not at the token after it
            raise ParseError(self._name_spans[-1], e.msg) from None

    def _op_span(self, depth: int) -> Span[Any]:
        """The name of the op being parsed at nesting `depth` (else the current token)."""
        return self._name_spans[depth] if len(self._name_spans) > depth else \
            self._current_token.span

    def parse_operation(self) -> Operation:
        depth = len(self._name_spans)
        try:
            op = super().parse_operation()
        except _OUT_OF_RANGE as e:
            # a custom op syntax (xDSL's declarative formats) built an attribute from a
            # number its storage cannot hold: report it at the op
            raise ParseError(self._op_span(depth), f"constant out of range: {e}") from None
        except (VerifyException, ValueError) as e:
            # An attribute the op's syntax built does not verify (`pg_ptx.const 2**64 : i32`),
            # or a word is not a member of an enum: xDSL's own custom syntaxes (the llvm
            # dialect's) convert with `Enum(word)`, which raises ValueError.
            raise ParseError(self._op_span(depth), str(e)) from None
        except AssertionError as e:
            # xDSL's llvm dialect asserts what it parsed (`alignment` an integer attribute)
            raise ParseError(self._op_span(depth), "malformed op: its syntax's check failed"
                             + (f" ({e})" if str(e) else "")) from None
        # Nested ops pushed and popped their own spans; ours is the one at `depth`.
        self.op_spans[op] = self._name_spans[depth]
        del self._name_spans[depth:]
        return op


def parse_with_locations(ctx: Context, source: bytes, name: str, *,
                         implicit_module: bool = True) -> tuple[ModuleOp, OpSpans]:
    """Parse a module; raises xDSL's `ParseError` on malformed input (checked first by
    `check_source` for what xDSL's own lexer and parser do not survive)."""
    parser = LocatingParser(ctx, check_source(source, name), name)
    module = parser.parse_module(implicit_module)
    return module, parser.op_spans


def format_at(span: Span[Any], message: str, line_offset: int = 0) -> str:
    """`file:line:col: error: message`, then the source line and a caret under the span.

    `line_offset` is added to the line number (the chunk's place in a split input file).
    """
    loc = span.get_location()
    content = span.input.content
    start = span.input.get_start_of_line(span.start)
    end = span.input.get_end_of_line(span.start)
    line = content[start:end]
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    prefix = content[start:span.start]
    column = len(prefix.decode("utf-8", "replace") if isinstance(prefix, bytes) else prefix)
    width = max(1, min(span.end, end) - span.start)
    return (f"{loc.file}:{loc.line + line_offset}:{loc.col}: error: {message}\n"
            f"{text.rstrip()}\n{' ' * column}{'^' * width}")


def format_parse_error(err: ParseError, line_offset: int = 0) -> str:
    return format_at(err.span, err.msg, line_offset)


def _verify_alone(op: Operation) -> Exception | None:
    try:
        op.verify(verify_nested_ops=False)
    except Exception as e:  # a verifier may fail with any exception on broken IR
        return e
    return None


def locate_verify_error(module: ModuleOp, err: Exception) -> Operation | None:
    """The op whose own verification raises `err`'s message (the first such op in walk
    order), else the first op that fails to verify on its own, else None."""
    message = str(err)
    first: Operation | None = None
    for op in module.walk():
        failure = _verify_alone(op)
        if failure is None:
            continue
        if str(failure) == message:
            return op
        first = first or op
    return first


def describe_verify_error(module: ModuleOp, err: Exception, spans: OpSpans, *,
                          prefix: str = "", line_offset: int = 0) -> str:
    """A diagnostic for a failed `module.verify()`: located when the failing op came from
    the source text, else the message followed by xDSL's dump of the IR with the op marked."""
    message = prefix + str(err)
    # a whole-module check (dominance) names its op; an op's own verifier does not
    op = getattr(err, "op", None) or locate_verify_error(module, err)
    if op is not None and op in spans:
        return format_at(spans[op], message, line_offset)
    notes = "".join(getattr(err, "__notes__", ()))
    return f"error: {message}" + (f"\n{notes.rstrip()}" if notes else "")
