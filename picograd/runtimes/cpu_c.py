"""CPU runtime through C: the system C compiler builds the kernels' C source into a shared
library, loaded with ctypes.

    $CC -O2 -shared -fPIC -std=c11 -march=native -fno-tree-slp-vectorize -o kernels.so kernels.c -lm

`CC` defaults to `cc`. The source goes to a fresh temporary directory; on success the
directory is removed once the library is loaded (the mapping outlives the file), on failure
it is kept and `CompileError` names the source file and carries the compiler's message.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import tempfile

from picograd.errors import CompileError, DeviceError
from picograd.runtimes.base import HostRuntime, Kernel, Launch

# -fno-tree-slp-vectorize: GCC 12's SLP vectoriser (with -march=native, F16C) folds the
# rounding `float -> _Float16 -> float` into the identity (2049.0 stays 2049.0 instead of
# rounding to 2048.0); loop vectorisation is kept.
C_FLAGS = ("-O2", "-shared", "-fPIC", "-std=c11", "-march=native", "-fno-tree-slp-vectorize")


class CpuCRuntime(HostRuntime[ctypes.CDLL]):
    renderer = "c"

    def __init__(self, compiler: str | None = None):
        self.compiler = compiler or os.environ.get("CC", "cc")

    def compile(self, source: str) -> ctypes.CDLL:
        workdir = tempfile.mkdtemp(prefix="picograd-c-")
        src = os.path.join(workdir, "kernels.c")
        lib = os.path.join(workdir, "kernels.so")
        with open(src, "w") as f:
            f.write(source)
        command = [self.compiler, *C_FLAGS, "-o", lib, src, "-lm"]
        try:
            done = subprocess.run(command, capture_output=True, text=True, check=False)
        except OSError as e:
            raise CompileError(f"cannot run the C compiler {self.compiler!r}: {e}",
                               source_path=src) from e
        if done.returncode != 0:
            raise CompileError(f"{' '.join(command)} failed with exit status {done.returncode}",
                               log=done.stderr, source_path=src)
        library = ctypes.CDLL(lib)
        shutil.rmtree(workdir, ignore_errors=True)
        return library

    def load(self, binary: ctypes.CDLL, name: str, num_args: int, launch: Launch | None = None
             ) -> Kernel:
        try:
            symbol = getattr(binary, name)
        except AttributeError:
            raise DeviceError(f"no kernel {name!r} in the compiled C library") from None
        address = ctypes.cast(symbol, ctypes.c_void_p).value
        assert address is not None
        return ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * num_args)(address)
