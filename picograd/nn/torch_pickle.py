"""Reading `torch.save` files without torch and without running the pickle's code.

    state = picograd.nn.state.load_torch("model.pt")     # {"conv.weight": ndarray, ...}
    model.load_state_dict(state)

Both of torch's layouts are read: the zip archive (`<name>/data.pkl` plus one raw file per
storage in `<name>/data/`, torch >= 1.6's default) and the legacy stream
(`_use_new_zipfile_serialization=False`: magic number, protocol, system info, the pickle,
the list of storage keys, then each storage as an int64 element count and its bytes).

A pickle names the callables that rebuild its objects, and an ordinary unpickler imports and
calls whatever it names (`os.system` included). This one resolves only a fixed table:
torch's tensor and parameter rebuilders, its storage classes, `collections.OrderedDict` and a
few inert builtins, each mapped to a function of this module (torch itself is never
imported). Any other global is refused, before anything is called, with a CheckpointError
naming it. Tensors come back as numpy arrays (their strides and storage offsets applied),
inside the containers (dicts, lists, tuples) the file holds.

bfloat16 storages come back as bfloat16 arrays (ml_dtypes' type, `picograd.bfloat16`'s
numpy twin), kept 16-bit as torch holds them, and float8 ones as float8 arrays;
`load_state_dict` casts them where a model's parameter has another dtype.
"""

from __future__ import annotations

import io
import os
import pickle
import struct
import sys
import zipfile
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

import ml_dtypes
import numpy as np

from picograd.errors import CheckpointError, user_location

# torch's storage class names and the numpy dtype of their elements
_STORAGE_DTYPES: dict[str, str] = {
    "FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
    "BoolStorage": "bool", "UntypedStorage": "uint8",
    "Float8_e4m3fnStorage": "float8_e4m3fn", "Float8_e5m2Storage": "float8_e5m2",
}
_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL = 1001


@dataclass(frozen=True)
class _StorageType:
    """What a storage class of torch's resolves to: the name and its element dtype."""

    name: str
    dtype: str

    @property
    def itemsize(self) -> int:
        if self.dtype.startswith("float8"):
            return 1
        return 2 if self.dtype == "bfloat16" else np.dtype(self.dtype).itemsize


@dataclass
class _Storage:
    """A storage's elements (filled in later for the legacy format)."""

    kind: _StorageType
    data: np.ndarray | None = None

    def elements(self, dtype: _StorageType) -> np.ndarray:
        assert self.data is not None
        raw = self.data.view(np.uint8)
        if dtype.dtype == "bfloat16":
            return raw.view("<u2").view(ml_dtypes.bfloat16)
        if dtype.dtype.startswith("float8"):  # kept float8, as bfloat16 is kept bf16
            return raw.view(getattr(ml_dtypes, dtype.dtype))
        return raw.view(np.dtype(dtype.dtype).newbyteorder("<"))


@dataclass(frozen=True)
class _PendingTensor:
    """A tensor of the legacy layout, whose storage's bytes follow the pickle: rebuilt once
    they are read (`_resolved`)."""

    storage: _Storage
    offset: int
    size: tuple[int, ...]
    stride: tuple[int, ...]


def _rebuild_tensor(storage: _Storage, offset: int, size: tuple[int, ...],
                    stride: tuple[int, ...], *_: Any) -> np.ndarray | _PendingTensor:
    """torch._utils._rebuild_tensor_v2 (and v1): the view of `storage` as a copied array."""
    if storage.data is None:
        return _PendingTensor(storage, offset, tuple(size), tuple(stride))
    return _strided_copy(storage, offset, tuple(size), tuple(stride))


def _rebuild_tensor_v3(storage: _Storage, offset: int, size: tuple[int, ...],
                       stride: tuple[int, ...], requires_grad: bool, hooks: Any,
                       dtype: _StorageType, *_: Any) -> np.ndarray | _PendingTensor:
    """torch._utils._rebuild_tensor_v3 (float8's): an untyped storage read as `dtype`."""
    return _rebuild_tensor(_Storage(dtype, storage.data), offset, size, stride)


def _resolved(obj: Any) -> Any:
    """`obj` with every `_PendingTensor` inside its containers rebuilt."""
    if isinstance(obj, _PendingTensor):
        return _strided_copy(obj.storage, obj.offset, obj.size, obj.stride)
    if isinstance(obj, dict):
        for key, value in obj.items():
            obj[key] = _resolved(value)
        return obj
    if isinstance(obj, list):
        obj[:] = [_resolved(v) for v in obj]
        return obj
    if isinstance(obj, tuple):
        return tuple(_resolved(v) for v in obj)
    return obj


def _strided_copy(storage: _Storage, offset: int, size: tuple[int, ...],
                  stride: tuple[int, ...]) -> np.ndarray:
    flat = storage.elements(storage.kind)
    needed = offset + sum((n - 1) * s for n, s in zip(size, stride, strict=True)) + 1
    if any(n == 0 for n in size):
        return np.zeros(size, flat.dtype)
    if offset < 0 or needed > flat.size or any(s < 0 for s in stride):
        raise CheckpointError(f"load_torch: a tensor of size {size}, stride {stride} and "
                              f"offset {offset} does not fit its storage of {flat.size} "
                              f"elements\n  at {user_location()}")
    item = flat.dtype.itemsize
    if item == 1:  # (as bytes: numpy's as_strided refuses ml_dtypes' float8_e5m2)
        view = np.lib.stride_tricks.as_strided(flat[offset:].view(np.uint8), size, stride)
        return np.array(view).view(flat.dtype)
    view = np.lib.stride_tricks.as_strided(flat[offset:], size, [s * item for s in stride])
    return np.array(view, dtype=flat.dtype.newbyteorder("="))


def _rebuild_parameter(data: np.ndarray, *_: Any) -> np.ndarray:
    """torch._utils._rebuild_parameter(_with_state): the parameter's data."""
    return data


def _rebuild_from_type(func: Callable[..., Any], new_type: Any, args: tuple[Any, ...],
                       state: Any) -> Any:
    """torch._tensor._rebuild_from_type_v2 for a Parameter or Tensor: `func` is itself one
    of the rebuilders above (the unpickler resolved it)."""
    return func(*args)


class _TensorClass:
    """torch.Tensor / torch.nn.Parameter as a subclass marker (never instantiated)."""


_SAFE: dict[tuple[str, str], Any] = {
    ("collections", "OrderedDict"): OrderedDict,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor,
    ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
    ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
    **{("torch", name): _StorageType(name, name) for name in ("float8_e4m3fn", "float8_e5m2")},
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
    ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type,
    ("torch", "Tensor"): _TensorClass,
    ("torch.nn.parameter", "Parameter"): _TensorClass,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "slice"): slice,
    **{("torch", name): _StorageType(name, dtype) for name, dtype in _STORAGE_DTYPES.items()},
    ("torch.storage", "UntypedStorage"): _StorageType("UntypedStorage", "uint8"),
}


class _RestrictedUnpickler(pickle.Unpickler):
    """An unpickler whose globals are `_SAFE` only and whose persistent ids are storages."""

    def __init__(self, file: IO[bytes], path: str,
                 storage: Callable[[tuple[Any, ...]], _Storage]):
        super().__init__(file)
        self._path = path
        self._storage = storage

    def find_class(self, module: str, name: str) -> Any:
        found = _SAFE.get((module, name))
        if found is None:
            raise CheckpointError(
                f"load_torch {self._path}: refused the global {module}.{name}: the file's "
                f"pickle would call it, and only tensors, storages and containers are rebuilt "
                f"(nothing was run)\n  at {user_location()}")
        return found

    def persistent_load(self, pid: Any) -> _Storage:
        if not isinstance(pid, tuple) or not pid or pid[0] != "storage":
            raise CheckpointError(f"load_torch {self._path}: unknown persistent id {pid!r:.80}"
                                  f"\n  at {user_location()}")
        if not isinstance(pid[1], _StorageType):
            raise CheckpointError(f"load_torch {self._path}: a storage of type {pid[1]!r:.60} "
                                  f"(no numpy dtype for it)\n  at {user_location()}")
        return self._storage(pid)


def _load_zip(path: str, archive: zipfile.ZipFile) -> Any:
    names = archive.namelist()
    pickles = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
    if not pickles:
        raise CheckpointError(f"load_torch {path}: a zip file without data.pkl (not written by "
                              f"torch.save)\n  at {user_location()}")
    prefix = pickles[0][: -len("data.pkl")]
    if f"{prefix}byteorder" in names and archive.read(f"{prefix}byteorder") != b"little":
        raise CheckpointError(f"load_torch {path}: big-endian checkpoints are not read\n"
                              f"  at {user_location()}")
    cache: dict[str, _Storage] = {}

    def storage(pid: tuple[Any, ...]) -> _Storage:
        kind, key = pid[1], str(pid[2])
        if key not in cache:
            entry = f"{prefix}data/{key}"
            if entry not in names:
                raise CheckpointError(f"load_torch {path}: storage {key} is missing from the "
                                      f"archive\n  at {user_location()}")
            raw = np.frombuffer(archive.read(entry), np.uint8)
            cache[key] = _Storage(kind, raw)
        return cache[key]

    with archive.open(pickles[0]) as f:
        return _RestrictedUnpickler(io.BytesIO(f.read()), path, storage).load()


def _load_legacy(path: str, f: IO[bytes]) -> Any:
    def plain(what: str) -> Any:
        def nothing(pid: tuple[Any, ...]) -> _Storage:
            raise CheckpointError(f"load_torch {path}: a storage inside the {what}")
        return _RestrictedUnpickler(f, path, nothing).load()

    if plain("magic number") != _LEGACY_MAGIC:
        raise CheckpointError(f"load_torch {path}: neither a zip archive nor torch's legacy "
                              f"format (no magic number)\n  at {user_location()}")
    if plain("protocol version") != _LEGACY_PROTOCOL:
        raise CheckpointError(f"load_torch {path}: unknown legacy protocol version\n"
                              f"  at {user_location()}")
    info = plain("system info")
    if isinstance(info, dict) and not info.get("little_endian", True):
        raise CheckpointError(f"load_torch {path}: big-endian checkpoints are not read\n"
                              f"  at {user_location()}")
    storages: dict[str, _Storage] = {}

    def storage(pid: tuple[Any, ...]) -> _Storage:
        fields = list(pid)  # ("storage", type, key, location, numel, view or None)
        if len(fields) > 5 and fields[5] is not None:
            raise CheckpointError(f"load_torch {path}: storage views (torch < 1.x) are not "
                                  f"read\n  at {user_location()}")
        return storages.setdefault(str(fields[2]), _Storage(fields[1]))

    result = _RestrictedUnpickler(f, path, storage).load()
    keys = plain("list of storage keys")
    for key in keys:
        entry = storages.get(str(key))
        if entry is None:
            raise CheckpointError(f"load_torch {path}: storage {key} is listed but never used"
                                  f"\n  at {user_location()}")
        header = f.read(8)
        if len(header) != 8:
            raise CheckpointError(f"load_torch {path}: the file ends before storage {key}\n"
                                  f"  at {user_location()}")
        (count,) = struct.unpack("<q", header)
        nbytes = count * entry.kind.itemsize
        data = f.read(nbytes)
        if count < 0 or len(data) != nbytes:
            raise CheckpointError(f"load_torch {path}: storage {key} is cut short\n"
                                  f"  at {user_location()}")
        entry.data = np.frombuffer(data, np.uint8)
    return _resolved(result)


def load_torch(path: str | os.PathLike[str]) -> Any:
    """What `torch.save` wrote to `path` (a state dict: names to numpy arrays), rebuilt
    without torch and without running any code the file names. CheckpointError (a
    ValueError) for a global other than tensors, storages and containers (naming it), or a
    file that is neither of torch's layouts."""
    name = os.fspath(path)
    if sys.byteorder != "little":
        raise CheckpointError("load_torch reads little-endian files on little-endian hosts")
    try:
        if zipfile.is_zipfile(name):
            with zipfile.ZipFile(name) as archive:
                return _load_zip(name, archive)
        with open(name, "rb") as f:
            return _load_legacy(name, f)
    except CheckpointError:
        raise
    except (pickle.UnpicklingError, EOFError, zipfile.BadZipFile, ValueError, TypeError,
            KeyError, IndexError, AttributeError) as e:
        raise CheckpointError(f"load_torch {name}: not a readable torch.save file ({e})\n"
                              f"  at {user_location()}") from e
