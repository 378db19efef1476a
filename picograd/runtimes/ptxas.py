"""Check PTX with NVIDIA's assembler, and turn a PTX compiler's log into a readable error.

    ptxas_path() -> str | None             $PTXAS, /usr/local/bin/ptxas or `ptxas` on PATH
    check_ptx(source, arch) -> None        ptxas -arch=<arch>; CompileError if it refuses
    describe_ptx_failure(source, log, headline) -> str

`check_ptx` needs no GPU: tests run it on every PTX module picograd emits. A PTX error is
never the first thing a user sees from a bad graph (the verifiers come first), but when it
happens the message must say where: `describe_ptx_failure` (also used by the CUDA runtime
for the driver's JIT log) names the kernel and quotes the offending lines with their
numbers,

    ptxas rejected the PTX for sm_80 (kernel k0)
      line 23: 	add.rn.f32 %f5, %r5, %f1;
    <ptxas log>
    reproduce: /usr/local/bin/ptxas -arch=sm_80 /tmp/picograd-failed-1a2b.ptx

and the PTX is kept in a file (`write_failed_source`), whose path the error carries.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

from picograd import flags
from picograd.errors import CompileError
from picograd.runtimes.base import write_failed_source

PTXAS_ENV = "PTXAS"
DEFAULT_PTXAS = "/usr/local/bin/ptxas"

# "ptxas kernels.ptx, line 23; error : ..." (ptxas) / "ptxas application ptx input, line 23;"
# (the driver's JIT log).
_LOG_LINE = re.compile(r"line (\d+)")
_ENTRY = re.compile(r"\.entry\s+([A-Za-z_$][\w$]*)")


def ptxas_path() -> str | None:
    """The ptxas to use: `$PTXAS`, else /usr/local/bin/ptxas, else `ptxas` on PATH."""
    configured = flags.ptxas_override()
    if configured:
        return shutil.which(configured)
    if os.access(DEFAULT_PTXAS, os.X_OK):
        return DEFAULT_PTXAS
    return shutil.which("ptxas")


def _kernel_at(lines: list[str], number: int) -> str | None:
    """The `.entry` the 1-based line `number` belongs to."""
    for line in reversed(lines[:number]):
        match = _ENTRY.search(line)
        if match is not None:
            return match.group(1)
    return None


def describe_ptx_failure(source: str, log: str, headline: str) -> str:
    """`headline` with the kernel(s) and the numbered PTX lines the `log` points at."""
    lines = source.splitlines()
    numbers = sorted({int(n) for n in _LOG_LINE.findall(log) if 0 < int(n) <= len(lines)})
    kernels = list(dict.fromkeys(k for n in numbers if (k := _kernel_at(lines, n))))
    if kernels:
        headline += f" (kernel {', '.join(kernels)})"
    quoted = [f"  line {n}: {lines[n - 1]}" for n in numbers]
    return "\n".join([headline, *quoted])


def check_ptx(source: str, arch: str) -> None:
    """Assemble `source` with `ptxas -arch=<arch>`; raise CompileError if ptxas refuses it or
    cannot be found. The assembled code is thrown away."""
    ptxas = ptxas_path()
    if ptxas is None:
        raise CompileError(f"ptxas not found (set ${PTXAS_ENV} or put it on PATH); cannot "
                           f"check the PTX for {arch}")
    with tempfile.TemporaryDirectory(prefix="picograd-ptxas-") as workdir:
        ptx = os.path.join(workdir, "kernels.ptx")
        with open(ptx, "w") as f:
            f.write(source)
        command = [ptxas, f"-arch={arch}", "-o", os.path.join(workdir, "kernels.cubin"), ptx]
        try:
            done = subprocess.run(command, capture_output=True, text=True, check=False)
        except OSError as e:
            raise CompileError(f"cannot run {ptxas}: {e}") from e
    if done.returncode == 0:
        return
    kept = write_failed_source(source, ".ptx")
    log = (done.stderr + done.stdout).replace(ptx, kept).strip()
    message = describe_ptx_failure(source, log, f"ptxas rejected the PTX for {arch}")
    log += f"\nreproduce: {ptxas} -arch={arch} {kept}"
    raise CompileError(message, log=log, source_path=kept)


__all__ = ["check_ptx", "describe_ptx_failure", "ptxas_path"]
