"""IDX files: every type code round-trips through write_idx/read_idx, raw and gzipped, and
against hand-built bytes; malformed files raise IDXFormatError naming the file."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np
import pytest

from picograd.data import IDXFormatError, read_idx, write_idx
from picograd.errors import PicogradError

DTYPES = [np.uint8, np.int8, np.int16, np.int32, np.float32, np.float64]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["a-idx3", "a-idx3.gz"])
def test_round_trip(tmp_path: Path, dtype: type, name: str) -> None:
    info = np.iinfo(dtype) if np.issubdtype(dtype, np.integer) else np.finfo(dtype)
    array = np.arange(24).astype(dtype).reshape(2, 3, 4)
    array[0, 0, 0], array[1, 2, 3] = info.min, info.max  # every byte of the value matters
    if not np.issubdtype(dtype, np.integer):
        array[0, 1] = [0.1, -1e-30, np.inf, np.nan]
    write_idx(tmp_path / name, array)
    back = read_idx(tmp_path / name)
    assert back.dtype == dtype and back.dtype.isnative
    np.testing.assert_array_equal(back, array)
    assert back.flags.writeable


def test_gzip_is_told_by_content_not_name(tmp_path: Path) -> None:
    write_idx(tmp_path / "x.gz", np.arange(5, dtype=np.uint8))
    (tmp_path / "x.gz").rename(tmp_path / "x-idx1-ubyte")
    np.testing.assert_array_equal(read_idx(tmp_path / "x-idx1-ubyte"), np.arange(5))


@pytest.mark.parametrize("compress", [False, True])
def test_reads_hand_built_big_endian_file(tmp_path: Path, compress: bool) -> None:
    values = [1, -2, 300, -40000, 7, 2**31 - 1]
    data = struct.pack(">HBBII", 0, 0x0C, 2, 2, 3) + struct.pack(">6i", *values)
    path = tmp_path / "h.idx"
    path.write_bytes(gzip.compress(data) if compress else data)
    np.testing.assert_array_equal(read_idx(path), np.array(values, np.int32).reshape(2, 3))


def test_scalar_and_empty(tmp_path: Path) -> None:
    write_idx(tmp_path / "s", np.float32(2.5))
    assert read_idx(tmp_path / "s").shape == ()
    write_idx(tmp_path / "e", np.zeros((0, 4), np.int16))
    assert read_idx(tmp_path / "e").shape == (0, 4)


@pytest.mark.parametrize(("data", "message"), [
    (b"\x00", "too short"),
    (b"\x01\x00\x08\x01\x00\x00\x00\x01\x05", "bad magic"),
    (b"\x00\x00\x07\x01\x00\x00\x00\x01\x05", "unknown IDX type code 0x07"),
    (b"\x00\x00\x08\x03\x00\x00\x00\x01", "declares 3 dimensions"),
    (b"\x00\x00\x08\x01\x00\x00\x00\x03\x05\x06", "holds 2"),
    (b"\x00\x00\x0d\x01\x00\x00\x00\x01\x05\x06\x07\x08\x09", "holds 5"),
    (b"\x1f\x8b\x08\x00garbage", "corrupt gzip"),
])
def test_malformed_files_name_the_file(tmp_path: Path, data: bytes, message: str) -> None:
    path = tmp_path / "broken-idx1-ubyte"
    path.write_bytes(data)
    with pytest.raises(IDXFormatError, match=message) as info:
        read_idx(path)
    assert str(path) in str(info.value)
    assert isinstance(info.value, PicogradError | ValueError)


def test_truncated_gzipped_file(tmp_path: Path) -> None:
    write_idx(tmp_path / "t.gz", np.arange(1000, dtype=np.int32))
    data = (tmp_path / "t.gz").read_bytes()
    (tmp_path / "t.gz").write_bytes(data[:len(data) // 2])
    with pytest.raises(IDXFormatError, match=r"t\.gz"):
        read_idx(tmp_path / "t.gz")


def test_missing_file_is_a_file_not_found_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_idx(tmp_path / "nope")


def test_write_rejects_unsupported_dtypes(tmp_path: Path) -> None:
    with pytest.raises(IDXFormatError, match="cannot store int64"):
        write_idx(tmp_path / "x", np.arange(3, dtype=np.int64))
