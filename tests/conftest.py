"""Shared fixtures.

`device` runs a test once per device the frontend can compile for: the CPU through LLVM and
through C, WebGPU (Mesa's software Vulkan adapter where there is no GPU) and CUDA. A device
whose runtime, driver or adapter is missing here is skipped with the reason.
`PG_TEST_DEVICES=CPU:LLVM,WEBGPU` limits the run to some devices; `PG_REQUIRE_DEVICES=WEBGPU`
makes a missing device fail instead of skip (CI requires the CPU renderers and WebGPU, so a
broken driver install cannot pass as a skip).

Every graph the suite compiles is also taken through the PTX pipeline and checked with
`ptxas` for sm_80 and sm_90 (`check_ptx_of_every_graph`), so the PTX target is exercised
by every end-to-end test even without a GPU. `PG_PTXAS_CHECK=0` turns that off; without
`ptxas` it is skipped, unless `PG_REQUIRE_PTXAS=1` (set by CI) makes that an error.

`PG_HYPOTHESIS_PROFILE=ci` (set by `.ci/run`) makes every property test derandomized, so CI
checks the same examples on every run; a local run explores new ones each time.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator

import pytest
from hypothesis import Phase, settings
from xdsl.utils.exceptions import PassFailedException

settings.register_profile("ci", derandomize=True)
# a quick yes/no for mutation checks: the first failing example, not shrunk
settings.register_profile("mutation", phases=[Phase.explicit, Phase.reuse, Phase.generate])
if os.environ.get("PG_HYPOTHESIS_PROFILE"):
    settings.load_profile(os.environ["PG_HYPOTHESIS_PROFILE"])

ALL_DEVICES = ("CPU:LLVM", "CPU:C", "WEBGPU", "CUDA")
DEVICES = tuple(
    d for d in ALL_DEVICES
    if d in {x.strip().upper() for x in os.environ.get("PG_TEST_DEVICES", "").split(",") if x}
) or ALL_DEVICES
REQUIRED_DEVICES = {x.strip().upper() for x in os.environ.get("PG_REQUIRE_DEVICES", "").split(",")
                    if x.strip()}
PTX_ARCHS = ("sm_80", "sm_90")


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
        if request.param in REQUIRED_DEVICES:
            pytest.fail(f"{reason} (PG_REQUIRE_DEVICES requires it)")
        pytest.skip(reason)
    return request.param


# ── ptxas on every compiled graph ────────────────────────────────────────────


def _ptx_checker():
    """A function that takes a realize graph through the PTX pipeline and ptxas, or None
    when the check is off or ptxas is missing."""
    if os.environ.get("PG_PTXAS_CHECK", "1") == "0":
        return None
    from picograd.runtimes.ptxas import ptxas_path

    if ptxas_path() is None:
        if os.environ.get("PG_REQUIRE_PTXAS") == "1":
            raise RuntimeError("PG_REQUIRE_PTXAS=1 but ptxas was not found ($PTXAS, "
                               "/usr/local/bin/ptxas, PATH)")
        return None
    from picograd.compiler.pipelines import GPU_PTX, run_pipeline
    from picograd.lowering.ptx.printer import module_to_ptx
    from picograd.runtimes.ptxas import check_ptx

    checked: set[tuple] = set()

    def check(key: tuple, build) -> None:
        graph = key[1:]  # the same graph on another device is the same PTX
        if graph in checked or not _PTX_CHECK_IN_THIS_TEST[0]:
            return
        checked.add(graph)
        module = build()
        try:
            run_pipeline(module, GPU_PTX)
        except PassFailedException as e:
            # float64 exp/log/sin: PTX has none, and a CUDA tensor raises a DTypeError at the
            # op (frontend/lazy.py `_check_math`), so such a graph never reaches PTX
            if re.search(r"'pg_uop.unary \w+' on f64 is not supported by PTX", str(e)):
                return
            raise
        for arch in PTX_ARCHS:
            check_ptx(module_to_ptx(module, arch), arch)

    return check


@pytest.fixture(autouse=True, scope="session")
def check_ptx_of_every_graph() -> Iterator[None]:
    """Wrap the compile driver's compile step so every new graph is also checked as PTX."""
    try:
        check = _ptx_checker()
    except ImportError:  # the PTX target is not importable: its own tests say why
        check = None
    if check is None:
        yield
        return
    from picograd.compiler import driver

    compile_graph = driver._compile

    def compile_and_check(key, build, device, spec, entries, outputs, beam=0):
        program = compile_graph(key, build, device, spec, entries, outputs, beam)
        check(key, build)
        return program

    driver._compile = compile_and_check
    try:
        yield
    finally:
        driver._compile = compile_graph


# Off while a test marked `no_ptx_check` runs (see `ptx_check_marker`).
_PTX_CHECK_IN_THIS_TEST = [True]


@pytest.fixture(autouse=True)
def ptx_check_marker(request: pytest.FixtureRequest) -> Iterator[None]:
    """`@pytest.mark.no_ptx_check`: the graphs of this test skip the ptxas check. The ONNX
    backend suite is marked: its ~2,000 cases are built from the ops the rest of the suite
    checks, the check took a third of its time, and its `_cuda` cases run the same graphs on
    a GPU where one is lent."""
    _PTX_CHECK_IN_THIS_TEST[0] = request.node.get_closest_marker("no_ptx_check") is None
    yield
    _PTX_CHECK_IN_THIS_TEST[0] = True


@pytest.fixture(autouse=True, scope="session")
def private_disk_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Every test session compiles into its own empty disk cache, never ~/.cache/picograd, so
    a run depends on no state left by an earlier one."""
    old = os.environ.get("PG_CACHE_DIR")
    os.environ["PG_CACHE_DIR"] = str(tmp_path_factory.mktemp("pg-cache"))
    yield
    if old is None:
        os.environ.pop("PG_CACHE_DIR", None)
    else:
        os.environ["PG_CACHE_DIR"] = old


@pytest.fixture(autouse=True)
def no_pending_work_between_tests() -> Iterator[None]:
    """Tensors a test left for "the next optimiser step" (`backward()` roots, BatchNorm
    statistics) must not join another test's step graph."""
    yield
    from picograd.frontend import autograd

    autograd.pending_roots.clear()
    autograd.pending_writes.clear()
