"""The official ONNX backend test suite, every case, on picograd.onnx.Backend.

The cases are inputs and expected outputs written by the ONNX authors, built in memory from
the onnx wheel (docs/interop.md): node tests of every op, the "simple" models, models
converted from torch's layers ("pytorch-converted") and operators ("pytorch-operator"), and
the light zoo models (ResNet-50, VGG-19, ..., shipped with constant weights). Each case is
registered for `_cpu` and `_cuda`; the `_cuda` ones skip without a GPU.

Every case that picograd does not pass is listed in tests/e2e/onnx_suite_expected.py with
its reason and marked `xfail(strict=True)`: a listed case that starts to pass fails this
file until it is taken off the list, so the list only shrinks. Run

    pytest -m onnx_suite tests/e2e/test_onnx_backend_suite.py            # all, -n 2 shards
    pytest -m onnx_suite tests/e2e/test_onnx_backend_suite.py -k "not _cuda and sce"

(`-m "not onnx_suite"` leaves the suite out of a run.) The counts by category are in the
README's ONNX section.
"""

from __future__ import annotations

import pytest

onnx_backend_test = pytest.importorskip("onnx.backend.test")

from picograd.onnx import Backend  # noqa: E402
from tests.e2e.onnx_suite_expected import EXCLUDED, expected_failures  # noqa: E402

# no_ptx_check: see tests/conftest.py, `ptx_check_marker`
pytestmark = [pytest.mark.onnx_suite, pytest.mark.no_ptx_check]

_BT = onnx_backend_test.BackendTest(Backend, __name__)
for _pattern in EXCLUDED:
    _BT.exclude(_pattern)
_CASES = _BT.test_cases
_XFAIL = expected_failures()

for _case in _CASES.values():
    for _name in [n for n in vars(_case) if n.startswith("test_")]:
        _reason = _XFAIL.get(_name.removesuffix("_cpu").removesuffix("_cuda"))
        if _reason is not None:
            setattr(_case, _name,
                    pytest.mark.xfail(strict=True, reason=_reason)(getattr(_case, _name)))

globals().update(_CASES)


def test_every_expected_failure_names_a_case_of_the_suite():
    """A stale name on the list (a case renamed or removed by onnx) is an error, so the list
    never claims failures that are not there."""
    names = {n.removesuffix("_cpu") for case in _CASES.values() for n in vars(case)
             if n.endswith("_cpu")}
    assert sorted(set(_XFAIL) - names) == []
