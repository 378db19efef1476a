"""Checks on `opt-tool`'s input text that must come before xDSL's lexer and parser see it.

    text = check_source(source, "in.mlir")   # the text, or a located ParseError

Three kinds of bad input make xDSL 0.74 fail other than with a `ParseError`:

* bytes that are not UTF-8: `Parser.__init__` decodes them and raises UnicodeDecodeError;
* a string literal that does not end on its line, or holds a bad escape: the lexer's string
  regex (`"(?:[^"\\\\\\n]+|\\\\...)*"`) nests `+` in `*`, so on a missing `"` it backtracks
  through every way of splitting the text, exponential in its length (28 characters take
  12 s);
* brackets nested deeper than Python's recursion limit allows: the parser (and the verifier
  and printer after it) recurse once per level and raise RecursionError.

Each becomes a `ParseError` at the offending character, which `opt-tool` prints as
`file:line:col: error: ...` like any other parse error. The scan is linear in the input.
"""

from __future__ import annotations

import re

from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Input, Span

# Brackets of every kind (regions, attributes, types, operand lists) nested deeper than this
# are refused. Real IR nests a few dozen levels at most (a loop nest with its types); at
# about 200 xDSL's recursive parser, verifier and printer overflow Python's default stack.
MAX_NESTING = 100

# What xDSL's lexer accepts in a string literal, one character (or escape) at a time: the
# same language as its regex, without the nested quantifier, so matching is linear.
_STRING_BODY = re.compile(r'(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*')
# the characters the scan stops at: comments, strings, brackets
_SIGNIFICANT = re.compile(r'//[^\n]*|"|[{}\[\]()<>]')
_CLOSERS = {"}": "{", "]": "[", ")": "("}
_IDENTIFIER_END = re.compile(r"[\w.$]")


def _error(text: str, name: str, start: int, end: int, message: str) -> ParseError:
    return ParseError(Span(start, max(end, start + 1), Input(text, name)), message)


def _decode(source: bytes, name: str) -> str:
    try:
        return source.decode("utf-8")
    except UnicodeDecodeError as e:
        # Locate it in the text decoded so far, so that line and column count characters.
        text = source[:e.start].decode("utf-8") + source[e.start:].decode("utf-8", "replace")
        start = len(source[:e.start].decode("utf-8"))
        raise _error(text, name, start, start + 1,
                     f"invalid UTF-8: byte 0x{source[e.start]:02x} ({e.reason})") from None


def _string_end(text: str, name: str, quote: int) -> int:
    """The index after the string literal that opens at `quote`; a ParseError if it is not
    one xDSL's lexer accepts."""
    end = _STRING_BODY.match(text, quote + 1).end()  # type: ignore[union-attr]
    if end < len(text) and text[end] == '"':
        return end + 1
    if end >= len(text) or text[end] == "\n":
        raise _error(text, name, quote, end, "unterminated string literal (a '\"' is missing "
                                             "before the end of the line)")
    if text[end] == "\\":
        raise _error(text, name, end, end + 2, "bad escape in string literal: use \\n, \\t, "
                                               "\\\\, \\\" or two hex digits")
    raise _error(text, name, end, end + 1, f"character {text[end]!r} in a string literal")


def _is_type_bracket(text: str, at: int) -> bool:
    """`<` opens a bracket after a name (`tensor<`, `array<`, `!pg.buffer<`), and `>`
    closes one unless it is the arrow `->`."""
    if text[at] == "<":
        return at > 0 and _IDENTIFIER_END.match(text[at - 1]) is not None
    return at == 0 or text[at - 1] != "-"


def _check_brackets_and_strings(text: str, name: str) -> None:
    opened: list[tuple[str, int]] = []
    pos = 0
    while (m := _SIGNIFICANT.search(text, pos)) is not None:
        c, at = m.group(), m.start()
        pos = m.end()
        if c.startswith("//"):
            continue
        if c == '"':
            pos = _string_end(text, name, at)
        elif c in "{[(" or (c == "<" and _is_type_bracket(text, at)):
            opened.append((c, at))
            if len(opened) > MAX_NESTING:
                raise _error(text, name, at, at + 1,
                             f"brackets nested more than {MAX_NESTING} deep")
        elif c in _CLOSERS and opened:
            opened.pop()  # a mismatch is the parser's to report
        elif c == ">" and opened and opened[-1][0] == "<" and _is_type_bracket(text, at):
            opened.pop()


def check_source(source: bytes, name: str) -> str:
    """`source` decoded, once it is UTF-8 with well-formed strings and sane nesting;
    raises a located `ParseError` otherwise."""
    text = _decode(source, name)
    _check_brackets_and_strings(text, name)
    return text
