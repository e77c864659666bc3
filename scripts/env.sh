# shellcheck shell=bash
# Common environment for Stave's shell tooling. Source it, don't execute it:
#   source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
# Sets REPO (repository root), CARGO_TARGET_DIR, PATH (Go and Cargo bin dirs)
# and STAVE_BIN (the release binary cargo builds). Safe to source repeatedly.

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
export REPO

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/stave-target}"

# Prepend a directory to PATH unless it is already there.
_stave_path_prepend() {
    case ":$PATH:" in
        *":$1:"*) ;;
        *) PATH="$1${PATH:+:$PATH}" ;;
    esac
}

_stave_path_prepend "$HOME/.cargo/bin"
_stave_path_prepend /usr/local/go/bin
if command -v go >/dev/null 2>&1; then
    _stave_gopath="$(go env GOPATH 2>/dev/null || true)"
    _stave_gopath="${_stave_gopath%%:*}"
    _stave_path_prepend "${_stave_gopath:-$HOME/go}/bin"
    unset _stave_gopath
else
    _stave_path_prepend "$HOME/go/bin"
fi
unset -f _stave_path_prepend
export PATH

export STAVE_BIN="$CARGO_TARGET_DIR/release/stave"
