#!/usr/bin/env bash
# RSS over a long `paystorm run` (the whole run path: world, chaos, minting, engine, oracle, history): samples
# the paystorm process's resident memory every 10 s and prints, minute by minute, RSS beside the delivery rate
# from the run's timeseries.csv (sent, ok and failed per second, missed, late, most in flight, p99), so a
# reader sees whether the target kept up; then the minute-2 RSS, the last one within the schedule and their
# ratio, the most after the schedule (settling, the final probe, the report), the exit code, the verdict and the
# violations. Issue 11's goal: the end within 10% of minute 2 over a 30-minute soak of a
# steady load. Not run in CI.
#
# Usage: Benchmarks/soak/rss.sh [SECONDS] [PROFILE] [RATE]
#   SECONDS  the schedule's length (default 1800)
#   PROFILE  default Benchmarks/soak/rss-soak.json5: a 60 s warm-up brings deliveries to their plateau near
#            100/s against the embedded ledger before minute 2 (smoke-60x300.json5 overloads it within
#            minutes: renewals every 10 s of 5,000 accounts)
#   RATE     actions/s (default: the profile's)
# The profile's single constant schedule segment is rewritten (other segments, such as a warm-up, are kept and
# add to the schedule's length); seed 42, release build. KEEP=DIR keeps the
# report, the RSS samples and the console output in DIR; PAYSTORM=BINARY measures that binary instead of
# building this checkout's (to compare a previous build side by side); ARGS="..." adds `paystorm run` options
# (such as `--history-max-mb 8`, to watch the history's cap drop chunks over a soak). To attribute a growth to
# the code that allocates it, record the same run under heaptrack and read it with
# Benchmarks/soak/heap-growth.py (live heap by call site at chosen minutes; usage in its header).
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_TOTAL="${1:-1800}"; PROFILE="${2:-Benchmarks/soak/rss-soak.json5}"; RATE="${3:-}"
if [[ -n "${PAYSTORM:-}" ]]; then
    BIN="$PAYSTORM"
else
    swift build -c release --product paystorm >/dev/null
    BIN="$(swift build -c release --show-bin-path)/paystorm"
fi
if [[ -n "${KEEP:-}" ]]; then
    WORK="$KEEP"; mkdir -p "$WORK"
else
    WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT
fi
python3 - "$PROFILE" "$SECONDS_TOTAL" "$RATE" "$WORK/schedule-seconds" > "$WORK/rss.json5" <<'PY'
import re, sys
path, seconds, rate = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path).read()
segment = re.compile(r'\{\s*kind:\s*"constant",\s*rate:\s*([0-9.]+),\s*seconds:\s*[0-9.]+\s*\}')
if len(segment.findall(text)) != 1:
    sys.exit(f"rss: {path}: schedule: expected one constant segment to rewrite")
text = segment.sub(lambda m: '{ kind: "constant", rate: %s, seconds: %s }' % (rate or m.group(1), seconds), text)
sys.stdout.write(text)
# The whole schedule's length (every segment's seconds), for the figure at its end.
schedule = re.search(r'schedule:\s*\[(.*?)\]', text, re.S).group(1)
total = sum(float(s) for s in re.findall(r'seconds:\s*([0-9.]+)', schedule))
print(int(total), file=open(sys.argv[4], "w"))
PY
# shellcheck disable=SC2086 # ARGS is a list of options, split on purpose
"$BIN" run "$WORK/rss.json5" --seed 42 --reports "$WORK/reports" --quiet ${ARGS:-} > "$WORK/out.txt" 2>&1 &
pid=$!
# The embedded ledger is a child process (`paystorm ledger serve`): its RSS is sampled beside, not in, the run's.
echo "seconds,rss_kb,ledger_rss_kb" > "$WORK/rss.csv"
start=$(date +%s)
while kill -0 "$pid" 2>/dev/null; do
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
    ledger=0
    for child in $(cat /proc/"$pid"/task/*/children 2>/dev/null); do
        kb=$(awk '/^VmRSS/ {print $2}' "/proc/$child/status" 2>/dev/null || true)
        ledger=$(( ledger + ${kb:-0} ))
    done
    [[ -n "$rss" ]] && echo "$(( $(date +%s) - start )),$rss,$ledger" >> "$WORK/rss.csv"
    sleep 10
done
code=0; wait "$pid" || code=$?
tail -3 "$WORK/out.txt"
python3 - "$WORK" "$code" "$(cat "$WORK/schedule-seconds")" <<'PY'
import csv, glob, json, sys
work, code, schedule = sys.argv[1], sys.argv[2], int(sys.argv[3])
samples = list(csv.DictReader(open(f"{work}/rss.csv")))
rows = [(int(r["seconds"]), int(r["rss_kb"])) for r in samples]
ledger = [(int(r["seconds"]), int(r["ledger_rss_kb"])) for r in samples]
series = sorted(glob.glob(f"{work}/reports/*/timeseries.csv"))
seconds = list(csv.DictReader(open(series[0]))) if series else []
failed = ("non_2xx", "timeout", "reset", "refused", "dns", "tls", "other")
print("minute  rss_kB  ledger_kB  sent/s  ok/s  failed/s  missed  late  max_in_flight  max_p99_ms")
for minute in range(0, max([s for s, _ in rows] + [0]) // 60 + 1):
    rss = [kb for s, kb in rows if minute * 60 < s <= (minute + 1) * 60]
    child = [kb for s, kb in ledger if minute * 60 < s <= (minute + 1) * 60]
    span = [r for r in seconds if minute * 60 < float(r["second"]) <= (minute + 1) * 60]
    if not rss and not span:
        continue
    n = max(len(span), 1)
    total = lambda key: sum(int(r[key]) for r in span)
    print(f"{minute + 1:>6}  {rss[-1] if rss else '-':>7}  {child[-1] if child else '-':>9}  {total('sent') / n:>6.0f}  {total('ok') / n:>4.0f}"
          f"  {sum(total(k) for k in failed) / n:>8.1f}  {total('missed'):>6}  {total('late'):>4}"
          f"  {max((int(r['in_flight']) for r in span), default=0):>13}"
          f"  {max((int(r['p99_us']) for r in span), default=0) / 1000:>10.1f}")
summaries = glob.glob(f"{work}/reports/*/summary.json")
verdict = "no summary"
if summaries:
    s = json.load(open(summaries[0]))
    verdict = f"verdict {s.get('verdict')}, {len(s.get('violations', []))} violations"
minute2 = next((kb for s, kb in rows if s >= 120), None)
if minute2 is None:
    sys.exit(f"rss: the run ended before minute 2 (exit {code}, {verdict})")
# The soak's figure is the last sample within the schedule; what follows it (settling, the final probe, the
# report) is a transient of the run's end, printed beside it.
last = [r for r in rows if r[0] <= schedule][-1]
after = max((kb for s, kb in rows if s > schedule), default=None)
tail = f"; after the schedule (final probe, report) at most {after} kB" if after else ""
print(f"RSS at minute 2: {minute2} kB; at {last[0]} s: {last[1]} kB; ratio {last[1] / minute2:.3f} "
      f"({'within' if last[1] <= minute2 * 1.10 else 'over'} 10%){tail}; paystorm exit {code}; {verdict}")
PY
