#!/usr/bin/env bash
# Ledger webhook benchmark: sustained deliveries/s with full verification (outer + 2 nested ES256 JWS),
# the share of time spent verifying, and OpenSSL's raw P-256 verify rate measured in the same run.
# Usage: Benchmarks/ledger/run.sh   (env: DURATION=15 CONNECTIONS=16 COUNT=20000 THREADS=4 BUILD=release
#        LEDGER_ARGS="--flaw ack-before-commit" to take commits out of the request path,
#        PAYSTORM=<a paystorm binary> to measure that build instead of building this tree, e.g. a copy of
#        the previous build, run alternately with this one so that both see the same load)
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION=${DURATION:-15}; CONNECTIONS=${CONNECTIONS:-16}; COUNT=${COUNT:-20000}
THREADS=${THREADS:-4}; BUILD=${BUILD:-release}; CORES=$(nproc)
if [ -n "${PAYSTORM:-}" ]; then
    BIN=$PAYSTORM
else
    swift build -c "$BUILD" --product paystorm >/dev/null
    BIN="$(swift build -c "$BUILD" --show-bin-path)/paystorm"
fi
command -v wrk >/dev/null || apt-get install -y -qq wrk >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq wrk >/dev/null; }
WORK=$(mktemp -d); trap 'kill "${PID:-0}" 2>/dev/null || true; rm -rf "$WORK"' EXIT

echo "minting $COUNT DID_RENEW notifications (3 JWS each)…" >&2
python3 Benchmarks/ledger/mint.py "$WORK" "$COUNT" com.paystorm.bench

RAW=$(openssl speed -seconds 3 ecdsap256 2>/dev/null | awk '/nistp256/ {print $NF}' | tail -1)

"$BIN" ledger serve --db "$WORK/ledger.sqlite" --trust "$WORK/root.der" --bundle-id com.paystorm.bench \
    --environment Sandbox --threads "$THREADS" ${LEDGER_ARGS:-} > "$WORK/address" 2> "$WORK/ledger.err" &
PID=$!
for _ in $(seq 100); do [ -s "$WORK/address" ] && break; sleep 0.1; done
ADDR=$(head -1 "$WORK/address")
cpu() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
TICKS=$(getconf CLK_TCK)
CPU0=$(cpu)
wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" -s Benchmarks/ledger/bodies.lua "http://$ADDR" -- "$WORK/bodies.jsonl" \
    > "$WORK/wrk.txt"
CPU1=$(cpu)
curl -s "http://$ADDR/metrics" > "$WORK/metrics.txt"
# CPU ticks since start of libmicrohttpd's threads and of the others (the committer; main is idle).
THREAD_CPU=$(for t in /proc/"$PID"/task/*; do echo "$(cat "$t/comm") $(awk '{print $14 + $15}' "$t/stat")"; done |
    awk '$1 == "MHD-worker" {h += $2; next} {o += $2} END {print h + 0, o + 0}')
kill -TERM "$PID"; wait "$PID" || true

metric() { awk -v name="$1" '$1 == name {print $2}' "$WORK/metrics.txt"; }
OK=$(awk -F'[{}", =]+' '/^paystorm_ledger_requests_total/ && /route="\/notifications"/ && /status="200"/ {print $NF}' "$WORK/metrics.txt")
BAD=$(awk '/^paystorm_ledger_requests_total/ && /notifications/ && !/status="200"/ {s += $NF} END {print s + 0}' "$WORK/metrics.txt")
VERIFY=$(metric paystorm_ledger_verify_seconds_total)
HANDLE=$(metric paystorm_ledger_handle_seconds_total)
VERIFIES=$(metric paystorm_ledger_verifications_total)
COMMITS=$(metric paystorm_ledger_commits_total); EVENTS=$(metric paystorm_ledger_committed_events_total)
COMMIT_SECONDS=$(metric paystorm_ledger_commit_seconds_total)
python3 - "$OK" "$BAD" "$DURATION" "$VERIFY" "$HANDLE" "$VERIFIES" "$RAW" "$CORES" "$CPU0" "$CPU1" "$TICKS" "$THREADS" "$COMMITS" "$EVENTS" "$COMMIT_SECONDS" $THREAD_CPU <<'PY'
import sys
ok, bad, duration, verify, handle, verifies, raw, cores, cpu0, cpu1, ticks, threads, commits, events, commit_s, \
    http_ticks, other_ticks = sys.argv[1:]
ok, bad, duration = int(ok or 0), int(bad or 0), float(duration)
verify, handle, verifies, raw, cores = float(verify), float(handle), float(verifies), float(raw), int(cores)
cpu = (int(cpu1) - int(cpu0)) / int(ticks)
rate = ok / duration
per = verifies / max(1, ok + bad)
ideal = raw * cores / per
print(f"webhook deliveries/s (200, full verification): {rate:.0f}  (non-200: {bad})")
print(f"verifies per notification: {per:.2f}; openssl speed ecdsap256 verify/s (1 core): {raw:.0f}; cores: {cores}")
print(f"ceiling = raw x cores / verifies per notification = {ideal:.0f}/s; achieved {100 * rate / ideal:.0f}% of it")
used = cpu / duration
print(f"per core the ledger used ({used:.2f}): {rate / used:.0f} deliveries/s vs ceiling {raw / per:.0f}/s per core "
      f"= {100 * (rate / used) / (raw / per):.0f}%")
print(f"CPU verifying: {verify:.1f} s = {100 * verify / cpu:.0f}% of ledger CPU ({cpu:.1f} s over {duration:.0f} s, "
      f"{threads} HTTP threads), {100 * verify / handle:.0f}% of POST handler CPU; "
      f"{1e6 * verify / max(1, verifies):.0f} us CPU per JWS vs {1e6 / raw:.0f} us for a raw openssl verify")
per_delivery = 1e6 / int(ticks) / max(1, ok + bad)
print(f"CPU per delivery: HTTP threads {int(http_ticks) * per_delivery:.0f} us, committer {int(other_ticks) * per_delivery:.0f} us "
      f"(3 raw verifies: {3e6 / raw:.0f} us)")
commits, events, commit_s = int(commits or 0), int(events or 0), float(commit_s or 0)
if commits:
    print(f"SQLite commits: {commits} ({events / commits:.1f} deliveries each, {1000 * commit_s / commits:.2f} ms each)")
PY
grep -E "Requests/sec|Latency" "$WORK/wrk.txt" >&2
echo "binary: $BIN; load average at the end: $(cut -d" " -f1-3 /proc/loadavg) (other processes share these cores)"
