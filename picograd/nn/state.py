"""Saving tensors and training checkpoints as safetensors files.

    save_safetensors(model.state_dict(), "model.safetensors")        # loads in torch as well
    model.load_state_dict(load_safetensors("model.safetensors"))

    save_checkpoint("run.safetensors", model, optimizer, epoch=3)    # everything to resume
    extra = load_checkpoint("run.safetensors", model, optimizer)     # {"epoch": 3}

A checkpoint is one safetensors file holding
  - `model.<name>`: the model's state dict;
  - `optim.<i>.<state>`: the optimizer's state of its i-th parameter (`optim.0.exp_avg`);
and, in the file's string metadata, `picograd.format`, the optimizer's class, step count and
hyper-parameters (`optim.type`, `optim.steps`, `optim.hparams` as JSON: lr, betas, ...) and
each extra value as `extra.<name>` (JSON). Loading it into a fresh model and optimizer of
the same architecture resumes training exactly: the next steps give the same values, bit for
bit, as an uninterrupted run. Learning-rate schedulers and the dropout generator are not
saved: pass what they need (e.g. `last_epoch`) as extra values.
"""

from __future__ import annotations

import json
import math
import mmap
import os
from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt
from safetensors import SafetensorError, safe_open
from safetensors.numpy import save_file

from picograd.errors import PicogradError
from picograd.frontend.tensor import Tensor
from picograd.nn.module import Module, StateDictError
from picograd.optim import Optimizer

FORMAT = "picograd-checkpoint-1"


class CheckpointError(PicogradError, ValueError):
    """A file that is not a (matching) safetensors file or picograd checkpoint; the message
    names the file."""


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
_NUMPY_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4",
                 "I16": "<i2", "I8": "i1", "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "u1",
                 "BOOL": "?"}


def load_safetensors(path: str | os.PathLike[str]) -> dict[str, np.ndarray]:
    """The arrays stored in the safetensors file `path`, by name: read-only views of the
    file, memory-mapped, so nothing is read before it is used and `load_state_dict` copies
    each tensor once, from the page cache into the parameter. Copy an array to change it."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        return _mapped_arrays(mapped)
    except (OSError, ValueError, KeyError, TypeError) as e:  # mmap of an empty file: ValueError
        raise CheckpointError(f"{name}: not a readable safetensors file ({e})") from e


def _mapped_arrays(mapped: mmap.mmap) -> dict[str, np.ndarray]:
    """The tensors of a mapped safetensors file (an 8-byte little-endian header length, the
    JSON header, then the data), as views of it; ValueError when the layout is broken."""
    if len(mapped) < 8:
        raise ValueError("shorter than the 8-byte header length")
    length = int.from_bytes(mapped[:8], "little")
    if 8 + length > len(mapped):
        raise ValueError(f"a header of {length} bytes runs past the end of the file")
    header = json.loads(bytes(mapped[8:8 + length]))
    if not isinstance(header, dict):
        raise ValueError("the header is not a JSON object")
    data = 8 + length
    arrays: dict[str, np.ndarray] = {}
    for key, info in header.items():
        if key == "__metadata__":
            continue
        code = info["dtype"]
        if code not in _NUMPY_DTYPES:
            raise ValueError(f"tensor {key!r} has dtype {code}, which numpy cannot hold")
        dtype = np.dtype(_NUMPY_DTYPES[code])
        shape = tuple(int(d) for d in info["shape"])
        begin, end = (int(x) for x in info["data_offsets"])
        count = math.prod(shape)
        if not 0 <= begin <= end <= len(mapped) - data or end - begin != count * dtype.itemsize:
            raise ValueError(f"tensor {key!r}: data_offsets [{begin}, {end}) do not hold "
                             f"{count} {dtype} elements inside the file")
        arrays[key] = np.frombuffer(mapped, dtype, count, data + begin).reshape(shape)
    return arrays


def safetensors_metadata(path: str | os.PathLike[str]) -> dict[str, str]:
    """The string metadata of the safetensors file `path` (empty if it has none)."""
    try:
        with safe_open(os.fspath(path), framework="np") as f:
            return dict(f.metadata() or {})
    except SafetensorError as e:
        raise CheckpointError(f"{os.fspath(path)}: not a readable safetensors file ({e})") from e


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
        hparams = {k: v for k, v in optimizer.param_groups[0].items() if k != "params"}
        metadata |= {"optim.type": type(optimizer).__name__, "optim.steps": str(optimizer.steps),
                     "optim.hparams": _to_json(path, "optimizer hyper-parameters", hparams)}
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
    and shape must match) and, if given, `optimizer`; returns the extra values. Everything
    is checked before anything is changed: on an error, model and optimizer are as they
    were."""
    metadata = safetensors_metadata(path)
    if metadata.get("picograd.format") != FORMAT:
        raise CheckpointError(f"{os.fspath(path)}: not a picograd checkpoint (metadata "
                              f"picograd.format is {metadata.get('picograd.format')!r}, "
                              f"expected {FORMAT!r}); use load_safetensors for plain files")
    arrays = load_safetensors(path)
    state = None
    if optimizer is not None:
        optim = {k.removeprefix("optim."): v for k, v in arrays.items() if k.startswith("optim.")}
        state = _optimizer_state(path, optimizer, optim, metadata)
    model.load_state_dict({k.removeprefix("model."): v for k, v in arrays.items()
                           if k.startswith("model.")})
    if optimizer is not None and state is not None:
        hparams = json.loads(metadata["optim.hparams"])
        group = optimizer.param_groups[0]
        # JSON turned tuples (Adam's betas) into lists
        group.update({k: tuple(v) if isinstance(group.get(k), tuple) else v
                      for k, v in hparams.items()})
        optimizer.state = state
        optimizer.steps = int(metadata["optim.steps"])
    return {k.removeprefix("extra."): json.loads(v) for k, v in metadata.items()
            if k.startswith("extra.")}


def _optimizer_state(path: str | os.PathLike[str], optimizer: Optimizer,
                     arrays: dict[str, np.ndarray], metadata: dict[str, str]
                     ) -> dict[int, dict[str, Tensor]]:
    """The saved optimizer state (`optim.<i>.<name>` arrays) keyed as `optimizer.state` is:
    by the id of the optimizer's i-th parameter. Raises if it does not fit the optimizer."""
    kind = metadata.get("optim.type")
    if kind is None:
        raise CheckpointError(f"{os.fspath(path)}: the checkpoint holds no optimizer state")
    if kind != type(optimizer).__name__:
        raise CheckpointError(f"{os.fspath(path)}: the checkpoint holds {kind} state, the "
                              f"optimizer is {type(optimizer).__name__}")
    state: dict[int, dict[str, Tensor]] = {}
    problems: list[str] = []
    for key, array in arrays.items():
        index, _, name = key.partition(".")
        if not index.isdigit() or int(index) >= len(optimizer.params) or not name:
            problems.append(f"optim.{key}: no parameter {index} among "
                            f"{len(optimizer.params)}")
            continue
        p = optimizer.params[int(index)]
        if array.shape != p.shape:
            problems.append(f"optim.{key}: checkpoint {array.shape}, parameter {p.shape}")
            continue
        state.setdefault(id(p), {})[name] = Tensor(array, device=p.device)
    if problems:
        raise StateDictError(f"load_checkpoint {os.fspath(path)} into "
                             f"{type(optimizer).__name__}: " + "; ".join(problems))
    return state
