"""What the runtimes' toolchain fingerprints are made of: tool versions and the host CPU.

    version_output(["cc", "--version"]) -> "cc (Debian 12.2.0-14) 12.2.0 | ..."
    tool_version("cc") -> "/usr/bin/cc: cc (Debian 12.2.0-14) 12.2.0"
    cpu_description() -> "model name : AMD EPYC ...; flags : fpu vme ..."
"""

from __future__ import annotations

import functools
import platform
import shutil
import subprocess


def version_output(command: list[str]) -> str:
    """The (stripped) output of a `--version` command, its lines joined, or why there is
    none."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        return f"{command[0]}: {e}"
    return " | ".join((done.stdout or done.stderr).strip().splitlines())


@functools.cache
def tool_version(tool: str) -> str:
    """`<tool> --version`'s first line, with the tool's resolved path."""
    text = version_output([tool, "--version"]).split(" | ")[0]
    return f"{shutil.which(tool) or tool}: {text}"


@functools.cache
def cpu_description() -> str:
    """The machine and the first CPU's model and flags from /proc/cpuinfo (Linux), else the
    platform's processor name: code built with -march=native runs only there."""
    try:
        with open("/proc/cpuinfo") as f:
            lines = f.read().split("\n\n")[0].splitlines()
    except OSError:
        return f"{platform.machine()} {platform.processor()}"
    keep = ("model name", "flags", "Features", "CPU part")
    return platform.machine() + " " + "; ".join(
        line for line in lines if line.split(":")[0].strip() in keep)
