"""`check_source`: what must be refused before xDSL's lexer and parser see the text, and
what must not be (real IR: comments, arrows, escapes, nesting of a few dozen levels)."""

from __future__ import annotations

import time

import pytest
from xdsl.utils.exceptions import ParseError

from picograd.tools.source_check import MAX_NESTING, check_source


@pytest.mark.parametrize("text", [
    '// a comment with a " quote and [[[ brackets\nbuiltin.module {\n}\n',
    'builtin.module attributes {s = "a \\"quoted\\" \\n \\t \\\\ \\4A word"} {\n}\n',
    "func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  func.return %x : tensor<4xf32>\n}\n",
    # the attribute dict's brace is one level
    "builtin.module attributes {a = " + "[" * (MAX_NESTING - 1) + "]" * (MAX_NESTING - 1)
    + "} {\n}\n",
])
def test_real_ir_passes_unchanged(text: str) -> None:
    assert check_source(text.encode(), "in.mlir") == text


@pytest.mark.parametrize(("text", "where", "message"), [
    (b'x = "abc\ny"', (1, 5), "unterminated string literal"),
    (b'x = "abc', (1, 5), "unterminated string literal"),
    (b'x = "a\\qb"', (1, 7), "bad escape in string literal"),
    (b'x = "a\x0bb"', (1, 7), "character '\\x0b' in a string literal"),
    (b"x\n  y = \xff", (2, 7), "invalid UTF-8: byte 0xff"),
    (b"a<" * (MAX_NESTING + 1), (1, 2 * MAX_NESTING + 2), "brackets nested more than"),
])
def test_bad_text_is_a_located_parse_error(text: bytes, where: tuple[int, int],
                                           message: str) -> None:
    with pytest.raises(ParseError) as e:
        check_source(text, "in.mlir")
    loc = e.value.span.get_location()
    assert (loc.line, loc.col) == where
    assert message in e.value.msg


def test_an_unterminated_string_is_refused_in_linear_time() -> None:
    text = b'x = "' + b"a" * 100_000  # xDSL's regex would backtrack 2**100000 ways
    start = time.perf_counter()
    with pytest.raises(ParseError):
        check_source(text, "in.mlir")
    assert time.perf_counter() - start < 1.0
