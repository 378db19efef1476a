"""Saving tensors and training checkpoints as safetensors files.

    save_safetensors(model.state_dict(), "model.safetensors")        # loads in torch as well
    model.load_state_dict(load_safetensors("model.safetensors"))

    save_checkpoint("run.safetensors", model, optimizer, epoch=3)    # everything to resume
    extra = load_checkpoint("run.safetensors", model, optimizer)     # {"epoch": 3}
    model.load_state_dict(load_torch("model.pt"))   # torch.save's files, no code run
                                                    # (picograd/nn/torch_pickle.py)

A checkpoint is one safetensors file holding
  - `model.<name>`: the model's state dict;
  - `optim.<i>.<state>`: the optimizer's state of its i-th parameter (`optim.0.exp_avg`);
and, in the file's string metadata, `picograd.format`, the optimizer's class, step count and
hyper-parameters (`optim.type`, `optim.steps`, `optim.hparams` as JSON: lr, betas, ...) and
each extra value as `extra.<name>` (JSON). Loading it into a fresh model and optimizer of
the same architecture resumes training exactly: the next steps give the same values, bit for
bit, as an uninterrupted run. Learning-rate schedulers and the dropout generator are not
saved: pass what they need (e.g. `last_epoch`) as extra values.

Loading checks the whole file before it changes anything (see `load_checkpoint`); a bad
file is a `CheckpointError` (or `StateDictError` for missing, unexpected or mis-shaped
tensors) naming the file and the entry, and model and optimizer stay as they were.
"""

from __future__ import annotations

import json
import math
import mmap
import os
import stat
from collections.abc import Mapping
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt
from safetensors import SafetensorError
from safetensors.numpy import save_file

from picograd.errors import CheckpointError, user_location
from picograd.frontend.tensor import Tensor
from picograd.nn.module import Module, StateDictError
from picograd.nn.torch_pickle import load_torch as load_torch  # re-exported
from picograd.optim import Optimizer

FORMAT = "picograd-checkpoint-1"


# ── plain safetensors ───────────────────────────────────────────────────────


def save_safetensors(state: Mapping[str, Tensor | npt.ArrayLike], path: str | os.PathLike[str],
                     metadata: Mapping[str, str] | None = None) -> None:
    """Write tensors (realized) or arrays by name to `path`, with optional string metadata.
    The file is written next to `path` and renamed over it, so a crash leaves no half file."""
    arrays = {name: _host_array(value) for name, value in state.items()}
    pairs: list[tuple[object, object]] = list((metadata or {}).items())
    bad = [k for k, v in pairs if not isinstance(k, str) or not isinstance(v, str)]
    if bad:
        raise CheckpointError(f"{os.fspath(path)}: safetensors metadata must map str to str; "
                              f"not so for {bad}")
    tmp = f"{os.fspath(path)}.tmp"
    try:
        save_file(arrays, tmp, metadata={str(k): str(v) for k, v in pairs} or None)
        os.replace(tmp, path)
    except SafetensorError as e:  # e.g. a dtype safetensors has no code for
        raise CheckpointError(f"{os.fspath(path)}: cannot save ({e})") from e
    finally:
        if os.path.exists(tmp):  # save_file failed
            os.remove(tmp)


def _host_array(value: Tensor | npt.ArrayLike) -> np.ndarray:
    array = value.numpy() if isinstance(value, Tensor) else np.asarray(value)
    # safetensors writes the raw buffer: a strided view would be saved scrambled
    return array if array.flags.c_contiguous else array.copy(order="C")


# safetensors' dtype codes that numpy holds (all little-endian in the file)
# (BF16 and F8 as ml_dtypes' bfloat16 and float8 types, picograd.bfloat16's and float8's
# numpy twins: kept as the file's bits, not widened)
_NUMPY_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4",
                 "I16": "<i2", "I8": "i1", "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "u1",
                 "BOOL": "?", "BF16": ml_dtypes.bfloat16, "F8_E4M3": ml_dtypes.float8_e4m3fn,
                 "F8_E5M2": ml_dtypes.float8_e5m2}


def _error(path: str, message: str) -> CheckpointError:
    """A CheckpointError naming `path`, ending with the user's source line."""
    return CheckpointError(f"{path}: {message}\n  at {user_location()}")


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"))


def _kind(mode: int) -> str:
    """What a file of mode `mode` that is not a regular file is ("a FIFO (named pipe)")."""
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def _open_failure(path: str, error: OSError) -> str:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = stat.S_IFREG
    if stat.S_ISREG(mode):
        return f"cannot be opened: {error.strerror}"
    return f"is {_kind(mode)}, not a safetensors file"


def _map(path: str) -> mmap.mmap:
    """`path` mapped read-only. A path that is not a regular file (a FIFO, a directory, a
    socket, a device) or cannot be opened (a symbolic link loop) is a CheckpointError at once:
    the open never waits for a FIFO's writer, and the descriptor is always closed. A missing
    file is a FileNotFoundError."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise
    except OSError as e:  # a socket (ENXIO), a symbolic link loop (ELOOP), no permission
        raise _error(path, _open_failure(path, e)) from e
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _error(path, f"is {_kind(info.st_mode)}, not a safetensors file")
        if info.st_size == 0:
            raise _error(path, "not a readable safetensors file (it is empty)")
        return mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    except OSError as e:
        raise _error(path, f"cannot be read: {e}") from e
    finally:
        os.close(fd)


def _read(path: str, arrays: bool = True) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The tensors (when `arrays`) and the string metadata of the safetensors file `path`."""
    mapped = _map(path)
    try:
        header, data = _header(mapped)
        metadata = _metadata(header.pop("__metadata__", {}))
        return ({key: _array(mapped, data, key, info) for key, info in header.items()}
                if arrays else {}), metadata
    except (ValueError, KeyError, TypeError) as e:
        raise _error(path, f"not a readable safetensors file ({e})") from e


def load_safetensors(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """The arrays stored in the safetensors file `path`, by name: read-only views of the
    file, memory-mapped, so nothing is read before it is used and `load_state_dict` copies
    each tensor once, from the page cache into the parameter. Copy an array to change it.
    BF16 tensors come as bfloat16 arrays (ml_dtypes' type, `picograd.bfloat16`'s twin: kept
    16-bit, mapped like the others), F8_E4M3 and F8_E5M2 as float8 arrays (the twins of
    `picograd.float8_e4m3fn` / `float8_e5m2`: the file's bytes, mapped); other dtypes numpy
    cannot hold, a path that is not a regular file (a FIFO, a directory) and a broken file raise
    `CheckpointError` naming the file (and the tensor)."""
    return _read(os.fspath(path))[0]


def _header(mapped: mmap.mmap) -> tuple[dict[str, Any], int]:
    """The JSON header of a mapped safetensors file (an 8-byte little-endian header length,
    the header, then the data) and where its data begins; ValueError when it is broken."""
    if len(mapped) < 8:
        raise ValueError("shorter than the 8-byte header length")
    length = int.from_bytes(mapped[:8], "little")
    if 8 + length > len(mapped):
        raise ValueError(f"a header of {length} bytes runs past the end of the file")
    header = json.loads(bytes(mapped[8:8 + length]))
    if not isinstance(header, dict):
        raise ValueError("the header is not a JSON object")
    return header, 8 + length


def _metadata(metadata: object) -> dict[str, str]:
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise ValueError(f"__metadata__ is not a map of strings to strings: {metadata!r:.80}")
    return metadata


def _array(mapped: mmap.mmap, data: int, key: str, info: Any) -> np.ndarray:
    """Tensor `key` of the file (described by `info`, its header entry) as a view of it, or
    ValueError naming the tensor."""
    code = info["dtype"]
    if code not in _NUMPY_DTYPES:
        raise ValueError(f"tensor {key!r} has dtype {code}, which picograd cannot read "
                         f"(it reads {', '.join(_NUMPY_DTYPES)})")
    dtype = np.dtype(_NUMPY_DTYPES[code])
    shape = tuple(int(d) for d in info["shape"])
    begin, end = (int(x) for x in info["data_offsets"])
    count = math.prod(shape)
    if not 0 <= begin <= end <= len(mapped) - data or end - begin != count * dtype.itemsize:
        raise ValueError(f"tensor {key!r}: data_offsets [{begin}, {end}) do not hold "
                         f"{count} {code} elements inside the file")
    return np.frombuffer(mapped, dtype, count, data + begin).reshape(shape)


def safetensors_metadata(path: str | os.PathLike[str]) -> dict[str, str]:
    """The string metadata of the safetensors file `path` (empty if it has none)."""
    return _read(os.fspath(path), arrays=False)[1]


# ── checkpoints ─────────────────────────────────────────────────────────────


def save_checkpoint(path: str | os.PathLike[str], model: Module,
                    optimizer: Optimizer | None = None, **extra: Any) -> None:
    """Save the model's state dict, the optimizer's state (if given) and JSON-able `extra`
    values (epoch=..., best_accuracy=...) to one safetensors file."""
    tensors: dict[str, Tensor | npt.ArrayLike] = {
        f"model.{name}": t for name, t in model.state_dict().items()}
    metadata = {"picograd.format": FORMAT}
    if optimizer is not None:
        for i, p in enumerate(optimizer.params):
            for name, t in optimizer.state.get(id(p), {}).items():
                tensors[f"optim.{i}.{name}"] = t
        groups = [{k: v for k, v in g.items() if k != "params"} for g in optimizer.param_groups]
        metadata |= {"optim.type": type(optimizer).__name__, "optim.steps": str(optimizer.steps),
                     "optim.hparams": _to_json(path, "optimizer hyper-parameters", groups[0])}
        if len(groups) > 1:  # the other groups' hyper-parameters, in order
            metadata["optim.group_hparams"] = _to_json(path, "optimizer hyper-parameters",
                                                       groups[1:])
    for name, value in extra.items():
        metadata[f"extra.{name}"] = _to_json(path, f"extra value {name!r}", value)
    save_safetensors(tensors, path, metadata)


def _to_json(path: str | os.PathLike[str], what: str, value: Any) -> str:
    try:
        return json.dumps(value)
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"{os.fspath(path)}: cannot store the {what} ({e}); "
                              "checkpoints hold JSON values (numbers, strings, lists)") from e


def load_checkpoint(path: str | os.PathLike[str], model: Module,
                    optimizer: Optimizer | None = None) -> dict[str, Any]:
    """Load a checkpoint written by `save_checkpoint` into `model` (strictly: every name
    and shape must match) and, if given, `optimizer`; returns the extra values.

    The whole file is checked before anything is changed: tensor names, shapes and dtypes
    (floats load into floats, integers into integers that hold them), the optimizer's type,
    hyper-parameters (names, types, ranges), step count and state (every name known, a
    parameter's state complete), and each extra value's JSON. On an error (`StateDictError`
    for missing, unexpected or mis-shaped tensors, `CheckpointError` for the rest, both
    naming the file and the entry) model and optimizer are exactly as they were."""
    name = os.fspath(path)
    arrays, metadata = _read(name)
    if metadata.get("picograd.format") != FORMAT:
        raise _error(name, f"not a picograd checkpoint (metadata picograd.format is "
                           f"{metadata.get('picograd.format')!r}, expected {FORMAT!r}); use "
                           "load_safetensors for plain files")
    extra = _extra_values(name, metadata)
    strays = [k for k in arrays if not k.startswith(("model.", "optim."))]
    if strays:
        raise _error(name, f"entries that are neither model.* nor optim.*: {', '.join(strays)}")
    weights = {k.removeprefix("model."): v for k, v in arrays.items() if k.startswith("model.")}
    own = model.state_dict()
    _check_dtypes(name, {f"model.{k}": (v, own[k]) for k, v in weights.items() if k in own})
    loaded = None
    if optimizer is not None:
        optim = {k.removeprefix("optim."): v for k, v in arrays.items() if k.startswith("optim.")}
        loaded = _optimizer_checkpoint(name, optimizer, optim, metadata)
    model.load_state_dict(weights)  # checks every name and shape before it changes anything
    if optimizer is not None and loaded is not None:
        all_hparams, optimizer.state, optimizer.steps = loaded
        for group, hparams in zip(optimizer.param_groups, all_hparams, strict=True):
            # JSON turned tuples (Adam's betas) into lists
            group.update({k: tuple(v) if isinstance(group.get(k), tuple) else v
                          for k, v in hparams.items()})
    return extra


def _extra_values(path: str, metadata: dict[str, str]) -> dict[str, Any]:
    """The `extra.<name>` values, decoded; CheckpointError listing every one that is not JSON."""
    extra: dict[str, Any] = {}
    problems: list[str] = []
    for key, text in metadata.items():
        if key.startswith("extra."):
            try:
                extra[key.removeprefix("extra.")] = json.loads(text)
            except json.JSONDecodeError as e:
                problems.append(f"{key} is not JSON ({e}): {text!r:.60}")
    if problems:
        raise _error(path, "; ".join(problems))
    return extra


def _dtype_problem(array: np.ndarray, target: np.dtype) -> str | None:
    """Why `array` cannot be loaded into a tensor of dtype `target`, or None: floats load
    into floats (rounded, as torch's `copy_`), integers into integers that hold every value
    (picograd's int32 `num_batches_tracked` takes torch's int64), bool into bool."""
    # ml_dtypes' bfloat16 is numpy kind "V": a float here
    kind, want = (("f" if d.kind == "V" else d.kind) for d in (array.dtype, target))
    if kind == want == "f" or kind == want == "b":
        return None
    if kind in "iu" and want in "iu":
        low, high = (int(array.min()), int(array.max())) if array.size else (0, 0)
        info = np.iinfo(target)
        return (None if info.min <= low and high <= info.max
                else f"values in [{low}, {high}] do not fit {target}")
    return f"dtype {array.dtype} cannot be loaded into a {target} tensor"


def _check_dtypes(path: str, pairs: Mapping[str, tuple[np.ndarray, Tensor]]) -> None:
    """CheckpointError listing every entry whose array cannot be loaded into its tensor."""
    problems = [f"{key}: {problem}" for key, (array, tensor) in pairs.items()
                if (problem := _dtype_problem(array, tensor.dtype.np)) is not None]
    if problems:
        raise _error(path, "; ".join(problems))


def _optimizer_checkpoint(path: str, optimizer: Optimizer, arrays: dict[str, np.ndarray],
                          metadata: dict[str, str]
                          ) -> tuple[list[dict[str, Any]], dict[int, dict[str, Tensor]], int]:
    """The saved hyper-parameters (one dict per parameter group), state (keyed as
    `optimizer.state` is: by the id of the optimizer's i-th parameter) and step count, all
    checked against `optimizer`."""
    kind = metadata.get("optim.type")
    if kind is None:
        raise _error(path, "the checkpoint holds no optimizer state")
    if kind != type(optimizer).__name__:
        raise _error(path, f"the checkpoint holds {kind} state, the optimizer is "
                           f"{type(optimizer).__name__}")
    problems: list[str] = []
    steps = metadata.get("optim.steps", "")
    if not steps.isascii() or not steps.isdigit():  # no sign, blanks or underscores
        problems.append(f"optim.steps is {steps!r}, expected a count of steps (an int >= 0)")
    hparams: Any = None
    try:
        hparams = json.loads(metadata.get("optim.hparams", "null"))
    except json.JSONDecodeError as e:
        problems.append(f"optim.hparams is not JSON ({e}): {metadata['optim.hparams']!r:.60}")
    else:
        problems += [f"optim.hparams: {p}" for p in optimizer.hparam_problems(hparams)]
    others = _other_groups(optimizer, metadata, problems)
    if problems:
        raise _error(path, "; ".join(problems))
    return [hparams, *others], _optimizer_state(path, optimizer, arrays), int(steps)


def _other_groups(optimizer: Optimizer, metadata: dict[str, str], problems: list[str]
                  ) -> list[dict[str, Any]]:
    """The hyper-parameters of parameter groups 1.. (`optim.group_hparams`), checked; their
    problems are appended to `problems`."""
    want = len(optimizer.param_groups) - 1
    text = metadata.get("optim.group_hparams")
    if text is None:
        if want:
            problems.append(f"the optimizer has {want + 1} parameter groups, the checkpoint "
                            f"the hyper-parameters of one")
        return []
    try:
        groups = json.loads(text)
    except json.JSONDecodeError as e:
        problems.append(f"optim.group_hparams is not JSON ({e}): {text!r:.60}")
        return []
    if not isinstance(groups, list) or len(groups) != want:
        count = len(groups) if isinstance(groups, list) else "no list of"
        problems.append(f"optim.group_hparams holds {count} groups, the optimizer has {want} "
                        f"besides the first")
        return []
    for i, hparams in enumerate(groups, start=1):
        problems += [f"optim.group_hparams[{i}]: {p}" for p in optimizer.hparam_problems(hparams)]
    return groups


def _optimizer_state(path: str, optimizer: Optimizer, arrays: dict[str, np.ndarray]
                     ) -> dict[int, dict[str, Tensor]]:
    """The `optim.<i>.<name>` arrays as `optimizer.state`. StateDictError for a parameter
    index, state name or shape the optimizer does not have, or a parameter's state with
    some of its names missing; CheckpointError for a dtype its parameter cannot take."""
    params, names = optimizer.params, optimizer.state_names
    found: dict[int, dict[str, np.ndarray]] = {}
    problems: list[str] = []
    for key, array in arrays.items():
        index, _, name = key.partition(".")
        if not index.isascii() or not index.isdigit() or int(index) >= len(params):
            problems.append(f"optim.{key}: no parameter {index} among {len(params)}")
        elif name not in names:
            problems.append(f"optim.{key}: unknown state {name!r} ("
                            f"{type(optimizer).__name__} keeps {', '.join(names) or 'none'})")
        elif array.shape != params[int(index)].shape:
            problems.append(f"optim.{key}: checkpoint {array.shape}, parameter "
                            f"{params[int(index)].shape}")
        else:
            found.setdefault(int(index), {})[name] = array
    problems += [f"optim.{i}: missing state {', '.join(n for n in names if n not in state)}"
                 for i, state in sorted(found.items()) if state.keys() != set(names)]
    if problems:
        raise StateDictError(f"load_checkpoint {path} into {type(optimizer).__name__}: "
                             + "; ".join(problems) + f"\n  at {user_location()}")
    _check_dtypes(path, {f"optim.{i}.{n}": (a, params[i])
                         for i, state in found.items() for n, a in state.items()})
    return {id(params[i]): {n: Tensor(a, dtype=params[i].dtype, device=params[i].device)
                            for n, a in state.items()} for i, state in found.items()}
