#!/usr/bin/env bash
# Installs every Debian package boardlab's build, tests and tools need. Idempotent: packages
# already present are skipped, so it is cheap to call before every build.
set -euo pipefail

packages=(
  # build
  cmake ninja-build g++ pkg-config clang clang-format libclang-rt-14-dev
  # compiler and runtime
  libflatbuffers-dev flatbuffers-compiler nlohmann-json3-dev libabsl-dev libcli11-dev
  # tests and benchmarks; libxml2 parses and rsvg-convert draws the timeline SVGs in the tests
  libgtest-dev libgmock-dev libbenchmark-dev libxml2-dev librsvg2-bin
  # the client writes JUnit reports with libxml2; the tests check them with xmllint --schema
  libxml2-utils
  # the board link tests check CRC-32 against zlib (and SHA-256 against OpenSSL, libssl-dev below)
  zlib1g-dev
  # runtime_bench's ArmNN CpuRef peer
  libarmnn-dev libarmnntfliteparser-dev libarmnn-cpuref-backend22
  # service: gRPC API, SQLite job store, Prometheus metrics (promtool checks them in the tests),
  # YAML configuration, Boost.Asio agent event loop
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libsqlite3-dev
  prometheus-cpp-dev prometheus libyaml-cpp-dev libboost-dev libssl-dev
  # the PostgreSQL store (libpq), and the server the store and service tests start and throw away
  libpq-dev postgresql
  # a throwaway DNS server: the service test of a DNS name with several server addresses
  dnsmasq-base
  # the web pages' browser test reads them in Chromium (driven by playwright-core from npm,
  # deploy/install-node-deps.sh); the server's HTTPS uses libssl-dev above and Boost.Beast
  chromium
  # Cortex-M33 firmware (firmware/) and the QEMU mps2-an505 board it runs on
  gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib qemu-system-arm
  # what deploy/container/Containerfile installs besides the libraries above (its test checks
  # the image's packages against the installed ones)
  binutils-arm-none-eabi ca-certificates
)

# node runs the TFLite reference interpreter (WebAssembly) for the kernel oracle tests; take
# Debian's only when the machine has no node of its own.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
