"""Generation with a static KV cache compiles once, not once per token: a decode step writes
its keys and values at its positions (`index_copy_`) and attends over the whole cache under
a mask of the positions written so far, so every step after the first is the same graph
(plain calls) or the same captured programs (`picograd.jit`); the tokens are torch's. The
positions come from a bound `pg.Variable` (an integer the kernels read at run time) or from
a tensor of host ints. (`bench/decoder.py` is the full-size version.)"""

from __future__ import annotations

import numpy as np
import pytest

import picograd as pg
import picograd.nn as nn
import picograd.nn.functional as F

torch = pytest.importorskip("torch", reason="torch is the oracle of the decode test")

HIDDEN, HEADS, VOCAB, CACHE, PROMPT, TOKENS = 16, 2, 50, 12, 4, 8


class Block(nn.Module):
    def __init__(self, device: str):
        super().__init__()
        self.ln = nn.LayerNorm(HIDDEN, device=device)
        self.q, self.k, self.v, self.o = (nn.Linear(HIDDEN, HIDDEN, device=device)
                                          for _ in range(4))
        shape = (1, HEADS, CACHE, HIDDEN // HEADS)
        self.k_cache = pg.Tensor.zeros(*shape, device=device).realize()
        self.v_cache = pg.Tensor.zeros(*shape, device=device).realize()

    def forward(self, x: pg.Tensor, pos: pg.Tensor, mask: pg.Tensor) -> pg.Tensor:
        b, s, _ = x.shape

        def heads(t: pg.Tensor) -> pg.Tensor:
            return t.reshape(b, s, HEADS, HIDDEN // HEADS).transpose(1, 2)

        h = self.ln(x)
        self.k_cache.index_copy_(2, pos, heads(self.k(h)))
        self.v_cache.index_copy_(2, pos, heads(self.v(h)))
        att = F.scaled_dot_product_attention(heads(self.q(h)), self.k_cache, self.v_cache,
                                             attn_mask=mask)
        return x + self.o(att.transpose(1, 2).reshape(b, s, HIDDEN))


class Decoder(nn.Module):
    def __init__(self, device: str):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, HIDDEN, device=device)
        self.block = Block(device)

    def forward(self, ids: pg.Tensor, pos: pg.Tensor) -> pg.Tensor:
        mask = pos.unsqueeze(-1) >= pg.Tensor.arange(CACHE, device=pos.device, dtype=pos.dtype)
        x = self.block(self.tokens(ids), pos, mask)
        return (x[:, -1] @ self.tokens.weight.transpose(0, 1)).argmax(-1)


def _torch_tokens(state: dict[str, np.ndarray], prompt: np.ndarray) -> list[int]:
    """The same generation in torch, from the same weights (written out, no cache)."""
    t = {k: torch.from_numpy(v) for k, v in state.items()}
    ids = list(prompt[0])
    out = []
    for _ in range(TOKENS):
        x = t["tokens.weight"][torch.tensor(ids)][None]
        h = torch.nn.functional.layer_norm(x, (HIDDEN,), t["block.ln.weight"], t["block.ln.bias"])

        def proj(name: str, v: torch.Tensor) -> torch.Tensor:
            return v @ t[f"block.{name}.weight"].T + t[f"block.{name}.bias"]

        def heads(v: torch.Tensor) -> torch.Tensor:
            return v.reshape(1, len(ids), HEADS, HIDDEN // HEADS).transpose(1, 2)

        att = torch.nn.functional.scaled_dot_product_attention(
            heads(proj("q", h)), heads(proj("k", h)), heads(proj("v", h)), is_causal=True)
        x = x + proj("o", att.transpose(1, 2).reshape(1, len(ids), HIDDEN))
        nxt = int((x[:, -1] @ t["tokens.weight"].T).argmax(-1))
        out.append(nxt)
        ids.append(nxt)
    return out


def _positions(start: int | pg.SymbolicInt, steps: int, device: str) -> pg.Tensor:
    """The positions start..start+steps-1 of a step, from a bound variable (read at run
    time) or from host ints (a tensor's contents)."""
    if isinstance(start, pg.SymbolicInt):
        return pg.Tensor.arange(steps, dtype=pg.int32, device=device) + start
    return pg.Tensor(np.arange(start, start + steps, dtype=np.int32), device=device)


@pytest.mark.parametrize("positions", ["tensor", "variable"])
@pytest.mark.parametrize("jitted", [False, True])
def test_decode_steps_compile_nothing_after_the_first(device: str, jitted: bool,
                                                      positions: str) -> None:
    pg.manual_seed(3)
    model = Decoder(device)
    state = {k: v.numpy() for k, v in model.state_dict().items()}
    prompt = np.random.default_rng(4).integers(0, VOCAB, (1, PROMPT)).astype(np.int32)
    start = pg.Variable("start", 0, CACHE - 1)

    def bound(value: int) -> int | pg.SymbolicInt:
        return start.bind(value) if positions == "variable" else value

    def run(ids: pg.Tensor, at: int | pg.SymbolicInt) -> pg.Tensor:
        return model(ids, _positions(at, ids.shape[1], device))

    decode = pg.jit(run) if jitted and positions == "variable" else run
    if jitted and positions == "tensor":  # the position tensor is the jit's argument
        replay = pg.jit(lambda ids, pos: model(ids, pos))
        decode = lambda ids, at: replay(ids, _positions(at, 1, device))  # noqa: E731
    step = run(pg.Tensor(prompt, device=device), bound(0))
    tokens, compiles = [int(step.numpy()[0])], []
    for t in range(TOKENS - 1):
        before = pg.compile_stats().compiles
        step = decode(step.reshape(1, 1), bound(PROMPT + t))
        tokens.append(int(step.numpy()[0]))
        compiles.append(pg.compile_stats().compiles - before)
    assert tokens == _torch_tokens(state, prompt)
    assert not any(compiles[2:]), compiles  # jit: call 1 runs, call 2 captures, then replays
