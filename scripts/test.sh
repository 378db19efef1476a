#!/usr/bin/env bash
# Install picograd with its test tools and the WebGPU runtime (plus Mesa's software Vulkan
# driver, so WebGPU runs without a GPU) and the Fashion-MNIST dataset, lint it, check the
# import layers (lint-imports, contracts in pyproject.toml), and run the whole test suite
# (pytest, which also runs the lit/filecheck suite through tests/test_lit.py).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_system_deps.sh
bash scripts/install_datasets.sh
python3 -m pip install --quiet --disable-pip-version-check -e '.[dev,webgpu,examples]'
python3 -m ruff check picograd tests bench examples
python3 -m pyright --project pyproject.toml
lint-imports --no-cache
# --durations: the slowest tests, so a run that grows shows where
python3 -m pytest -n "${PG_TEST_WORKERS:-2}" --durations=20 tests "$@"
