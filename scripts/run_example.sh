#!/usr/bin/env bash
# Install picograd and run the main example.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e .
python3 examples/quickstart.py
