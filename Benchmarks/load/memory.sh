#!/usr/bin/env bash
# Memory: a constant-rate run against loopback nginx, sampling PayStorm's RSS every 5 s; RSS
# must stay flat (< 10% growth after the first minute). The issue asks for 10 minutes (600 s).
# Usage: Benchmarks/load/memory.sh [SECONDS=600] [RATE=5000]
source "$(dirname "$0")/common.sh"
SECONDS_RUN="${1:-600}"
RATE="${2:-5000}"
ensure_paystorm
make_body
start_nginx 0
URL="http://127.0.0.1:$NGINX_PORT/"
taskset -c 1 "$PAYSTORM" load --url "$URL" --rate "$RATE" --duration "${SECONDS_RUN}s" --connections 32 \
    --body-file "$WORK/body.json" --out "$WORK/ps" --quiet &
pid=$!
: >"$WORK/rss"
start=$(date +%s)
while kill -0 "$pid" 2>/dev/null; do
    rss="$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)"
    [[ -n "$rss" ]] && echo "$(( $(date +%s) - start )) $rss" >>"$WORK/rss"
    sleep 5
done
wait "$pid" || true
python3 - "$WORK/rss" "$WORK/ps/summary.json" <<'PY'
import json, sys
samples = [tuple(map(int, line.split())) for line in open(sys.argv[1]) if line.strip()]
summary = json.load(open(sys.argv[2]))
after = [rss for t, rss in samples if t >= 60] or [rss for _, rss in samples]
first, last, peak = after[0], after[-1], max(after)
print(f"run {summary['durationSeconds']} s, sent {summary['totals']['sent']}, achieved {summary['achievedRate']}/s")
print("rss kB by time: " + ", ".join(f"{t}s={rss}" for t, rss in samples[:: max(1, len(samples) // 12)]))
print(f"rss after first minute (or first sample): {first} kB; at end {last} kB; peak {peak} kB; growth {(last - first) / first * 100:+.1f}% (target < 10%)")
PY
