"""`opt-tool` on mutated IR of every stage: a diagnostic or success, never a traceback or a
hang (issue 11). The mutations and the runner are tests/opt_tool_fuzz.py's.

CI runs `PG_OPT_FUZZ_CASES` cases per stage (default 50, about 20 s in all on 2 cores),
the same ones on every run and on every xdist worker (derandomized); for a longer search
set it higher (`PG_OPT_FUZZ_CASES=2000 python -m pytest tests/unit/tools/test_opt_tool_fuzz.py`),
or run `python scripts/fuzz_opt_tool.py --cases 2000` for a table of outcomes.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from opt_tool_fuzz import STAGES, Case, Seed, make_case, run_case, stage_seeds

CASES = int(os.environ.get("PG_OPT_FUZZ_CASES", "50"))
# generous: a case takes milliseconds; xDSL's string backtracking took minutes
TIMEOUT_S = 10.0


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@pytest.fixture(scope="module")
def seeds(workdir: Path) -> dict[str, list[Seed]]:
    return stage_seeds(workdir)


@pytest.mark.parametrize("stage", STAGES)
def test_mutated_ir_gets_a_diagnostic_not_a_traceback(
        stage: str, seeds: dict[str, list[Seed]], workdir: Path) -> None:
    others = [s.text for name, group in seeds.items() if name != stage for s in group]

    # no shrinking: a mutant is read by eye, and shrinking re-runs the tool many times
    @settings(max_examples=CASES, derandomize=True, deadline=None, database=None,
              phases=[Phase.explicit, Phase.generate],
              suppress_health_check=[HealthCheck.too_slow])
    @given(rng=st.randoms(use_true_random=False))
    def check(rng: random.Random) -> None:
        case = make_case(seeds[stage], rng, workdir, others)
        result = run_case(case, workdir, TIMEOUT_S)
        assert result.outcome in ("ok", "diagnostic"), (
            f"{result.outcome} {result.error} on {case.stage} IR mutated by "
            f"{', '.join(case.mutations)}; opt-tool {' '.join(case.argv)}\n"
            f"input: {case.text[:400]!r}\n{result.stderr[-2000:]}")

    check()


def test_every_stage_has_seeds_that_pass_unmutated(seeds: dict[str, list[Seed]],
                                                   workdir: Path) -> None:
    """The seeds are real IR that opt-tool takes: a mutant's diagnostic is the mutation's."""
    for stage in STAGES:
        assert seeds[stage], stage
        for seed in seeds[stage]:
            for argv in seed.commands[:2]:  # the stage's own pipeline and printer
                result = run_case(Case(stage, seed.text, argv), workdir, TIMEOUT_S)
                assert result.outcome == "ok", (stage, seed.target, argv, result.stderr)
