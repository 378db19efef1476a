"""tensor-split-reduce's `chunk-ratio` (the CPU pipelines'): a float sum splits only where
both levels are lengths loop-optimize can add up in chunks, else it is padded."""

from __future__ import annotations

from picograd.passes.tensor.tensor_split_reduce import CHUNK_ALIGN, partials


def test_a_divisor_with_a_prime_chunk_is_refused_with_a_ratio() -> None:
    n = 2**24 + 3  # 1549 x 10831: the divisor split leaves 10831 partials to add
    assert partials(n, n, 1, 4096, 1 << 20) == 10831
    assert partials(n, n, 1, 4096, 1 << 20, ratio=2) == 0  # padded instead


def test_with_a_ratio_both_levels_are_aligned_or_short() -> None:
    for n in (2**24, 7 * 10**6, 227_456, 4096 * 3000):
        q = partials(n, n, 1, 256, 1 << 20, ratio=2)
        assert q == 0 or ((n // q) % CHUNK_ALIGN == 0 and (q % CHUNK_ALIGN == 0 or q <= 512))
    assert partials(2**24, 2**24, 1, 256, 1 << 20, ratio=2) == 2**16
