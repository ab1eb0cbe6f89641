#!/usr/bin/env bash
# RSS over a long `paystorm run` (the whole run path: world, chaos, minting, engine, oracle, history): samples
# the paystorm process's resident memory every 10 s and prints the minute-2 value, the last value and their
# ratio. Issue 11's goal: the end within 10% of minute 2 over a 30-minute soak. Not run in CI.
#
# Usage: Benchmarks/soak/rss.sh [SECONDS] [RATE]     (defaults: 1800 s at 60 actions/s, 5,000 accounts)
# Runs the smoke profile's mix and faults at a constant RATE against the embedded correct ledger, release build.
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_TOTAL="${1:-1800}"; RATE="${2:-60}"
swift build -c release --product paystorm >/dev/null
BIN="$(swift build -c release --show-bin-path)/paystorm"
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
python3 - "$SECONDS_TOTAL" "$RATE" > "$WORK/rss.json5" <<'PY'
import sys
text = open("Benchmarks/soak/smoke-60x300.json5").read()
text = text.replace('rate: 60, seconds: 300', f'rate: {sys.argv[2]}, seconds: {sys.argv[1]}')
text = text.replace('name: "smoke-soak"', 'name: "rss-soak"')
sys.stdout.write(text)
PY
"$BIN" run "$WORK/rss.json5" --seed 42 --reports "$WORK/reports" --quiet > "$WORK/out.txt" 2>&1 &
pid=$!
echo "seconds,rss_kb" > "$WORK/rss.csv"
start=$(date +%s)
while kill -0 "$pid" 2>/dev/null; do
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    [[ -n "$rss" ]] && echo "$(( $(date +%s) - start )),$rss" >> "$WORK/rss.csv"
    sleep 10
done
code=0; wait "$pid" || code=$?
tail -3 "$WORK/out.txt"
python3 - "$WORK/rss.csv" "$code" <<'PY'
import csv, sys
rows = [(int(r["seconds"]), int(r["rss_kb"])) for r in csv.DictReader(open(sys.argv[1]))]
minute2 = next((kb for s, kb in rows if s >= 120), None)
if minute2 is None:
    sys.exit(f"rss: the run ended before minute 2 (exit {sys.argv[2]})")
last = rows[-1]
print(f"RSS at minute 2: {minute2} kB; at {last[0]} s: {last[1]} kB; ratio {last[1] / minute2:.3f} "
      f"({'within' if last[1] <= minute2 * 1.10 else 'over'} 10%); paystorm exit {sys.argv[2]}")
PY
