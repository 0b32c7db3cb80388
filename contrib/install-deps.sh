#!/bin/bash
# Install the Debian packages the build and the tests need, if any is missing.
set -euo pipefail

packages=(
    build-essential autoconf automake libtool pkg-config
    libibverbs-dev ibverbs-providers
    googletest libgtest-dev
    valgrind
    # a distribution's UCX, which the matrix's coexist leg must never see
    # in our builds nor in what our installed programs load
    libucx0 libucx-dev ucx-utils
    # unmodified rdma-core programs the drop-in leg runs on the emulated
    # device (contrib/dropin-check.sh), and librdmacm's, whose header the
    # drop-in's connection manager serves
    ibverbs-utils perftest librdmacm-dev rdmacm-utils
)

missing=()
for pkg in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed"; then
        missing+=("$pkg")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

echo "installing: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
