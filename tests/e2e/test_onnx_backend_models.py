"""The official ONNX backend suite's model cases on picograd.onnx.Backend: the "simple"
models, the models converted from torch's layers ("pytorch-converted") and operators
("pytorch-operator"), and the nine light zoo models (ResNet-50, VGG-19, Inception, ...,
shipped in the onnx wheel with constant weights: their expected outputs check shapes and
dtypes more than arithmetic). With onnx 1.23: 149 cases, 133 pass, 16 are excluded (the
reasons below), about 80 s on one core. Run with

    pytest -m onnx_suite -k "not _cuda" tests/e2e/test_onnx_backend_models.py
"""

from __future__ import annotations

import pytest

onnx_backend_test = pytest.importorskip("onnx.backend.test")

from picograd.onnx import Backend  # noqa: E402

pytestmark = pytest.mark.onnx_suite

_BT = onnx_backend_test.BackendTest(Backend, __name__)
for _kind in ("simple", "pytorch-converted", "pytorch-operator", "real"):
    for _case in onnx_backend_test.loader.load_model_tests(kind=_kind):
        _BT.include(rf"^{_case.name}_(cpu|cuda)$")

_EXCLUDED: dict[str, str] = {
    r"test_strnorm_model": "string tensors (StringNormalizer): picograd has no string dtype",
    r"test_sequence_model": "sequence values: the importer handles tensors only",
    r"test_gradient_of_add": "the ai.onnx.preview.training domain (Gradient) is not supported",
}
for _pattern in _EXCLUDED:
    _BT.exclude(_pattern)

globals().update(_BT.test_cases)
