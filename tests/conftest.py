"""Shared fixtures. `device` runs a test once per device the frontend can compile for.

To add a device (e.g. "CUDA"), append it to DEVICES: a device whose runtime cannot be found
or started here is skipped with the reason.
"""

from __future__ import annotations

import functools

import pytest

DEVICES = ("CPU:LLVM", "CPU:C")


@functools.cache
def device_unavailable(name: str) -> str | None:
    """Why `name` cannot run here, or None if it can."""
    from picograd.errors import PicogradError
    from picograd.runtimes import get_device

    try:
        get_device(name)
    except (PicogradError, ImportError, OSError) as e:
        return f"device {name} is not available: {e}"
    return None


@pytest.fixture(params=DEVICES)
def device(request: pytest.FixtureRequest) -> str:
    """A canonical device name; skipped where that device is unavailable."""
    reason = device_unavailable(request.param)
    if reason is not None:
        pytest.skip(reason)
    return request.param
