#!/usr/bin/env bash
# Coordinated omission: a loopback target stalls STALL s every PERIOD s; PayStorm sends a constant
# RATE req/s open loop over CONNECTIONS keep-alive connections. Compares PayStorm's p99 from the
# intended send time with the analytic value, beside the service-time p99 (what a closed-loop or
# CO-affected tool reports).
# Analytic: a fraction STALL/PERIOD of arrivals land in a stall and wait U(0, STALL], so the q-th
# percentile (q > 1 - STALL/PERIOD) is STALL - (1 - q) × PERIOD: p99 = 1 - 0.01 × 5 = 0.95 s.
# Usage: Benchmarks/load/coordinated-omission.sh [RATE=500] [SECONDS=30] [CONNECTIONS=10]
source "$(dirname "$0")/common.sh"
RATE="${1:-500}"
SECONDS_RUN="${2:-30}"
CONNECTIONS="${3:-10}"
STALL=1
PERIOD=5
ensure_paystorm
taskset -c 0 python3 "$ROOT/Benchmarks/load/stall_server.py" --port-file "$WORK/port" --stall "$STALL" --period "$PERIOD" >/dev/null &
PIDS+=($!)
for _ in $(seq 50); do [[ -s "$WORK/port" ]] && break; sleep 0.1; done
URL="http://127.0.0.1:$(cat "$WORK/port")/"
taskset -c 1 "$PAYSTORM" load --url "$URL" --rate "$RATE" --duration "${SECONDS_RUN}s" \
    --connections "$CONNECTIONS" --max-in-flight 4096 --out "$WORK/ps" --quiet
python3 - "$WORK/ps/summary.json" "$STALL" "$PERIOD" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
stall, period = float(sys.argv[2]), float(sys.argv[3])
figures = {f["measure"]: f["micros"] for f in summary["latency"] if f["kind"] == "all"}
analytic = (stall - 0.01 * period) * 1e6
intended = figures["intended"]["p99"]
service = figures["service"]["p99"]
print(f"sent {summary['totals']['sent']} ok {summary['totals']['ok']} missed {summary['totals']['missed']} achieved {summary['achievedRate']}/s")
print(f"analytic p99         {analytic/1000:8.1f} ms")
print(f"paystorm p99 intended {intended/1000:8.1f} ms  ({(intended-analytic)/analytic*100:+.1f}% vs analytic; target within 10%)")
print(f"paystorm p99 service  {service/1000:8.1f} ms  (what service time alone says)")
print(f"p50 intended {figures['intended']['p50']/1000:.2f} ms, service {figures['service']['p50']/1000:.2f} ms; max intended {figures['intended']['max']/1000:.1f} ms")
PY
