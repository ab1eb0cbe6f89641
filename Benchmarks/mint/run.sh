#!/usr/bin/env bash
# Minting and verification throughput: builds paystorm in release mode, then runs
# `paystorm bench mint` and `paystorm bench verify`. The figures depend on the machine and on
# whatever else runs on it; each phase interleaves raw OpenSSL and PayStorm slices so that both
# see the same load. Output goes to stdout and to Reports/bench-mint-<UTC time>.txt.
#
# Usage: Benchmarks/mint/run.sh [--seconds N] [--threads N] [--no-openssl-speed]
set -euo pipefail
cd "$(dirname "$0")/../.."

swift build -c release --product paystorm 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]' || true
binary=.build/release/paystorm
[[ -x "$binary" ]] || { echo "release build failed" >&2; exit 70; }

mkdir -p Reports
report="Reports/bench-mint-$(date -u +%Y%m%dT%H%M%SZ).txt"
{
    echo "# $(uname -srm), $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# $binary bench mint $*"
    "$binary" bench mint "$@"
    echo
    echo "# $binary bench verify $*"
    "$binary" bench verify "$@"
} | tee "$report"
echo "saved to $report"
