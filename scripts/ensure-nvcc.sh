#!/usr/bin/env bash
# Prints the directories to put on PATH (':'-separated): the one holding nvcc, and where cuobjdump
# and nvdisasm are (tests read the SASS of some benches).
# Uses nvcc from PATH when there is one (cuobjdump and nvdisasm are then beside it); otherwise
# installs NVIDIA's nvcc, runtime, headers and NVTX from PyPI into .tools/cuda (ignored by git) once, and
# cuobjdump and nvdisasm into .tools/cuda-dis, and reuses them afterwards.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if command -v nvcc >/dev/null 2>&1; then
  dirname "$(command -v nvcc)"
  exit 0
fi
prefix="$root/.tools/cuda"
bin="$prefix/nvidia/cu13/bin"
if [ ! -x "$bin/nvcc" ]; then
  echo "nvcc not on PATH: installing it from PyPI into $prefix" >&2
  python3 -m pip install --quiet --disable-pip-version-check --target "$prefix" \
    nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-crt nvidia-cuda-cccl >&2
fi
# NVTX headers (the timing core's profile mode) beside the CUDA headers, where nvcc looks. pip
# --target does not merge into an existing folder, so they are installed apart and copied over.
if [ ! -f "$prefix/nvidia/cu13/include/nvtx3/nvToolsExt.h" ]; then
  echo "installing the NVTX headers from PyPI into $prefix" >&2
  rm -rf "$root/.tools/nvtx"
  python3 -m pip install --quiet --disable-pip-version-check --target "$root/.tools/nvtx" nvidia-nvtx >&2
  cp -r "$root/.tools/nvtx/nvidia/cu13/include/nvtx3" "$prefix/nvidia/cu13/include/"
fi
[ -x "$bin/nvcc" ] || { echo "error: nvcc was not found at $bin/nvcc after installing from PyPI" >&2; exit 1; }
dis="$root/.tools/cuda-dis/nvidia/cu13/bin"
if [ ! -x "$dis/cuobjdump" ] || [ ! -x "$dis/nvdisasm" ]; then
  echo "installing cuobjdump and nvdisasm from PyPI into $root/.tools/cuda-dis" >&2
  python3 -m pip install --quiet --disable-pip-version-check --target "$root/.tools/cuda-dis" \
    nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm >&2
fi
echo "$bin:$dis"
