#!/bin/sh
# Installs fencepost @VERSION@, the release binary for this machine, from @REPOSITORY@.
#
#   curl --proto '=https' --tlsv1.2 -LsSf @REPOSITORY@/releases/download/v@VERSION@/fencepost-installer.sh | sh
#   sh fencepost-installer.sh [--to DIR] [--version VERSION]
#
# It downloads fencepost-<target>.tar.gz and its .sha256 from the release, checks the archive
# against the checksum (nothing is installed when they differ), and puts the one binary in
# DIR (default ~/.local/bin). In GitHub Actions it also adds DIR to the job's PATH.
#
#   FENCEPOST_INSTALL_DIR   where to put the binary (as --to)
#   FENCEPOST_VERSION       another release than @VERSION@ (as --version)
#   FENCEPOST_TARGET        another build than this machine's, e.g. x86_64-unknown-linux-gnu
#   FENCEPOST_DOWNLOAD_URL  where the archives are instead of the release (a mirror, a folder
#                           served over HTTP, file:///path)
#
# This file is rendered by `scripts/release installer` from scripts/installer.sh, with the
# version and repository of Cargo.toml.
set -eu

version="${FENCEPOST_VERSION:-@VERSION@}"
repository="@REPOSITORY@"
dir="${FENCEPOST_INSTALL_DIR:-${HOME:?HOME is not set}/.local/bin}"

say() { printf 'fencepost-installer: %s\n' "$*" >&2; }
fail() { say "$*"; exit 1; }

while [ $# -gt 0 ]; do
    case "$1" in
        --to) [ $# -ge 2 ] || fail "--to needs a folder"; dir="$2"; shift 2 ;;
        --version) [ $# -ge 2 ] || fail "--version needs a version"; version="${2#v}"; shift 2 ;;
        -h|--help) sed -n '2,20p' "$0" 2>/dev/null || true; exit 0 ;;
        *) fail "unknown argument $1 (--to DIR, --version VERSION)" ;;
    esac
done

# The release's name for this machine: static (musl) Linux binaries, macOS for both chips.
detect_target() {
    os="$(uname -s)"
    arch="$(uname -m)"
    case "$arch" in
        x86_64|amd64) arch=x86_64 ;;
        aarch64|arm64) arch=aarch64 ;;
        *) arch="unsupported-$arch" ;;
    esac
    # An x86_64 shell on Apple silicon (Rosetta) still gets the native build.
    if [ "$os" = Darwin ] && [ "$arch" = x86_64 ] && [ "$(sysctl -n hw.optional.arm64 2>/dev/null || echo 0)" = 1 ]; then
        arch=aarch64
    fi
    case "$os" in
        MINGW*|MSYS*|CYGWIN*|Windows_NT)
            fail "on Windows, download fencepost-x86_64-pc-windows-msvc.zip from $repository/releases/tag/v$version (its .sha256 beside it), or run cargo binstall --git $repository fencepost" ;;
    esac
    case "$os-$arch" in
        Linux-x86_64|Linux-aarch64) echo "$arch-unknown-linux-musl" ;;
        Darwin-x86_64|Darwin-aarch64) echo "$arch-apple-darwin" ;;
        *) fail "no release binary for $os $(uname -m): build from source with cargo install --locked --git $repository fencepost (Windows: use WSL)" ;;
    esac
}

download() { # URL FILE
    if command -v curl >/dev/null 2>&1; then
        curl --proto '=https,http,file' -fsSL "$1" -o "$2"
    elif command -v wget >/dev/null 2>&1; then
        wget -q "$1" -O "$2"
    else
        fail "neither curl nor wget is installed"
    fi
}

sha256_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d ' ' -f 1
    elif command -v shasum >/dev/null 2>&1; then
        shasum -a 256 "$1" | cut -d ' ' -f 1
    else
        fail "neither sha256sum nor shasum is installed: cannot check the download"
    fi
}

target="${FENCEPOST_TARGET:-$(detect_target)}"
base="${FENCEPOST_DOWNLOAD_URL:-$repository/releases/download/v$version}"
base="${base%/}"
archive="fencepost-$target.tar.gz"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT INT TERM

say "downloading $base/$archive"
download "$base/$archive" "$tmp/$archive" || fail "could not download $base/$archive (is there a release v$version for $target?)"
download "$base/$archive.sha256" "$tmp/$archive.sha256" || fail "could not download $base/$archive.sha256"
want="$(cut -d ' ' -f 1 < "$tmp/$archive.sha256")"
got="$(sha256_of "$tmp/$archive")"
[ -n "$want" ] && [ "$want" = "$got" ] || fail "$archive does not match its checksum (expected $want, got $got): nothing was installed"

tar -xzf "$tmp/$archive" -C "$tmp"
[ -f "$tmp/fencepost-$target/fencepost" ] || fail "$archive holds no fencepost-$target/fencepost: nothing was installed"
mkdir -p "$dir"
# Only a file (or nothing) may stand where the binary goes: `mv` would move it into a
# folder and report success.
if [ -d "$dir/fencepost" ]; then
    fail "$dir/fencepost is a folder, where the binary goes: nothing was installed (move it away, or install elsewhere with --to DIR)"
fi
# Copied beside the old binary and renamed over it: a running fencepost is never
# half-written. The copy goes into a file mktemp creates exclusively under a name no one can
# plant a link at beforehand (a shared --to: a fixed name such as .fencepost.new could be a
# symbolic link to a file the copy would overwrite).
new="$(mktemp "$dir/.fencepost.new.XXXXXXXX")" || fail "cannot create a file in $dir: nothing was installed"
trap 'rm -rf "$tmp"; rm -f "$new"' EXIT INT TERM
cat "$tmp/fencepost-$target/fencepost" > "$new"
chmod 755 "$new"
mv -f "$new" "$dir/fencepost"
installed="$("$dir/fencepost" --version 2>/dev/null)" || fail "$dir/fencepost does not run after installing: check the folder (a noexec mount?)"
[ -n "$installed" ] || fail "$dir/fencepost printed no version after installing"
say "installed $installed to $dir/fencepost"

if [ -n "${GITHUB_PATH:-}" ]; then
    echo "$dir" >> "$GITHUB_PATH"
fi
case ":${PATH:-}:" in
    *":$dir:"*) ;;
    *) [ -n "${GITHUB_PATH:-}" ] || say "add $dir to your PATH (e.g. in ~/.profile: export PATH=\"$dir:\$PATH\")" ;;
esac
