"""CPU runtime through C: the system C compiler builds the kernels' C source into shared
libraries, loaded with ctypes.

    $CC -O2 -shared -fPIC -std=c11 -march=native [-fno-tree-slp-vectorize] -o uN.so uN.c -lm

`CC` defaults to clang when it is installed, else `cc` (`picograd.flags.c_compiler`). A
source with several kernels is cut into translation units (the `#include` prelude plus a
contiguous share of the kernels: one unit per idle core, at most
`jobs`, at least `MIN_KERNELS_PER_UNIT` kernels each), compiled by that many compiler
processes at once and loaded as one library each (`CLibraries`). The libraries of a source
are kept together in the disk cache (`picograd/disk_store.py`) under the source
text, the compiler, its version, the flags and the host CPU, so a warm compile runs no
compiler, whatever split the cold compile chose.

A loaded kernel is called through `picograd/runtimes/parallel.py`: one call with its
trailing `(start, end)`, or chunks of its outer range on a thread pool when the source exports
`{name}_pg_outer` (a splittable kernel) and its work is large.

The sources go to a fresh temporary directory (`$TMPDIR/picograd-c-*`), removed once the
libraries are loaded (the mappings outlive the files) and on any exception
(KeyboardInterrupt included). A failed compile keeps the unit's source in a
`picograd-failed-*.c` file that `CompileError` names, with the compiler's message. A process
killed mid-compile (SIGTERM, SIGKILL) cannot clean up: every compile directory is `flock`ed
by its process while in use, and the first CPU:C runtime of a later process removes those
that no live process holds (`sweep_stale_workdirs`; the kernel drops a dead process's locks).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import itertools
import os
import re
import shutil
import struct
import subprocess
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from picograd import disk_store, flags
from picograd.dialects.abi import outer_symbol
from picograd.dialects.capabilities import host_cpus
from picograd.errors import CompileError, DeviceError
from picograd.runtimes import parallel
from picograd.runtimes.base import HostRuntime, Kernel, Launch, write_failed_source
from picograd.runtimes.toolchain import cpu_description, tool_version

C_FLAGS = ("-O2", "-shared", "-fPIC", "-std=c11", "-march=native")
# GCC 12's SLP vectoriser (with -march=native, F16C) folds the rounding
# `float -> _Float16 -> float` into the identity (2049.0 stays 2049.0 instead of rounding to
# 2048.0): it is turned off for units that use float16. Elsewhere it turns the register
# tiles of `loop-optimize` into vector code (loop vectorisation stays on everywhere).
F16_FLAGS = ("-fno-tree-slp-vectorize",)


def unit_flags(unit: str) -> tuple[str, ...]:
    """The compiler flags for one C unit: `C_FLAGS`, plus `F16_FLAGS` if it uses float16."""
    return C_FLAGS + F16_FLAGS if "_Float16" in unit else C_FLAGS


WORKDIR_PREFIX = "picograd-c-"
# A compile directory is locked a moment after it is made: a sweep leaves younger ones alone.
STALE_AFTER_S = 60.0


@contextlib.contextmanager
def workdir() -> Iterator[str]:
    """A fresh directory to compile in, `flock`ed while in use and removed afterwards,
    whatever is raised."""
    path = tempfile.mkdtemp(prefix=WORKDIR_PREFIX)
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
        os.close(fd)


def sweep_stale_workdirs(root: str | None = None, min_age_s: float = STALE_AFTER_S) -> int:
    """Remove the compile directories under `root` (the temporary directory) that killed
    processes left: unlocked, and unchanged for `min_age_s`. Returns how many went."""
    root = root if root is not None else tempfile.gettempdir()
    try:
        names = [n for n in os.listdir(root) if n.startswith(WORKDIR_PREFIX)]
    except OSError:
        return 0
    removed = 0
    for name in names:
        path = os.path.join(root, name)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:  # gone already, or not a directory of ours
            continue
        try:
            if os.fstat(fd).st_mtime > time.time() - min_age_s:
                continue
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held by a live compile: OSError
            shutil.rmtree(path, ignore_errors=True)
            removed += 1
        except OSError:
            continue
        finally:
            os.close(fd)
    return removed


MIN_KERNELS_PER_UNIT = 4
# A kernel definition as `module_to_c` prints it: at column 0, alone on its line.
_KERNEL_START = re.compile(r"^void [A-Za-z_]\w*\(.*\) \{$")


def split_units(source: str, parts: int) -> list[str]:
    """`source` as at most `parts` translation units, each the prelude (what precedes the
    first kernel) and a contiguous share of the kernels. One unit if the source has anything
    but kernels after the prelude (a helper one kernel may need) or has no kernels."""
    lines = source.split("\n")
    starts = [i for i, line in enumerate(lines) if _KERNEL_START.match(line)]
    if parts <= 1 or len(starts) <= 1:
        return [source]
    body = lines[starts[0]:]
    if any(line and not line[0].isspace() and line != "}" and not _KERNEL_START.match(line)
           for line in body):
        return [source]
    prelude = "\n".join(lines[:starts[0]])
    kernels = ["\n".join(lines[a:b]) for a, b in zip(starts, [*starts[1:], len(lines)],
                                                       strict=True)]
    parts = min(parts, len(kernels))
    share, extra = divmod(len(kernels), parts)
    units, at = [], 0
    for i in range(parts):
        n = share + (i < extra)
        units.append("\n".join([prelude, *kernels[at:at + n]]))
        at += n
    return units


_COUNT, _LENGTH = struct.Struct("<I"), struct.Struct("<Q")


def pack_libraries(paths: list[str]) -> bytes:
    """The libraries at `paths` as one disk cache payload: count, lengths, contents."""
    contents = []
    for path in paths:
        with open(path, "rb") as f:
            contents.append(f.read())
    return b"".join([_COUNT.pack(len(contents)), *(_LENGTH.pack(len(c)) for c in contents),
                     *contents])


def unpack_libraries(payload: bytes) -> list[bytes] | None:
    """The libraries of a `pack_libraries` payload, or None if it does not add up."""
    if len(payload) < _COUNT.size:
        return None
    (count,) = _COUNT.unpack_from(payload)
    at = _COUNT.size + count * _LENGTH.size
    if count == 0 or len(payload) < at:
        return None
    lengths = [_LENGTH.unpack_from(payload, _COUNT.size + i * _LENGTH.size)[0]
               for i in range(count)]
    if at + sum(lengths) != len(payload):
        return None
    libraries = []
    for length in lengths:
        libraries.append(payload[at:at + length])
        at += length
    return libraries


@dataclass(frozen=True)
class CLibraries:
    """The loaded libraries of one compile; alive (mapped) as long as this object is."""

    libraries: tuple[ctypes.CDLL, ...]

    def symbol(self, name: str) -> Any:
        for library in self.libraries:
            try:
                return getattr(library, name)
            except AttributeError:
                continue
        return None


class CpuCRuntime(HostRuntime[CLibraries]):
    renderer = "c"

    def __init__(self, compiler: str | None = None, jobs: int | None = None):
        self.compiler = compiler or flags.c_compiler()
        self.jobs = jobs if jobs is not None else host_cpus()
        sweep_stale_workdirs()

    def _parts(self, source: str) -> int:
        """How many translation units to cut `source` into: one per idle core (at most
        `jobs`), with at least `MIN_KERNELS_PER_UNIT` kernels each. On a busy machine an
        extra unit only adds the compiler's start-up and header parsing (~50 ms of CPU)."""
        kernels = sum(1 for line in source.split("\n") if _KERNEL_START.match(line))
        try:
            idle = host_cpus() - os.getloadavg()[0]  # the CPUs this process may use
        except OSError:
            idle = 1.0
        return max(1, min(self.jobs, int(idle + 0.5), kernels // MIN_KERNELS_PER_UNIT))

    def toolchain_fingerprint(self) -> str:
        return f"{tool_version(self.compiler)} {cpu_description()}"

    def _key(self, source: str) -> str | None:
        if not disk_store.enabled():
            return None
        return disk_store.key_text("c-libraries", source, self.compiler, unit_flags(source),
                                   self.toolchain_fingerprint(), disk_store.picograd_version())

    def _build(self, workdir: str, index: int, unit: str) -> str:
        """Compile unit `index`; the path of its library."""
        src = os.path.join(workdir, f"u{index}.c")
        lib = os.path.join(workdir, f"u{index}.so")
        with open(src, "w") as f:
            f.write(unit)
        command = [self.compiler, *unit_flags(unit), "-o", lib, src, "-lm"]
        try:
            done = subprocess.run(command, capture_output=True, text=True, check=False)
        except OSError as e:
            raise CompileError(f"cannot run the C compiler {self.compiler!r}: {e}",
                               source_path=src) from e
        if done.returncode != 0:  # the work directory goes: keep the source elsewhere
            kept = write_failed_source(unit, ".c")
            command[command.index(src)] = kept
            raise CompileError(f"{' '.join(command)} failed with exit status {done.returncode}",
                               log=done.stderr, source_path=kept)
        return lib

    def compile(self, source: str) -> CLibraries:
        """The libraries of `source`: from the disk cache (all units of one source are one
        entry, so how a cold compile split it does not matter), else compiled."""
        key = self._key(source)
        cached = disk_store.read(disk_store.KERNELS, key) if key else None
        libraries = unpack_libraries(cached) if cached is not None else None
        with workdir() as where:
            if libraries is not None:
                paths = [os.path.join(where, f"u{i}.so") for i in range(len(libraries))]
                for path, library in zip(paths, libraries, strict=True):
                    with open(path, "wb") as f:
                        f.write(library)
            else:
                units = split_units(source, self._parts(source))
                if len(units) == 1:
                    paths = [self._build(where, 0, units[0])]
                else:  # the compilers run as processes: threads only wait for them
                    with ThreadPoolExecutor(max_workers=len(units)) as pool:
                        paths = list(pool.map(self._build, itertools.repeat(where),
                                              range(len(units)), units))
                if key:
                    disk_store.write(disk_store.KERNELS, key, pack_libraries(paths))
            return CLibraries(tuple(ctypes.CDLL(path) for path in paths))

    def load(self, binary: CLibraries, name: str, num_args: int, launch: Launch | None = None
             ) -> Kernel:
        symbol = binary.symbol(name)
        if symbol is None:
            raise DeviceError(f"no kernel {name!r} in the compiled C library")
        address = ctypes.cast(symbol, ctypes.c_void_p).value
        assert address is not None
        outer = binary.symbol(outer_symbol(name))  # exported by a kernel that may be split
        outer_address = ctypes.cast(outer, ctypes.c_void_p).value if outer is not None else None
        return parallel.c_kernel(address, num_args, parallel.read_outer(outer_address))
