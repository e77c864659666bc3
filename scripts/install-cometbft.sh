#!/usr/bin/env bash
# Installs the pinned CometBFT (and optionally abci-cli) with `go install`,
# unless a binary of the pinned version is already on PATH or in $GOPATH/bin.
# Prints the absolute path of the cometbft binary on stdout (progress goes to stderr).
#
# Usage: scripts/install-cometbft.sh [--with-abci-cli]
set -euo pipefail

COMETBFT_VERSION=v0.38.26
COMETBFT_MODULE=github.com/cometbft/cometbft

with_abci_cli=0
for arg in "$@"; do
    case "$arg" in
        --with-abci-cli) with_abci_cli=1 ;;
        -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install-cometbft: unknown argument: $arg" >&2; exit 2 ;;
    esac
done

log() { echo "install-cometbft: $*" >&2; }

GO=$(command -v go || true)
if [[ -z $GO && -x /usr/local/go/bin/go ]]; then
    GO=/usr/local/go/bin/go
fi
if [[ -z $GO ]]; then
    log "go not found on PATH nor at /usr/local/go/bin/go"
    exit 1
fi

gopath=$("$GO" env GOPATH)
gopath=${gopath%%:*}
gobin=$("$GO" env GOBIN)
gobin=${gobin:-$gopath/bin}

want=${COMETBFT_VERSION#v}

# Candidate locations of binary $1: PATH first, then GOBIN, then GOPATH/bin.
candidates() {
    local found
    found=$(command -v "$1" 2>/dev/null || true)
    [[ -n $found ]] && echo "$found"
    echo "$gobin/$1"
    [[ $gobin != "$gopath/bin" ]] && echo "$gopath/bin/$1"
    return 0
}

# cometbft: `cometbft version` must print exactly the pinned version.
cometbft_ok() {
    [[ -x $1 ]] && [[ $("$1" version 2>/dev/null) == "$want" ]]
}

# abci-cli: `abci-cli version` prints the ABCI protocol version, so read the
# module version embedded in the binary instead.
abci_cli_ok() {
    [[ -x $1 ]] && "$GO" version -m "$1" 2>/dev/null |
        awk -v m="$COMETBFT_MODULE" -v v="$COMETBFT_VERSION" '$1 == "mod" && $2 == m && $3 == v { ok = 1 } END { exit !ok }'
}

# ensure NAME CHECK_FN PACKAGE: prints the path of a good binary, installing it if needed.
ensure() {
    local name=$1 check=$2 pkg=$3 c
    while IFS= read -r c; do
        if "$check" "$c"; then
            (cd "$(dirname "$c")" && echo "$(pwd -P)/$(basename "$c")")
            return 0
        fi
    done < <(candidates "$name")
    log "installing $pkg@$COMETBFT_VERSION into $gobin"
    # Run outside the repository so no go.mod/go.work interferes.
    (cd / && "$GO" install "$pkg@$COMETBFT_VERSION")
    if ! "$check" "$gobin/$name"; then
        log "installed $gobin/$name but it does not report version $COMETBFT_VERSION"
        return 1
    fi
    echo "$gobin/$name"
}

cometbft_bin=$(ensure cometbft cometbft_ok "$COMETBFT_MODULE/cmd/cometbft")
log "cometbft $COMETBFT_VERSION: $cometbft_bin"

if [[ $with_abci_cli -eq 1 ]]; then
    abci_cli_bin=$(ensure abci-cli abci_cli_ok "$COMETBFT_MODULE/abci/cmd/abci-cli")
    log "abci-cli $COMETBFT_VERSION: $abci_cli_bin"
fi

echo "$cometbft_bin"
