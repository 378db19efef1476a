"""GPT-style greedy generation with a static KV cache, in picograd and in torch, in one run.

    python bench/decoder.py [--device CPU:LLVM] [--tokens 128] [--prompt 16] [--repeat 3]

The model: 6 pre-LayerNorm decoder layers, hidden 384, 6 heads, FFN 1536 (GELU), vocabulary
30,522, learned positions, the LM head tied to the token embedding. Random weights are made
once in torch and loaded into both models by their usual names.

Generation is written the same way in both, as a static cache (Hugging Face's
`StaticCache`, the form `torch.compile` needs): each layer keeps a key and a value cache of
`prompt + tokens` positions; a step writes its keys and values at the positions it is given
(`index_copy`, in place in torch, a new tensor in picograd) and attends over the whole cache
with a mask that keeps the positions written so far. In torch the position is a tensor; in
picograd it is a bound `pg.Variable` (an integer the kernels read at run time), so a decode
step's graph is the same at every position: picograd compiles the prefill and the first
decode step, then nothing (the script counts compiles and fails if a later step compiles).

Rows: tokens/s of the decode steps (median of `--repeat` generations after one warm-up
generation), and the seconds of the first generation in picograd (compiles included). Both
frameworks must generate the same tokens, both without autograd (`pg.no_grad()`, as
`torch.no_grad()`). picograd's tokens/s is measured twice in the same
run (see bench/neighbours.py): alone (each generation after a pause that lets torch's worker
threads go to sleep) and busy (each decode step right after a small numpy, torch and
onnxruntime matmul, untimed, no pause between), with "busy/alone" the ratio of the times.
Numbers move with machine load.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
from neighbours import neighbours, settle, slowdown

import picograd as pg
import picograd.nn as pnn
import picograd.nn.functional as PF

LAYERS, HIDDEN, HEADS, FFN, VOCAB, POSITIONS = 6, 384, 6, 1536, 30522, 512


# ── picograd ────────────────────────────────────────────────────────────────


class PgBlock(pnn.Module):
    def __init__(self, cache: int, device: str):
        super().__init__()
        self.ln1, self.ln2 = pnn.LayerNorm(HIDDEN, device=device), pnn.LayerNorm(
            HIDDEN, device=device)
        self.q, self.k, self.v, self.o = (pnn.Linear(HIDDEN, HIDDEN, device=device)
                                          for _ in range(4))
        self.up = pnn.Linear(HIDDEN, FFN, device=device)
        self.down = pnn.Linear(FFN, HIDDEN, device=device)
        shape = (1, HEADS, cache, HIDDEN // HEADS)
        self.k_cache = pg.Tensor.zeros(*shape, device=device).realize()
        self.v_cache = pg.Tensor.zeros(*shape, device=device).realize()

    def forward(self, x: pg.Tensor, pos: pg.Tensor, mask: pg.Tensor) -> pg.Tensor:
        b, s, _ = x.shape

        def heads(t: pg.Tensor) -> pg.Tensor:
            return t.reshape(b, s, HEADS, HIDDEN // HEADS).transpose(1, 2)

        h = self.ln1(x)
        self.k_cache.index_copy_(2, pos, heads(self.k(h)))
        self.v_cache.index_copy_(2, pos, heads(self.v(h)))
        att = PF.scaled_dot_product_attention(heads(self.q(h)), self.k_cache, self.v_cache,
                                              attn_mask=mask)
        x = x + self.o(att.transpose(1, 2).reshape(b, s, HIDDEN))
        return x + self.down(PF.gelu(self.up(self.ln2(x))))


class PgDecoder(pnn.Module):
    def __init__(self, cache: int, device: str):
        super().__init__()
        self.tokens = pnn.Embedding(VOCAB, HIDDEN, device=device)
        self.positions = pnn.Embedding(POSITIONS, HIDDEN, device=device)
        self.blocks = pnn.Sequential(*(PgBlock(cache, device) for _ in range(LAYERS)))
        self.ln = pnn.LayerNorm(HIDDEN, device=device)
        self.cache = cache

    def forward(self, ids: pg.Tensor, start: int | pg.SymbolicInt) -> pg.Tensor:
        """The next token after each sequence of `ids` (batch, steps) written from position
        `start` on (a bound variable: the kernels read it, so no position recompiles)."""
        pos = pg.Tensor.arange(ids.shape[1], dtype=pg.int32, device=ids.device) + start
        mask = pos.unsqueeze(-1) >= pg.Tensor.arange(self.cache, device=pos.device,
                                                     dtype=pos.dtype)
        x = self.tokens(ids) + self.positions(pos)
        for block in self.blocks:
            x = block(x, pos, mask)
        last = self.ln(x[:, -1])
        return (last @ self.tokens.weight.transpose(0, 1)).argmax(-1)

    def caches(self) -> list[pg.Tensor]:
        return [t for block in self.blocks for t in (block.k_cache, block.v_cache)]


def pg_generate(model: PgDecoder, prompt: np.ndarray, tokens: int, device: str,
                decode=None, before_step: Callable[[], object] | None = None
                ) -> tuple[list[int], float, list[int]]:
    """Greedy tokens after `prompt`, seconds of the decode steps, compiles per decode step.
    `decode` runs a decode step (default: the model itself; `pg.jit` of it replays);
    `before_step()`, when given, runs right before each decode step, outside its time."""
    n = prompt.shape[1]
    decode = model if decode is None else decode
    position = pg.Variable("start", 0, model.cache - 1)  # a decode step's one position
    with pg.no_grad():  # as torch_generate: inference keeps no autograd state per step
        step = model(pg.Tensor(prompt, device=device), 0)
        out, compiles, seconds = [int(step.numpy()[0])], [], 0.0
        for t in range(tokens - 1):
            before = pg.compile_stats().compiles
            if before_step is not None:
                before_step()
            start = time.perf_counter()
            step = decode(step.reshape(1, 1), position.bind(n + t))
            out.append(int(step.numpy()[0]))
            seconds += time.perf_counter() - start
            compiles.append(pg.compile_stats().compiles - before)
    return out, seconds, compiles


# ── torch ────────────────────────────────────────────────────────────────────


def torch_decoder(cache: int):
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(HIDDEN), nn.LayerNorm(HIDDEN)
            self.q, self.k, self.v, self.o = (nn.Linear(HIDDEN, HIDDEN) for _ in range(4))
            self.up, self.down = nn.Linear(HIDDEN, FFN), nn.Linear(FFN, HIDDEN)
            shape = (1, HEADS, cache, HIDDEN // HEADS)
            self.register_buffer("k_cache", torch.zeros(shape), persistent=False)
            self.register_buffer("v_cache", torch.zeros(shape), persistent=False)

        def forward(self, x, pos, mask):
            b, s, _ = x.shape

            def heads(t):
                return t.reshape(b, s, HEADS, HIDDEN // HEADS).transpose(1, 2)

            h = self.ln1(x)
            self.k_cache.index_copy_(2, pos, heads(self.k(h)))
            self.v_cache.index_copy_(2, pos, heads(self.v(h)))
            att = nn.functional.scaled_dot_product_attention(
                heads(self.q(h)), self.k_cache, self.v_cache, attn_mask=mask)
            x = x + self.o(att.transpose(1, 2).reshape(b, s, HIDDEN))
            return x + self.down(nn.functional.gelu(self.up(self.ln2(x))))

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens = nn.Embedding(VOCAB, HIDDEN)
            self.positions = nn.Embedding(POSITIONS, HIDDEN)
            self.blocks = nn.Sequential(*(Block() for _ in range(LAYERS)))
            self.ln = nn.LayerNorm(HIDDEN)

        def forward(self, ids, pos):
            mask = pos.unsqueeze(-1) >= torch.arange(cache)
            x = self.tokens(ids) + self.positions(pos)
            for block in self.blocks:
                x = block(x, pos, mask)
            return (self.ln(x[:, -1]) @ self.tokens.weight.T).argmax(-1)

    return Decoder().eval()


def torch_generate(model, prompt: np.ndarray, tokens: int) -> tuple[list[int], float]:
    import torch

    n = prompt.shape[1]
    with torch.no_grad():
        step = model(torch.from_numpy(prompt.astype(np.int64)), torch.arange(n))
        out = [int(step[0])]
        start = time.perf_counter()
        for t in range(tokens - 1):
            step = model(step.reshape(1, 1), torch.tensor([n + t]))
            out.append(int(step[0]))
    return out, time.perf_counter() - start


# ── the run ──────────────────────────────────────────────────────────────────


def run(device: str, tokens: int, prompt_len: int, repeat: int) -> str:
    """The markdown table of one comparison."""
    import torch

    torch.manual_seed(0)
    cache = prompt_len + tokens
    theirs = torch_decoder(cache)
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    ours = PgDecoder(cache, device)
    ours.load_state_dict(state, strict=False)  # the caches are not in torch's state
    prompt = np.random.default_rng(0).integers(0, VOCAB, (1, prompt_len)).astype(np.int32)

    want, _ = torch_generate(theirs, prompt, tokens)
    rows = []
    for label, decode in (("picograd", None), ("picograd + jit", pg.jit(
            lambda ids, start: ours(ids, start)))):
        first = time.perf_counter()
        got, _, compiles = pg_generate(ours, prompt, tokens, device, decode)
        first = time.perf_counter() - first
        if got != want:
            same = next(i for i, (a, b) in enumerate(zip(got, want, strict=True)) if a != b)
            raise SystemExit(f"{label} and torch generate different tokens from token {same}")
        times, busy_times, torch_times, later = [], [], [], []
        for _ in range(repeat):
            settle()  # the torch generation just before must not slow this one down
            for kept, before_step in ((times, None), (busy_times, neighbours())):
                got, seconds, steps_compiles = pg_generate(ours, prompt, tokens, device,
                                                           decode, before_step)
                assert got == want, f"{label} generated other tokens on a repeat"
                kept.append(seconds)
                later.extend(steps_compiles)
            settle()  # nor picograd's busy generation the torch one
            torch_times.append(torch_generate(theirs, prompt, tokens)[1])
        if any(later):
            raise SystemExit(f"{label}: decode steps compiled after the first generation: "
                             f"{later}")
        alone, busy = statistics.median(times), statistics.median(busy_times)
        rate, theirs_rate = (tokens - 1) / alone, (tokens - 1) / statistics.median(torch_times)
        rows.append(f"| {label} | {first:.2f} | {sum(compiles)}, then 0 | {rate:.1f} | "
                    f"{(tokens - 1) / busy:.1f} | {slowdown(alone, busy):.2f} | "
                    f"{theirs_rate:.1f} | {rate / theirs_rate:.2f} |")
    return (f"GPT-style decoder: {LAYERS} layers, hidden {HIDDEN}, {HEADS} heads, FFN {FFN}; "
            f"prompt {prompt_len}, {tokens} tokens, static cache of {cache}; picograd on "
            f"{device}, torch {torch.__version__} ({torch.get_num_threads()} threads)\n\n"
            "| | first generation s | compiles in its decode steps | tokens/s | tokens/s busy "
            "| busy/alone | torch tokens/s (same run) | / torch |\n"
            "|---|---:|---|---:|---:|---:|---:|---:|\n" + "\n".join(rows)
            + f"\n\n(medians; {neighbours().note}; busy/alone: the ratio of the decode "
            "times, > 1 is slower beside them)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="CPU:LLVM")
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--prompt", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(run(args.device, args.tokens, args.prompt, args.repeat))


if __name__ == "__main__":
    main()
