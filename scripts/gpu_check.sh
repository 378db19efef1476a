#!/usr/bin/env bash
# The checks to run on a machine with an NVIDIA GPU: bench/gpu.py against torch on the same
# GPU, the CUDA-parametrised tests, then the whole test suite with CUDA required (every
# device-parametrised test runs on CUDA too). It installs nothing from the network:
# picograd runs from this checkout (PYTHONPATH), so the machine needs xdsl, numpy, llvmlite,
# safetensors, cuda-python (cuda.bindings), pytest, pytest-xdist, hypothesis, lit, filecheck
# and torch.
#
#     bash scripts/gpu_check.sh [OUTDIR]      # logs and the JUnit report go to OUTDIR
#
# Environment: PG_TEST_WORKERS (default: the CPU count, at most 16), PG_GPU_BENCH_SIZES
# (default 1024,2048,4096), PG_SUITE_TIMEOUT (seconds for the suite, default none: a lent
# machine's time is short, so the benchmark and the CUDA tests run first and the suite is
# cut off, not lost).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-${OUT:-/tmp/picograd-gpu}}"
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
export PG_REQUIRE_DEVICES=CUDA PG_HYPOTHESIS_PROFILE=ci PG_CACHE_DIR="${PG_CACHE_DIR:-/tmp/picograd-gpu-cache}"
workers="${PG_TEST_WORKERS:-$(( $(nproc) < 16 ? $(nproc) : 16 ))}"
if ! command -v filecheck >/dev/null; then  # e.g. installed with pip --target: no scripts
  mkdir -p "$out/bin"
  printf '#!/bin/sh\nexec python3 -m filecheck "$@"\n' > "$out/bin/filecheck"
  chmod +x "$out/bin/filecheck"
  export PATH="$out/bin:$PATH"
fi

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
python3 -c "import torch, xdsl; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())"

python3 bench/gpu.py --device CUDA --sizes "${PG_GPU_BENCH_SIZES:-1024,2048,4096}" 2>&1 \
    | tee "$out/bench.log"
bench=$?
# The CUDA-parametrised tests first (about a minute on 16 workers), named as they fail, so a
# suite cut off by the time limit still reports every GPU failure.
python3 -m pytest -q -n "$workers" -p no:cacheprovider tests -k "cuda or CUDA" -rfE \
    --tb=short > "$out/cuda.log" 2>&1
cuda=$?
grep -E "^(FAILED|ERROR)" "$out/cuda.log" | head -40
tail -3 "$out/cuda.log"
timeout "${PG_SUITE_TIMEOUT:-0}" python3 -m pytest -q -n "$workers" -p no:cacheprovider tests \
    --maxfail=300 --durations=15 --junitxml="$out/junit.xml" -rfE > "$out/pytest.log" 2>&1
suite=$?
grep -E "^(FAILED|ERROR)" "$out/pytest.log" | head -60
tail -25 "$out/pytest.log"
echo "cuda tests exit $cuda, suite exit $suite, bench exit $bench"
exit $(( cuda != 0 ? cuda : suite != 0 ? suite : bench ))
