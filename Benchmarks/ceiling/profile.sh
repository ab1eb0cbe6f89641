#!/usr/bin/env bash
# Where a run's CPU goes against the null target: the same setup as run.sh (nginx `return 200`, the ceiling measured
# first), then `perf record -F 999 -g` of one `paystorm run` at FACTOR times the ceiling, and the share of the
# process's samples per thread (the engine is the main thread; the mint producer and the signing workers follow),
# with each thread's top shared objects and symbols, and for the busiest threads the share of their samples under the
# run path's parts (history, oracle, transport, kernel; a sample counts for each part on its stack). Needs `perf`
# (Debian's linux-perf). Not run in CI.
#
# Usage: [PAYSTORM=binary] [PERF_DATA=path] Benchmarks/ceiling/profile.sh [SECONDS=10] [FACTOR=1]
set -euo pipefail
source "$(dirname "$0")/../load/common.sh"
cd "$ROOT"
RUN_SECONDS="${1:-10}"
FACTOR="${2:-1}"
command -v perf >/dev/null || { echo "profile.sh: perf is not installed (apt-get install linux-perf)" >&2; exit 69; }
command -v nginx >/dev/null || apt-get install -y nginx-light >/dev/null
ensure_paystorm
source "$(dirname "$0")/setup.sh"
scale=$(python3 -c "print(round($SCALE * $FACTOR, 4))")
perf record -q -F 999 -g -o "$WORK/perf.data" -- "$PAYSTORM" run "$PROFILE" "${VARS[@]}" --pki "$WORK/pki" \
    --rate-scale "$scale" --reports "$WORK/reports" --quiet >/dev/null 2>&1 || true
python3 - "$WORK/reports/latest/summary.json" "$CEILING" "$RUN_SECONDS" "$FACTOR" <<'PY'
import json, sys
requests = json.load(open(sys.argv[1]))["requests"]
rate = requests["sent"] / float(sys.argv[3])
print(f"{sys.argv[4]}x: {rate:,.0f} sent/s, ratio {rate / float(sys.argv[2]):.2f}")
PY
SENT=$(python3 -c "import json; print(json.load(open('$WORK/reports/latest/summary.json'))['requests']['sent'])")
perf script -i "$WORK/perf.data" -F tid,ip,sym,dso -G 2>/dev/null | python3 -c '
import collections, sys
sent = int(sys.argv[1])
dsos, symbols = collections.defaultdict(collections.Counter), collections.defaultdict(collections.Counter)
for line in sys.stdin:
    parts = line.split()
    if len(parts) < 2:
        continue
    dsos[parts[0]][parts[-1].strip("()").rsplit("/", 1)[-1]] += 1
    symbols[parts[0]][" ".join(parts[2:-1])[:80]] += 1
total = sum(sum(c.values()) for c in dsos.values())
for tid, counts in sorted(dsos.items(), key=lambda kv: -sum(kv[1].values()))[:6]:
    n = sum(counts.values())
    # At 999 samples a second of CPU, the samples of a thread say its CPU time, here per sent delivery.
    print(f"thread {tid}: {100 * n / total:.1f}% of the samples, {n / 999 / sent * 1e6:.1f} µs per sent delivery")
    print("   " + ", ".join(f"{name} {100 * k / n:.0f}%" for name, k in counts.most_common(5)))
    print("   " + ", ".join(f"{name} {100 * k / n:.1f}%" for name, k in symbols[tid].most_common(6)))
' "$SENT"
perf script -i "$WORK/perf.data" -F tid,ip,sym,dso 2>/dev/null | python3 -c '
import collections, sys
sent = int(sys.argv[1])
parts = {"history (HistoryLog, gzip)": ("HistoryLog", "ChunkedGzipLog", "libz.so", "libdeflate.so"),
         "oracle (Checker)": ("Checking7Checker",), "transport (Load.Transport)": ("Load9Transport",),
         "kernel": ("kernel.kallsyms",), "minting (libcrypto)": ("libcrypto",)}
counts, totals = collections.defaultdict(collections.Counter), collections.Counter()
tid, stack = None, []
def close():
    if tid is None:
        return
    totals[tid] += 1
    for name, keys in parts.items():
        if any(key in frame for frame in stack for key in keys):
            counts[tid][name] += 1
for line in sys.stdin:
    if not line.strip():
        close()
        tid, stack = None, []
    elif not line.startswith("\t"):
        tid = line.split()[0]
    else:
        stack.append(line)
close()
for tid, n in totals.most_common(2):
    print(f"thread {tid}, samples under: " + ", ".join(f"{name} {100 * counts[tid][name] / n:.0f}% "
          f"({counts[tid][name] / 999 / sent * 1e6:.1f} µs)" for name in parts))
' "$SENT"
# PERF_DATA=path keeps the recording for `perf report -i path`.
[[ -z "${PERF_DATA:-}" ]] || cp "$WORK/perf.data" "$PERF_DATA"
