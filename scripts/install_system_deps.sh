#!/usr/bin/env bash
# Install the system packages picograd's tests need beyond Python: the Vulkan loader and
# Mesa's Vulkan drivers, whose software adapter (llvmpipe) lets the WebGPU runtime run
# without a GPU, and clang for the CPU:C device. Debian/Ubuntu only; a no-op when they are already installed; skipped, with
# a message, when not root or without apt-get (the WebGPU tests then skip with the reason).
set -euo pipefail

# clang-19: CPU:C's compiler when installed (GCC keeps wide vectors in memory).
PACKAGES=(libvulkan1 mesa-vulkan-drivers clang-19)

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg -s "$package" >/dev/null 2>&1; then
    missing+=("$package")
  fi
done
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install_system_deps: no apt-get; install ${missing[*]} (a Vulkan driver) yourself" \
       "to run the WebGPU tests without a GPU" >&2
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install_system_deps: not root; run 'sudo apt-get install ${missing[*]}'" \
       "to run the WebGPU tests without a GPU" >&2
  exit 0
fi
echo "install_system_deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
