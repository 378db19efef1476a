"""Fuzz `opt-tool` with mutated IR of every stage and print what happened, per stage.

    python scripts/fuzz_opt_tool.py --cases 2000 --seed 0
    python scripts/fuzz_opt_tool.py --cases 200 --stages loop,uop --show 3

Prints, per stage, how many cases ended ok (exit 0), as a diagnostic (non-zero exit, no
traceback), as a traceback (an exception escaping `opt_tool.main`, or one printed) or as a
hang (over `--timeout` seconds); then each distinct exception type with one example case
(its mutations, command line and the last lines of its traceback). Exits 1 when any case
was a traceback or a hang. It uses whichever `picograd` is first on the path (so
`PYTHONPATH=<old checkout> python scripts/fuzz_opt_tool.py` measures an old version); the
mutations are in tests/opt_tool_fuzz.py, shared with the CI test.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from opt_tool_fuzz import (  # pyright: ignore[reportMissingImports] (tests/, on the path above)
    OUTCOMES,
    STAGES,
    Case,
    Result,
    make_case,
    run_case,
    stage_seeds,
)

import picograd


def _arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--cases", type=int, default=2000, help="cases per stage")
    p.add_argument("--seed", type=int, default=0,
                   help="random seed (the same seed, the same cases)")
    p.add_argument("--stages", default=",".join(STAGES), help="comma-separated stages")
    p.add_argument("--timeout", type=float, default=5.0, help="seconds per case before a hang")
    p.add_argument("--show", type=int, default=1, help="examples shown per exception type")
    return p.parse_args()


def _example(case: Case, result: Result) -> str:
    tail = "\n".join("      " + line for line in result.stderr.rstrip().splitlines()[-4:])
    return (f"    mutations: {', '.join(case.mutations)}; argv: {' '.join(case.argv)}\n"
            f"    input ({len(case.text)} bytes): {case.text[:160]!r}\n{tail}")


def main() -> int:
    args = _arguments()
    print(f"picograd: {picograd.__file__}")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        seeds = stage_seeds(workdir)
        stages = args.stages.split(",")
        counts: dict[str, Counter[str]] = {}
        examples: dict[tuple[str, str], list[tuple[Case, Result]]] = {}
        for stage in stages:
            start = time.perf_counter()
            others = [s.text for st, ss in seeds.items() if st != stage for s in ss]
            counts[stage] = Counter()
            for i in range(args.cases):
                rng = random.Random(f"{args.seed}:{stage}:{i}")
                case = make_case(seeds[stage], rng, workdir, others)
                result = run_case(case, workdir, args.timeout)
                counts[stage][result.outcome] += 1
                if result.outcome in ("traceback", "hang"):
                    key = (result.outcome, result.error or result.outcome)
                    examples.setdefault(key, []).append((case, result))
            print(f"  {stage}: {time.perf_counter() - start:.0f} s", file=sys.stderr)
    print(f"{'stage':<8}" + "".join(f"{o:>12}" for o in OUTCOMES))
    for stage in stages:
        print(f"{stage:<8}" + "".join(f"{counts[stage][o]:>12}" for o in OUTCOMES))
    for (outcome, error), found in sorted(examples.items(), key=lambda kv: -len(kv[1])):
        by_stage = ", ".join(f"{s} {n}" for s, n in Counter(c.stage for c, _ in found).items())
        print(f"\n{outcome} {error}: {len(found)} ({by_stage})")
        for case, result in found[:args.show]:
            print(_example(case, result))
    return 1 if examples else 0


if __name__ == "__main__":
    sys.exit(main())
