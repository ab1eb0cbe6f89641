#!/usr/bin/env bash
# A/B of the run path against a null target: another paystorm build (BASE) and this tree's release build run
# alternately at the same multiples of the minting ceiling, against the same nginx, after one ceiling
# measurement, so that both share the machine's load of the moment. Prints sent/s, sent/s / ceiling, the CPU
# the run spent per sent delivery (user + system, as run.sh counts it), the harness-limited span and the peak
# RSS of each run. Not run in CI.
#
# Usage: BASE=/path/to/other/paystorm [NEW=/path/to/paystorm] [SECONDS_PER_RUN=10] Benchmarks/ceiling/ab.sh FACTORS...
#        (e.g. 0.1 1 2 10)
set -euo pipefail
source "$(dirname "$0")/../load/common.sh"
cd "$ROOT"
[[ -x "${BASE:-}" ]] || { echo "BASE must name another paystorm binary" >&2; exit 64; }
[[ -x /usr/bin/time ]] || apt-get install -y time >/dev/null
RUN_SECONDS="${SECONDS_PER_RUN:-10}"
# NEW=binary compares two builds made before (this tree's is built otherwise).
if [[ -z "${NEW:-}" ]]; then
    swift build -c release --product paystorm 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]' || true
    NEW="$(swift build -c release --show-bin-path)/paystorm"
fi
PAYSTORM="$NEW"
source "$(dirname "$0")/setup.sh"
for factor in "$@"; do
    for which in base new; do
        binary=$([[ $which == base ]] && echo "$BASE" || echo "$NEW")
        scale=$(python3 -c "print(round($SCALE * $factor, 4))")
        /usr/bin/time -f "%U %S %M" -o "$WORK/rss-$which-$factor" "$binary" run "$PROFILE" "${VARS[@]}" --pki "$WORK/pki" \
            --rate-scale "$scale" --reports "$WORK/reports-$which-$factor" --quiet >/dev/null 2>&1 || true
        python3 - "$WORK/reports-$which-$factor/latest/summary.json" "$CEILING" "$factor" "$which" "$RUN_SECONDS" \
            "$(tail -1 "$WORK/rss-$which-$factor")" "${MINT_CPU:-}" <<'PY'
import json, sys
path, ceiling, factor, which, seconds = sys.argv[1:6]
user, system, rss = sys.argv[6].split()
mint = sys.argv[7]
report = json.load(open(path))
requests = report["requests"]
rate = requests["sent"] / float(seconds)
cpu = (float(user) + float(system)) / max(requests["sent"], 1) * 1e6
# Its multiple of what the ceiling (this tree's build) spends minting one delivery.
share = f" ({cpu / float(mint):.2f}x minting {float(mint):.1f})" if mint else ""
limit = report.get("harnessLimited")
span = f"from {limit['fromSeconds']:.0f} s ({limit['reason']})" if limit else "no"
print(f"{factor + 'x':<6} {which:<5} intended {requests['intended']:<8} sent/s {rate:<7.0f} "
      f"ratio {rate / float(ceiling):.2f}  CPU {cpu:.1f} µs/sent{share}  peak RSS {int(rss):,} kB  "
      f"harness-limited {span}")
PY
    done
done
