#!/usr/bin/env bash
# Builds Stave's script guest (QuickJS-ng for wasm32-wasi) reproducibly.
#
#   guest/build.sh            rebuild guest/stave-guest.wasm and its .sha256
#   guest/build.sh --check    rebuild in a scratch directory and compare the
#                             hash with the committed one (CI runs this)
#
# The toolchain is Debian's clang-14, lld-14, wasi-libc and
# libclang-rt-14-dev-wasm32 (scripts/install-deps.sh installs them). Their
# versions are recorded in guest/toolchain.txt: with other versions the
# bytes could differ, so --check fails and prints both sets instead of
# comparing. The C sources are QuickJS-ng 0.16.2 from the rquickjs-sys
# registry crate pinned by guest/sources/Cargo.lock, with
# guest/quickjs-stave.patch applied (QuickJS's stack limit on under WASI,
# and counters of the out-of-memory and stack-overflow errors it raises).
set -euo pipefail

GUEST="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
CHECK=0
[[ ${1:-} == --check ]] && CHECK=1

PACKAGES=(clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32)
toolchain() {
    for p in "${PACKAGES[@]}"; do
        printf '%s %s\n' "$p" "$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null || echo missing)"
    done
}
if [[ $CHECK -eq 1 ]] && ! diff -q <(toolchain) "$GUEST/toolchain.txt" >/dev/null; then
    echo "guest: the toolchain differs from the one the committed guest was built with" >&2
    echo "--- recorded (guest/toolchain.txt)" >&2
    cat "$GUEST/toolchain.txt" >&2
    echo "--- here" >&2
    toolchain >&2
    exit 1
fi

QJS=$(cd "$GUEST/sources" && cargo metadata --locked --format-version 1 |
    jq -r '.packages[] | select(.name == "rquickjs-sys") | .manifest_path')
QJS="$(dirname "$QJS")/quickjs"

# A scratch directory of its own: its path reaches nothing in the output
# (asserts are off, the prefix is mapped and the module is stripped).
WORK=$(mktemp -d "${TMPDIR:-/tmp}/stave-guest-build.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/src"
cp "$QJS"/*.c "$QJS"/*.h "$QJS/LICENSE" "$WORK/src/"
patch -s -d "$WORK/src" -p1 <"$GUEST/quickjs-stave.patch"
cp "$GUEST/stave_guest.c" "$WORK/src/"

CFLAGS=(
    --target=wasm32-wasi --sysroot=/usr -O2 -DNDEBUG -D_GNU_SOURCE
    -ffile-prefix-map="$WORK/src"=. -fno-ident
    -Wno-everything
)
OBJS=()
for f in quickjs.c libregexp.c libunicode.c dtoa.c stave_guest.c; do
    clang-14 "${CFLAGS[@]}" -c "$WORK/src/$f" -o "$WORK/${f%.c}.o"
    OBJS+=("$WORK/${f%.c}.o")
done
# Reactor model (no main; _initialize runs the constructors). The C stack
# is 1 MiB at the bottom of memory, so an overflow past it traps instead of
# writing over data; QuickJS's own limit (256 KiB by default) comes first.
clang-14 --target=wasm32-wasi --sysroot=/usr -mexec-model=reactor -fuse-ld=lld \
    -Wl,--stack-first -Wl,-z,stack-size=1048576 -Wl,--strip-all \
    "${OBJS[@]}" -lm -o "$WORK/stave-guest.wasm"

HASH=$(sha256sum "$WORK/stave-guest.wasm" | cut -d' ' -f1)
if [[ $CHECK -eq 1 ]]; then
    WANT=$(cut -d' ' -f1 "$GUEST/stave-guest.wasm.sha256")
    if [[ $HASH != "$WANT" ]]; then
        echo "guest: the rebuilt guest is $HASH, the committed one is $WANT" >&2
        exit 1
    fi
    if [[ $(sha256sum "$GUEST/stave-guest.wasm" | cut -d' ' -f1) != "$WANT" ]]; then
        echo "guest: guest/stave-guest.wasm does not match guest/stave-guest.wasm.sha256" >&2
        exit 1
    fi
    echo "guest: rebuilt, sha256 $HASH matches" >&2
else
    cp "$WORK/stave-guest.wasm" "$GUEST/stave-guest.wasm"
    echo "$HASH  stave-guest.wasm" >"$GUEST/stave-guest.wasm.sha256"
    toolchain >"$GUEST/toolchain.txt"
    echo "guest: built $GUEST/stave-guest.wasm ($(stat -c %s "$GUEST/stave-guest.wasm") bytes), sha256 $HASH" >&2
fi
