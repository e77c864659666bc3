#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages needed to build Stave and run its
# tooling. Idempotent: does nothing (not even `apt-get update`) when every
# package is already installed.
set -euo pipefail

PACKAGES=(
    clang
    libclang-dev
    protobuf-compiler
    jq
    build-essential
    pkg-config
    curl
    flac
    prometheus # promtool and the server check deploy/prometheus and deploy/grafana
    # The script guest (guest/build.sh): QuickJS-ng for wasm32-wasi. Pinned to
    # Debian's versions by guest/toolchain.txt.
    clang-14
    lld-14
    wasi-libc
    libclang-rt-14-dev-wasm32
)

# Concurrent runs (parallel tests each bringing up a localnet) take turns,
# so that a second one waits for the first's apt-get and then finds nothing
# missing instead of failing on apt's lock.
if command -v flock >/dev/null 2>&1; then
    exec 9>"${TMPDIR:-/tmp}/stave-install-deps.lock"
    flock 9
fi

# Installed and configured, by its status alone: `dpkg -s` succeeds for
# removed-but-not-purged packages too, and piping it into `grep -q` under
# pipefail reads a SIGPIPE (a long entry such as prometheus's) as missing.
installed() {
    [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]
}

missing=()
for pkg in "${PACKAGES[@]}"; do
    if ! installed "$pkg"; then
        missing+=("$pkg")
    fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "install-deps: all packages present (${PACKAGES[*]})" >&2
    exit 0
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null 2>&1; then
        SUDO=(sudo)
    else
        echo "install-deps: missing packages (${missing[*]}), not root and sudo is not available" >&2
        exit 1
    fi
fi

echo "install-deps: installing ${missing[*]}" >&2
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
