#!/usr/bin/env bash
# Install the datasets picograd's examples and tests read: Fashion-MNIST from the Debian
# package dataset-fashion-mnist (IDX files, gzipped, under /usr/share/datasets/fashion-mnist).
# A no-op when it is already there; skipped, with a message, when not root or without apt-get
# (the Fashion-MNIST tests then skip with the reason). The digits come with scikit-learn
# (pip install -e '.[examples]').
set -euo pipefail

PACKAGE=dataset-fashion-mnist
ROOT=/usr/share/datasets/fashion-mnist

if [ -d "$ROOT" ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install_datasets: no apt-get; put the Fashion-MNIST IDX files under $ROOT yourself" \
       "(or pass root= to picograd.data.fashion_mnist)" >&2
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install_datasets: not root; run 'sudo apt-get install $PACKAGE' for Fashion-MNIST" >&2
  exit 0
fi
echo "install_datasets: installing $PACKAGE (about 30 MB)" >&2
export DEBIAN_FRONTEND=noninteractive
# a fresh container has no package lists: update only when apt cannot find the package
if ! apt-cache show "$PACKAGE" >/dev/null 2>&1; then
  apt-get update -qq >/dev/null
fi
apt-get install -y -qq --no-install-recommends "$PACKAGE" >/dev/null
