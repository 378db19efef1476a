"""Train a small character-level language model offline, then sample from it.

    python examples/train_char_lm.py [--model transformer|lstm] [--steps 300] [--fresh]
                                     [--device CPU] [--out runs/char_lm]

The text is one that ships with the system: Debian's /usr/share/common-licenses/GPL-3,
else Python's own LICENSE.txt, else the Zen of Python (the `this` module). The default model
is a 2-layer pre-norm transformer (causal self-attention, learned positions, 64 wide);
`--model lstm` trains a 1-layer LSTM of width 128 instead. Every training batch has the same
shape, so the step (forward, cross-entropy, backward, AdamW) compiles once and is reused;
sampling feeds a fixed window of the last `--context` characters, one more graph.

Into `--out`: `<model>.safetensors`, a checkpoint (model, optimiser, step, loss history)
written at the end and every `--save-every` steps, which the next run resumes from (up to
`--steps` in all) unless `--fresh`; `<model>_loss.png`, the loss curve (matplotlib, Agg);
`<model>_sample.txt`, the sampled text.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import sysconfig
import time
from dataclasses import dataclass, field

import numpy as np

import picograd as pg
import picograd.nn as nn
import picograd.nn.functional as F
from picograd.nn.state import load_checkpoint, save_checkpoint

TEXT_FILES = ("/usr/share/common-licenses/GPL-3",
              os.path.join(sysconfig.get_paths()["stdlib"], "LICENSE.txt"))


def load_text() -> tuple[str, str]:
    """(text, where it came from): the first of TEXT_FILES that exists, else the Zen of
    Python."""
    for path in TEXT_FILES:
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                return f.read(), path
    with contextlib.redirect_stdout(io.StringIO()) as zen:  # `import this` prints it
        import this  # noqa: F401
    return zen.getvalue(), "the Zen of Python (import this)"


class Vocabulary:
    """Characters <-> ids (sorted, so the same text gives the same ids)."""

    def __init__(self, text: str):
        self.chars = sorted(set(text))
        self.ids = {c: i for i, c in enumerate(self.chars)}

    def encode(self, text: str) -> np.ndarray:
        return np.array([self.ids[c] for c in text], np.int32)

    def decode(self, ids: np.ndarray) -> str:
        return "".join(self.chars[int(i)] for i in ids)


class CharTransformer(nn.Module):
    """Token and position embeddings, pre-norm causal encoder layers, a LayerNorm, a head."""

    def __init__(self, vocab: int, context: int, width: int = 64, heads: int = 4,
                 layers: int = 2, device: str = "CPU"):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width, device=device)
        self.positions = nn.Embedding(context, width, device=device)
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width, dropout=0.0,
                                           activation="gelu", batch_first=True,
                                           norm_first=True, device=device)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(width, device=device)
        self.head = nn.Linear(width, vocab, device=device)
        self.mask = nn.Transformer.generate_square_subsequent_mask(context, device=device)
        self.positions_ids = pg.arange(context, device=device)

    def forward(self, ids: pg.Tensor) -> pg.Tensor:
        t = ids.shape[1]
        x = self.tokens(ids) + self.positions(self.positions_ids[:t])
        x = self.encoder(x, mask=self.mask[:t, :t], is_causal=True)
        return self.head(self.norm(x))


class CharLSTM(nn.Module):
    """Token embeddings, one LSTM layer, a head."""

    def __init__(self, vocab: int, width: int = 128, device: str = "CPU"):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width, device=device)
        self.lstm = nn.LSTM(width, width, batch_first=True, device=device)
        self.head = nn.Linear(width, vocab, device=device)

    def forward(self, ids: pg.Tensor) -> pg.Tensor:
        out, _ = self.lstm(self.tokens(ids))
        return self.head(out)


@dataclass
class Run:
    """What a run did: the loss of every step (resumed steps included), its tokens/s."""

    losses: list[float] = field(default_factory=list[float])
    tokens_per_s: float = 0.0
    resumed_at: int = 0
    sample: str = ""
    source: str = ""


def make_model(kind: str, vocab: int, context: int, device: str) -> nn.Module:
    if kind == "transformer":
        return CharTransformer(vocab, context, device=device)
    if kind == "lstm":
        return CharLSTM(vocab, device=device)
    raise SystemExit(f"unknown --model {kind!r}: transformer or lstm")


def sample(model: nn.Module, vocab: Vocabulary, prompt: np.ndarray, length: int,
           device: str, temperature: float = 0.8, seed: int = 0) -> str:
    """`length` characters after `prompt` (a full window of ids), drawn one at a time from
    the model's distribution at the window's last position; the window slides, so every
    step is the same graph."""
    rng = np.random.default_rng(seed)
    window = prompt.copy()
    out = []
    model.eval()
    with pg.no_grad():
        for _ in range(length):
            logits = model(pg.Tensor(window[None], device=device))[0, -1].numpy()
            p = np.exp((logits - logits.max()) / temperature)
            choice = int(rng.choice(len(p), p=p / p.sum()))
            out.append(choice)
            window = np.concatenate([window[1:], [choice]]).astype(np.int32)
    model.train()
    return vocab.decode(np.array(out))


def plot(losses: list[float], path: str, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(np.arange(1, len(losses) + 1), losses, lw=0.8)
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats / char)")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def train(kind: str = "transformer", steps: int = 300, fresh: bool = False,
          device: str = "CPU", out_dir: str = "runs/char_lm", batch: int = 16,
          context: int = 64, lr: float = 3e-3, save_every: int = 100,
          sample_length: int = 200, seed: int = 0, progress: bool = True) -> Run:
    """Train (or resume) up to `steps` steps in all; returns the run's record."""
    text, source = load_text()
    vocab = Vocabulary(text)
    data = vocab.encode(text)
    if kind == "lstm":
        context = min(context, 32)  # a shorter unrolled loop: a quicker first compile
    pg.manual_seed(seed)
    model = make_model(kind, len(vocab.chars), context, device)
    optimizer = pg.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    os.makedirs(out_dir, exist_ok=True)
    checkpoint = os.path.join(out_dir, f"{kind}.safetensors")
    run = Run(source=source)
    if os.path.exists(checkpoint) and not fresh:
        extra = load_checkpoint(checkpoint, model, optimizer)
        run.losses = [float(v) for v in extra["losses"]]
        run.resumed_at = int(extra["step"])
    rng = np.random.default_rng(seed + run.resumed_at)
    offsets = np.arange(context + 1)
    from tqdm import tqdm

    bar = tqdm(range(run.resumed_at, steps), initial=run.resumed_at, total=steps,
               disable=not progress, desc=kind, unit="step", file=sys.stdout)
    timed_tokens, timed_seconds = 0, 0.0
    for step in bar:
        starts = rng.integers(0, len(data) - context - 1, batch)
        window = data[starts[:, None] + offsets]
        start = time.perf_counter()
        logits = model(pg.Tensor(window[:, :-1], device=device))
        loss = F.cross_entropy(logits.reshape(batch * context, -1),
                               pg.Tensor(window[:, 1:].reshape(-1), device=device))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        value = float(loss.item())
        if step > run.resumed_at:  # the first step of a process compiles
            timed_tokens += batch * context
            timed_seconds += time.perf_counter() - start
        run.losses.append(value)
        bar.set_postfix(loss=f"{value:.3f}")
        if (step + 1) % save_every == 0 or step + 1 == steps:
            save_checkpoint(checkpoint, model, optimizer, step=step + 1, losses=run.losses)
    bar.close()
    run.tokens_per_s = timed_tokens / timed_seconds if timed_seconds else 0.0
    if run.losses:
        plot(run.losses, os.path.join(out_dir, f"{kind}_loss.png"),
             f"char-level {kind} on {os.path.basename(source)}")
    if sample_length:
        prompt = data[:context]
        run.sample = sample(model, vocab, prompt, sample_length, device, seed=seed)
        with open(os.path.join(out_dir, f"{kind}_sample.txt"), "w", encoding="utf-8") as f:
            f.write(vocab.decode(prompt) + run.sample)
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--model", default="transformer", choices=("transformer", "lstm"))
    parser.add_argument("--steps", type=int, default=300, help="steps in all (resumed too)")
    parser.add_argument("--fresh", action="store_true", help="ignore an existing checkpoint")
    parser.add_argument("--device", default="CPU", help="CPU (default), CPU:C, WEBGPU, CUDA")
    parser.add_argument("--out", default="runs/char_lm")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--context", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--save-every", type=int, default=100)
    parser.add_argument("--sample-length", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if args.steps < 1 or args.batch_size < 1 or args.context < 2:
        parser.error("--steps and --batch-size must be positive, --context at least 2")
    run = train(args.model, args.steps, args.fresh, args.device, args.out, args.batch_size,
                args.context, args.lr, args.save_every, args.sample_length, args.seed)
    print(f"text: {run.source}")
    if run.resumed_at:
        print(f"resumed at step {run.resumed_at}")
    if run.losses:
        print(f"loss {run.losses[0]:.3f} (step 1) -> {run.losses[-1]:.3f} "
              f"(step {len(run.losses)}); {run.tokens_per_s:.0f} tokens/s after the first step")
    print("sample:\n" + run.sample)


if __name__ == "__main__":
    main()
