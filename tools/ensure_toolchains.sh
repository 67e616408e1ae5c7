#!/usr/bin/env bash
# Install what the tests need from Debian, when it is missing: the Debian 12 packages of the
# Go and C++ starter kits (tests/hosting/test_starter_kits.py), Node.js + npm (the Node kit and
# sample_bots/node_random), and Chromium with a font, the real browser the page tests drive
# through Playwright (tests/browser.py; never a browser downloaded by Playwright). `make test`
# runs this first, so CI installs them from nothing.
#
# As root (or with passwordless sudo) on Debian/Ubuntu it runs apt-get quietly, printing one
# line; otherwise it prints what is missing and the command that installs it, and exits 0:
# the tests then skip those kits with the reason (or fail, where CI is set).
#
# Go: golang-github-golang-protobuf-1-5-dev is named on purpose. golang-google-grpc-dev
# accepts 1-3 or 1-5 and apt picks 1-3, the APIv1 runtime that cannot read what Debian's
# protoc-gen-go (APIv2) generates: it compiles, then panics at the first call
# (referee/hosting/starters/go/README.md).
#
# Then the Node kit's packages (runtimes/node: @grpc/grpc-js, @grpc/proto-loader, pinned by its
# package-lock.json) into runtimes/node/node_modules with `npm ci`: the sandbox gives them to
# Node bots and their builds read-only on NODE_PATH, since a build has no network.
set -euo pipefail

RUNTIME="$(cd "$(dirname "$0")/.." && pwd)/runtimes/node"
node_runtime() {
    if ! command -v npm >/dev/null; then return 0; fi
    if [[ -f "$RUNTIME/node_modules/.package-lock.json" &&
        ! "$RUNTIME/package-lock.json" -nt "$RUNTIME/node_modules/.package-lock.json" ]]; then
        return 0
    fi
    echo "ensure_toolchains: installing the Node kit's packages into $RUNTIME/node_modules"
    if ! (cd "$RUNTIME" && npm ci --no-audit --no-fund --loglevel=error) >"$LOG" 2>&1; then
        echo "ensure_toolchains: npm ci failed; the end of $LOG:" >&2
        tail -n 20 "$LOG" >&2
        exit 1
    fi
}

GO_PACKAGES=(
    golang-go make protobuf-compiler protoc-gen-go protoc-gen-go-grpc
    golang-google-grpc-dev golang-google-protobuf-dev golang-github-golang-protobuf-1-5-dev
)
CPP_PACKAGES=(
    g++ make pkg-config protobuf-compiler protobuf-compiler-grpc libgrpc++-dev libprotobuf-dev
)
# Headless Chromium renders text only with a font installed; DejaVu is Debian's default.
BROWSER_PACKAGES=(chromium fonts-dejavu-core)
LOG="${TMPDIR:-/tmp}/ttr-ensure-toolchains.log"

installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
    echo "ensure_toolchains: not a Debian system; the Go and C++ starter kits need: Go," \
        "protoc with protoc-gen-go and protoc-gen-go-grpc, grpc-go; g++, pkg-config, gRPC" \
        "C++ (grpc++, grpc_cpp_plugin); Node.js 18+ with npm; the page tests need Chromium" \
        "(or TTR_CHROMIUM=/path/to/chrome). Their tests skip without them."
    node_runtime
    exit 0
fi

missing=()
for pkg in "${GO_PACKAGES[@]}" "${CPP_PACKAGES[@]}" "${BROWSER_PACKAGES[@]}"; do
    if ! installed "$pkg" && [[ " ${missing[*]-} " != *" $pkg "* ]]; then
        missing+=("$pkg")
    fi
done
# Node.js may come from elsewhere than Debian (a newer build with its own npm): the commands
# count, not the packages.
if ! command -v node >/dev/null; then missing+=(nodejs); fi
if ! command -v npm >/dev/null; then missing+=(npm); fi

if [[ ${#missing[@]} -eq 0 ]]; then
    node_runtime
    exit 0
fi

if [[ $(id -u) -eq 0 ]]; then
    sudo=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
else
    echo "ensure_toolchains: missing ${missing[*]}; the tests that need them will skip." \
        "Install with: sudo apt-get install --no-install-recommends ${missing[*]}"
    node_runtime
    exit 0
fi

echo "ensure_toolchains: installing ${missing[*]} (log: $LOG)"
start=$SECONDS
export DEBIAN_FRONTEND=noninteractive
if ! { "${sudo[@]}" apt-get update -qq &&
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$LOG" 2>&1; then
    echo "ensure_toolchains: apt-get failed; the end of $LOG:" >&2
    tail -n 20 "$LOG" >&2
    exit 1
fi
echo "ensure_toolchains: installed in $((SECONDS - start)) s"
node_runtime
