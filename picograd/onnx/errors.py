"""The errors of the ONNX importer: each a `PicogradError`, and also the built-in class a
caller would catch for the same mistake (an unsupported op is a NotImplementedError, a
malformed file or a wrong input a ValueError / TypeError)."""

from __future__ import annotations

from picograd.errors import PicogradError


class OnnxError(PicogradError):
    """Root of the ONNX importer's errors."""


class OnnxModelError(OnnxError, ValueError):
    """A model file that cannot be read or does not pass onnx's checker; names the file."""


class OnnxUnsupportedError(OnnxError, NotImplementedError):
    """An op, attribute, dtype or opset the importer does not translate; raised at load and
    naming the node (name, op type, domain, opset) so a model fails before its first run."""


class OnnxInputError(OnnxError, ValueError, TypeError):
    """A feed that does not match the graph's declared inputs (unknown or missing name,
    wrong rank, static dim or dtype); names the input."""
