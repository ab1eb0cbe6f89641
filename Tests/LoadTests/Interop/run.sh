#!/usr/bin/env bash
# HdrHistogram interop: runs a short `paystorm load` against a loopback Python server and checks
# its latency.hlog with the PyPI `hdrhistogram` package, installed into Tests/LoadTests/Interop/.venv on
# first use (scripts/python-venv.sh), so no global Python package is needed.
# Usage: Tests/LoadTests/Interop/run.sh   (uses $PAYSTORM, else builds .build/debug/paystorm with CI's flags)
set -euo pipefail
cd "$(dirname "$0")/../../.."
checker_python="$(scripts/python-venv.sh Tests/LoadTests/Interop/.venv hdrh hdrhistogram)"
PAYSTORM="$(scripts/paystorm-binary.sh)"
work="$(mktemp -d)"
server_pid=""
cleanup() { [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
python3 Benchmarks/load/stall_server.py --port-file "$work/port" --stall 0 &
server_pid=$!
for _ in $(seq 50); do [[ -s "$work/port" ]] && break; sleep 0.1; done
port="$(cat "$work/port")"
"$PAYSTORM" load --url "http://127.0.0.1:$port/" --rate 300 --duration 3s --kind webhook \
    --connections 8 --out "$work/run" --quiet
"$checker_python" Tests/LoadTests/Interop/check_hlog.py "$work/run"
echo "hdrhistogram interop passed"
