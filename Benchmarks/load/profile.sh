#!/usr/bin/env bash
# Where the load engine's time goes: `perf record` on PayStorm's closed loop against loopback nginx
# `return 200` (same setup as vs-wrk.sh), then the share of samples per shared object (the kernel,
# libcurl, libc, PayStorm's Swift). Needs `perf` (Debian's linux-perf) and a kernel that allows it.
# Usage: Benchmarks/load/profile.sh [CONNECTIONS=32] [SECONDS=5] [extra paystorm load options...]
#   e.g. Benchmarks/load/profile.sh 32 5 --libcurl-transfers
source "$(dirname "$0")/common.sh"
CONNECTIONS="${1:-32}"
SECONDS_RUN="${2:-5}"
shift $(( $# < 2 ? $# : 2 ))
command -v perf >/dev/null || { echo "profile.sh: perf is not installed (apt-get install linux-perf)" >&2; exit 69; }
ensure_paystorm
make_body
start_nginx 0
perf record -q -o "$WORK/perf.data" -- taskset -c 1 "$PAYSTORM" load --url "http://127.0.0.1:$NGINX_PORT/" \
    --users "$CONNECTIONS" --duration "${SECONDS_RUN}s" --connections "$CONNECTIONS" --body-file "$WORK/body.json" \
    --header 'Content-Type: application/json' --out "$WORK/ps" --quiet "$@" 2>/dev/null
echo "achieved $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["achievedRate"])' "$WORK/ps/summary.json") req/s ${*:-}"
perf report -i "$WORK/perf.data" --no-children --sort dso -g none 2>/dev/null | grep -vE '^(#|$)' | head -8
