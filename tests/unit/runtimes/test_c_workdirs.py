"""CPU:C compiles in `$TMPDIR/picograd-c-*` directories: none is left behind by a normal run,
a failed compile or a KeyboardInterrupt, and the ones a killed process (SIGTERM, SIGKILL)
leaves are removed by the next process's first CPU:C runtime (issue 11)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from picograd.errors import CompileError
from picograd.runtimes.cpu_c import WORKDIR_PREFIX, CpuCRuntime, sweep_stale_workdirs, workdir

REPO = Path(__file__).resolve().parents[3]
CHILD = "import picograd as pg; (pg.Tensor([1.0, 2.0], device='CPU:C') * 3).realize()"


def _workdirs(root: Path) -> list[str]:
    return sorted(n for n in os.listdir(root) if n.startswith(WORKDIR_PREFIX))


def _slow_compiler(tmp_path: Path) -> Path:
    """A C compiler that says it started, then waits: time to kill its caller mid-compile."""
    script = tmp_path / "slow-cc.sh"
    script.write_text(f'#!/bin/sh\ntouch "{tmp_path}/started"\nsleep 20\nexec cc "$@"\n')
    script.chmod(0o755)
    return script


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL],
                         ids=["SIGINT", "SIGTERM", "SIGKILL"])
def test_a_process_killed_mid_compile_leaves_nothing_for_long(
        sig: signal.Signals, tmp_path: Path) -> None:
    """SIGINT (KeyboardInterrupt) cleans up in-process; SIGTERM and SIGKILL cannot, and the
    next process's CPU:C runtime sweeps what they left once it is stale."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = dict(os.environ, TMPDIR=str(temp), CC=str(_slow_compiler(tmp_path)), PG_CACHE="0")
    child = subprocess.Popen([sys.executable, "-c", CHILD], cwd=REPO, env=env,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "started").exists():
            assert child.poll() is None and time.monotonic() < deadline, child.stderr
            time.sleep(0.05)
        assert len(_workdirs(temp)) == 1  # compiling
        child.send_signal(sig)
        _, err = child.communicate(timeout=60)
    finally:
        os.killpg(child.pid, signal.SIGKILL)  # the slow compiler, if it outlived its caller
    assert child.returncode == -sig
    if sig == signal.SIGINT:
        assert "KeyboardInterrupt" in err
        assert _workdirs(temp) == []
        return
    (left,) = _workdirs(temp)
    assert sweep_stale_workdirs(str(temp)) == 0  # too fresh: it may be a compile starting
    old = time.time() - 3600
    os.utime(temp / left, (old, old))
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=REPO, check=False, text=True,
                          capture_output=True, env=dict(env, CC="cc"))
    assert done.returncode == 0, done.stderr
    assert _workdirs(temp) == []


def test_a_compile_in_progress_is_never_swept(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # re-read TMPDIR
    with workdir() as where:
        old = time.time() - 3600
        os.utime(where, (old, old))
        assert sweep_stale_workdirs(str(tmp_path)) == 0  # locked by this process
        assert os.path.isdir(where)
    assert _workdirs(tmp_path) == []


def test_normal_and_failed_compiles_leave_no_directory(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A failed compile keeps its source in a picograd-failed-*.c file, not a directory."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setenv("PG_CACHE", "0")
    monkeypatch.setattr("tempfile.tempdir", None)
    runtime = CpuCRuntime()
    runtime.compile("void k0(float* p0, long start, long end) {\n  p0[0] = 1.0f;\n}\n")
    with pytest.raises(CompileError) as e:
        runtime.compile("void k0(void) { undefined_name; }\n")
    assert e.value.source_path is not None
    assert os.path.basename(e.value.source_path).startswith("picograd-failed-")
    assert e.value.source_path in str(e.value)
    assert _workdirs(tmp_path) == []
