"""Peak memory of one BERT-style encoder forward, picograd against torch, each in a fresh process.

    python bench/peak_memory.py [--shapes 32x128,1x512] [--device CPU:LLVM]

Each child process builds the model of `bench/transformer.py`, loads the same random
weights and notes its resident memory ("loaded"). It runs one warm-up forward (picograd
compiles, or reads its disk cache), then one more while a thread samples the resident
memory every 0.5 ms ("peak"). "peak - loaded" is the memory a forward needs beyond the
model in steady state, measured the same way for both: intermediates, and whatever stays
allocated between forwards (picograd's buffer pool keeps the arena of its intermediates and
the compiled kernels; torch's allocator and glibc keep freed pages). Both run under their
`no_grad` (grad mode keeps the activations a backward would need, in both).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _sampled_peak(fn) -> float:
    """The highest resident MB seen while `fn()` runs (sampled every 0.5 ms)."""
    peak = [_rss_mb()]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _rss_mb())
            time.sleep(0.0005)

    thread = threading.Thread(target=sample)
    thread.start()
    try:
        fn()
    finally:
        done.set()
        thread.join()
    return max(peak[0], _rss_mb())


def child(framework: str, shape: str, device: str) -> dict[str, float]:
    """Runs in the child process: (resident MB before the timed forward, peak MB after)."""
    import numpy as np
    import torch

    sys.path.insert(0, HERE)
    import transformer as T

    torch.manual_seed(0)
    theirs = T.torch_encoder(6)
    b, s = map(int, shape.split("x"))
    loaded = _rss_mb()
    ids = np.random.default_rng(0).integers(0, T.VOCAB, (b, s)).astype(np.int32)
    if framework == "torch":
        ids_t = torch.from_numpy(ids.astype(np.int64))

        def forward() -> None:
            with torch.no_grad():
                theirs(ids_t)
    else:
        import picograd as pg

        state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
        del theirs
        ours = T.PgEncoder(6, device)
        ours.load_state_dict(state)
        del state
        loaded = _rss_mb()
        ids_pg = pg.Tensor(ids, device=device)

        @pg.no_grad()
        def forward() -> None:
            ours(ids_pg).numpy()
    forward()
    return {"loaded": loaded, "peak": _sampled_peak(forward)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="32x128,1x512")
    parser.add_argument("--device", default="CPU:LLVM")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], args.device)))
        return
    print("| batch x seq | picograd loaded MB | peak | peak - loaded | torch loaded MB | peak "
          "| peak - loaded | ratio of peak - loaded |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for shape in args.shapes.split(","):
        got = {}
        for framework in ("picograd", "torch"):
            out = subprocess.run([sys.executable, __file__, "--device", args.device,
                                  "--child", framework, shape], capture_output=True,
                                 text=True, check=True)
            got[framework] = json.loads(out.stdout.strip().splitlines()[-1])
        cells, rise = [], {}
        for framework in ("picograd", "torch"):
            r = got[framework]
            rise[framework] = r["peak"] - r["loaded"]
            cells += [f"{r['loaded']:.0f}", f"{r['peak']:.0f}", f"{rise[framework]:.0f}"]
        print(f"| {shape} | {' | '.join(cells)} | "
              f"{rise['picograd'] / max(rise['torch'], 1):.2f} |")

if __name__ == "__main__":
    main()
