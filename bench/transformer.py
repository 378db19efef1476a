"""A BERT-style encoder forward, written the same way in picograd and in torch, in one run.

    python bench/transformer.py [--device CPU:LLVM] [--shapes 32x128,1x512] [--no-compile]
                                [--no-onnx] [--no-decoder] [--layers 6] [--repeat 5]
                                [--quick]

The model is the shape of the small sentence-embedding models people run on CPUs: 6 layers,
hidden 384, 12 heads, FFN 1536, vocabulary 30,522, 512 positions; token + position
embeddings, LayerNorm, and per layer Q/K/V/O projections (`nn.Linear`, torch's (out, in)
weights), `F.scaled_dot_product_attention`, GELU FFN, post-LayerNorm residuals. Random
weights are made once and loaded into both models by their usual names.

Rows, per batch x sequence shape (medians of `--repeat` calls after one warm-up call):

    picograd   model(ids) then `.numpy()` under `pg.no_grad()`, as a user calls it (graph
               build, cached realize, read back)
    torch      eager, under `torch.no_grad()`
    compile    `torch.compile(model)` (inductor; `--no-compile` skips it)
    onnxruntime  the torch model exported with `torch.onnx.export` (TorchScript exporter,
               dynamic batch and sequence axes) run by an onnxruntime CPU session with its
               default options (`pip install -e '.[bench]'`; `--no-onnx` skips it)

plus the first picograd call (compile included, the kernel cache on disk warm or not as it
is) and the embedding lookup alone (`F.embedding` of the ids, as the encoder's first op).
Then the GPT-style decoder's greedy generation (`bench/decoder.py`, 128 tokens after a
16-token prompt, tokens/s against torch eager; `--no-decoder` skips it). The outputs of
picograd, torch and onnxruntime are compared before timing. picograd's forward and
embedding are timed twice in the same run (see bench/neighbours.py): alone, and "busy",
each call right after a small numpy, torch and onnxruntime matmul (untimed, no pause
between), with "busy/alone" the ratio of the two times; the first call is timed alone only
(it happens once). Numbers move with machine load: quote them from an idle machine.
"""

from __future__ import annotations

import argparse
import time
import warnings

import decoder
import numpy as np
from neighbours import busy_median, neighbours, slowdown
from realize import _median_time

import picograd as pg
import picograd.nn as pnn
import picograd.nn.functional as PF

VOCAB, POSITIONS, HIDDEN, HEADS, FFN = 30522, 512, 384, 12, 1536


# ── the picograd model ───────────────────────────────────────────────────────


class PgLayer(pnn.Module):
    def __init__(self, device: str):
        super().__init__()
        self.q, self.k, self.v, self.o = (pnn.Linear(HIDDEN, HIDDEN, device=device)
                                          for _ in range(4))
        self.ln1 = pnn.LayerNorm(HIDDEN, device=device)
        self.up = pnn.Linear(HIDDEN, FFN, device=device)
        self.down = pnn.Linear(FFN, HIDDEN, device=device)
        self.ln2 = pnn.LayerNorm(HIDDEN, device=device)

    def forward(self, x: pg.Tensor) -> pg.Tensor:
        b, s, _ = x.shape

        def heads(t: pg.Tensor) -> pg.Tensor:
            return t.reshape(b, s, HEADS, HIDDEN // HEADS).transpose(1, 2)

        att = PF.scaled_dot_product_attention(heads(self.q(x)), heads(self.k(x)),
                                              heads(self.v(x)))
        x = self.ln1(x + self.o(att.transpose(1, 2).reshape(b, s, HIDDEN)))
        return self.ln2(x + self.down(self.up(x).gelu()))


class PgEncoder(pnn.Module):
    def __init__(self, layers: int, device: str):
        super().__init__()
        self.tokens = pnn.Embedding(VOCAB, HIDDEN, device=device)
        self.positions = pnn.Embedding(POSITIONS, HIDDEN, device=device)
        self.ln = pnn.LayerNorm(HIDDEN, device=device)
        self.layers = pnn.Sequential(*(PgLayer(device) for _ in range(layers)))
        self.device = device

    def forward(self, ids: pg.Tensor) -> pg.Tensor:
        where = pg.Tensor(np.arange(ids.shape[1], dtype=np.int32), device=self.device)
        return self.layers(self.ln(self.tokens(ids) + self.positions(where)))


# ── the torch model ──────────────────────────────────────────────────────────


def torch_encoder(layers: int):
    import torch
    from torch import nn

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v, self.o = (nn.Linear(HIDDEN, HIDDEN) for _ in range(4))
            self.ln1 = nn.LayerNorm(HIDDEN)
            self.up, self.down = nn.Linear(HIDDEN, FFN), nn.Linear(FFN, HIDDEN)
            self.ln2 = nn.LayerNorm(HIDDEN)

        def forward(self, x):
            b, s, _ = x.shape

            def heads(t):
                return t.reshape(b, s, HEADS, HIDDEN // HEADS).transpose(1, 2)

            att = nn.functional.scaled_dot_product_attention(heads(self.q(x)), heads(self.k(x)),
                                                             heads(self.v(x)))
            x = self.ln1(x + self.o(att.transpose(1, 2).reshape(b, s, HIDDEN)))
            return self.ln2(x + self.down(nn.functional.gelu(self.up(x))))

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens = nn.Embedding(VOCAB, HIDDEN)
            self.positions = nn.Embedding(POSITIONS, HIDDEN)
            self.ln = nn.LayerNorm(HIDDEN)
            self.layers = nn.Sequential(*(Layer() for _ in range(layers)))

        def forward(self, ids):
            where = torch.arange(ids.shape[1])
            return self.layers(self.ln(self.tokens(ids) + self.positions(where)))

    return Encoder().eval()


# ── the run ──────────────────────────────────────────────────────────────────


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="CPU:LLVM")
    parser.add_argument("--shapes", default="32x128,1x512")
    parser.add_argument("--layers", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-compile", action="store_true")
    parser.add_argument("--no-onnx", action="store_true")
    parser.add_argument("--no-decoder", action="store_true")
    parser.add_argument("--quick", action="store_true", help="1 layer, 2x16: a smoke test")
    args = parser.parse_args()
    if args.quick:
        args.layers, args.shapes, args.repeat = 1, "2x16", 1

    import torch

    torch.manual_seed(0)
    theirs = torch_encoder(args.layers)
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    built = time.perf_counter()
    ours = PgEncoder(args.layers, args.device)
    ours.load_state_dict(state)
    built = time.perf_counter() - built
    compiled = None if args.no_compile else torch.compile(theirs)
    session = None if args.no_onnx else onnx_session(theirs)

    print(f"BERT-style encoder: {args.layers} layers, hidden {HIDDEN}, {HEADS} heads, FFN "
          f"{FFN}, vocabulary {VOCAB}; picograd on {args.device}, torch "
          f"{torch.__version__} ({torch.get_num_threads()} threads)")
    print(f"picograd model construction + load_state_dict: {built:.2f} s\n")
    print("| batch x seq | picograd first call s | picograd ms | picograd busy ms "
          "| busy/alone | torch ms | torch.compile ms | onnxruntime ms | picograd / torch "
          "| embedding picograd ms | embedding busy ms | busy/alone | embedding torch ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rng = np.random.default_rng(0)
    for shape in args.shapes.split(","):
        b, s = map(int, shape.split("x"))
        ids = rng.integers(0, VOCAB, (b, s)).astype(np.int32)
        print(_row(ours, theirs, compiled, session, ids, args.device, args.repeat))
    print(f"\n(medians; {neighbours().note}; busy/alone: the ratio of the times, > 1 is "
          "slower beside them)")
    if not args.no_decoder:
        print()
        print(decoder.run(args.device, 8 if args.quick else 128, 16, min(args.repeat, 3)))


def onnx_session(model):
    """An onnxruntime CPU session of the torch `model` (dynamic batch and sequence), or a
    string that says why there is none."""
    try:
        import io

        import onnxruntime
        import torch
    except ImportError as e:
        return f"not installed ({e.name})"
    data = io.BytesIO()
    ids = torch.zeros((1, 8), dtype=torch.int64)
    with warnings.catch_warnings():  # the TorchScript exporter is deprecated, still there
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (ids,), data, dynamo=False, input_names=["ids"],
                          output_names=["out"], opset_version=17,
                          dynamic_axes={"ids": {0: "batch", 1: "seq"}})
    return onnxruntime.InferenceSession(data.getvalue(), providers=["CPUExecutionProvider"])


def _row(ours, theirs, compiled, session, ids: np.ndarray, device: str, repeat: int) -> str:
    """One table row: the encoder on `ids` (batch, seq), checked and timed."""
    import torch

    ids_pg, ids_t = pg.Tensor(ids, device=device), torch.from_numpy(ids.astype(np.int64))
    first = time.perf_counter()
    forward = pg.no_grad()(lambda: ours(ids_pg).numpy())
    got = forward()
    first = time.perf_counter() - first
    with torch.no_grad():
        want = theirs(ids_t).numpy()
        err = float(np.abs(got - want).max())
        assert err < 1e-3, f"picograd differs from torch by {err}"
        t_torch = _median_time(lambda: theirs(ids_t), repeat)
        comp = "-" if compiled is None else \
            f"{_median_time(lambda: compiled(ids_t), repeat) * 1e3:.1f}"
        emb_t = _median_time(lambda: theirs.tokens(ids_t), repeat)
    if session is None or isinstance(session, str):
        ort = session or "-"
    else:
        feed = {"ids": ids.astype(np.int64)}
        err = float(np.abs(session.run(None, feed)[0] - want).max())
        assert err < 1e-3, f"onnxruntime differs from torch by {err}"
        ort = f"{_median_time(lambda: session.run(None, feed), repeat) * 1e3:.1f}"
    embedding = pg.no_grad()(lambda: PF.embedding(ids_pg, ours.tokens.weight).numpy())
    t_pg, emb_pg = _median_time(forward, repeat), _median_time(embedding, repeat)
    busy_pg, busy_emb = busy_median(forward, repeat), busy_median(embedding, repeat)
    b, s = ids.shape
    return (f"| {b} x {s} | {first:.2f} | {t_pg * 1e3:.1f} | {busy_pg * 1e3:.1f} "
            f"| {slowdown(t_pg, busy_pg):.2f} | {t_torch * 1e3:.1f} | {comp} | {ort} "
            f"| {t_pg / t_torch:.2f} | {emb_pg * 1e3:.3f} | {busy_emb * 1e3:.3f} "
            f"| {slowdown(emb_pg, busy_emb):.2f} | {emb_t * 1e3:.3f} |")


if __name__ == "__main__":
    main()
