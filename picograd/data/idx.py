"""IDX files: the format of MNIST and Fashion-MNIST (http://yann.lecun.com/exdb/mnist/).

    x = read_idx("train-images-idx3-ubyte.gz")     # uint8 array of shape (60000, 28, 28)
    write_idx("labels-idx1-ubyte", y)               # gzipped when the name ends in .gz

A file is a big-endian header — two zero bytes, a type code, the number of dimensions `n`,
then `n` uint32 sizes — followed by the values, big-endian, in C order. Files may be gzipped;
`read_idx` looks at the first bytes, not the name, to tell.
"""

from __future__ import annotations

import gzip
import os
import struct

import numpy as np
import numpy.typing as npt

from picograd.errors import PicogradError

# IDX type code -> numpy dtype of the values as stored (big-endian)
IDX_DTYPES: dict[int, np.dtype] = {
    0x08: np.dtype(">u1"),
    0x09: np.dtype(">i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
_GZIP_MAGIC = b"\x1f\x8b"


class IDXFormatError(PicogradError, ValueError):
    """A file that is not a well-formed IDX file; the message names the file."""


def read_idx(path: str | os.PathLike[str]) -> np.ndarray:
    """The array stored in the IDX file `path` (raw or gzipped), in native byte order."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == _GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise IDXFormatError(f"{os.fspath(path)}: corrupt gzip data ({e})") from e
    dtype, shape, offset = _parse_header(raw, os.fspath(path))
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    found = len(raw) - offset
    if found != expected:
        raise IDXFormatError(f"{os.fspath(path)}: the header promises shape {shape} of "
                             f"{dtype.name} ({expected} bytes of data), the file holds {found}")
    values = np.frombuffer(raw, dtype=dtype, offset=offset).reshape(shape)
    return values.astype(dtype.newbyteorder("="))  # a writable copy in native order


def _parse_header(raw: bytes, name: str) -> tuple[np.dtype, tuple[int, ...], int]:
    """(stored dtype, shape, offset of the data) from the header of the IDX file `name`."""
    if len(raw) < 4:
        raise IDXFormatError(f"{name}: too short for an IDX header ({len(raw)} bytes)")
    zero, code, ndim = struct.unpack(">HBB", raw[:4])
    if zero != 0:
        raise IDXFormatError(f"{name}: bad magic {raw[:4].hex()} (an IDX file starts with two "
                             "zero bytes, a type code and the number of dimensions)")
    if code not in IDX_DTYPES:
        known = ", ".join(f"0x{c:02X}" for c in IDX_DTYPES)
        raise IDXFormatError(f"{name}: unknown IDX type code 0x{code:02X} (known: {known})")
    end = 4 + 4 * ndim
    if len(raw) < end:
        raise IDXFormatError(f"{name}: the header declares {ndim} dimensions but the file ends "
                             f"after {len(raw)} bytes")
    shape = struct.unpack(f">{ndim}I", raw[4:end])
    return IDX_DTYPES[code], shape, end


def write_idx(path: str | os.PathLike[str], array: npt.ArrayLike) -> None:
    """Write `array` as an IDX file (gzipped when `path` ends in `.gz`)."""
    array = np.asarray(array)
    codes = {dt.newbyteorder("="): code for code, dt in IDX_DTYPES.items()}
    code = codes.get(array.dtype.newbyteorder("="))
    if code is None:
        supported = ", ".join(sorted(str(dt) for dt in codes))
        raise IDXFormatError(f"{os.fspath(path)}: IDX cannot store {array.dtype} "
                             f"(supported: {supported})")
    header = struct.pack(f">HBB{array.ndim}I", 0, code, array.ndim, *array.shape)
    data = header + array.astype(IDX_DTYPES[code]).tobytes()
    if os.fspath(path).endswith(".gz"):
        data = gzip.compress(data)
    with open(path, "wb") as f:
        f.write(data)
