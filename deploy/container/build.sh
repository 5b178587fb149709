#!/usr/bin/env bash
# Builds boardlab's image: a Release build installed into deploy/container/stage/, then the
# Containerfile, with podman (or docker when podman is missing).
#
#   deploy/container/build.sh [IMAGE]        (default boardlab:<version>)
set -euo pipefail
cd "$(dirname "$0")/../.."
version=$(sed -n 's/^project(boardlab VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
image=${1:-boardlab:$version}
build=${BOARDLAB_IMAGE_BUILD_DIR:-build-image}

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBOARDLAB_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"${BOARDLAB_JOBS:-2}"
rm -rf deploy/container/stage
cmake --install "$build" --prefix deploy/container/stage --strip
engine=$(command -v podman || command -v docker || true)
if [[ -z $engine ]]; then
  echo "build.sh: neither podman nor docker is installed; stage/ is ready for your own build" >&2
  exit 1
fi
"$engine" build -t "$image" -f deploy/container/Containerfile deploy/container
echo "built $image"
