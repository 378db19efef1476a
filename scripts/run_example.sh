#!/usr/bin/env bash
# Install picograd with the examples' packages and the Fashion-MNIST dataset (Debian package
# dataset-fashion-mnist), then run the main example: a small CNN trained to >= 90 % test
# accuracy in 3 epochs, leaving runs/fashion/{checkpoint.safetensors,curves.png}.
# Extra arguments go to the example (e.g. --device WEBGPU, --fresh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_datasets.sh
python3 -m pip install --quiet --disable-pip-version-check -e '.[examples]'
python3 examples/quickstart.py
python3 examples/train_fashion_mnist.py "$@"
