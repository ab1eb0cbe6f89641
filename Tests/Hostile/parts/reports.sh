#!/usr/bin/env bash
# Hostile-suite part: report folders someone else touched: a file or folder named `latest`, a shard summary with a
# negative count, a capacity folder given twice. Prints `PASS name` or `FAIL name: why`. Needs $PAYSTORM,
# $PROFILES and $HOSTILE_WORK from run.sh.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../check.sh
source "$here/../check.sh"
dir="$(mktemp -d "$HOSTILE_WORK/reports.XXXX")"
short=(--rate 5 --duration 1s --settle 0 --quiet --no-history)

# A regular file named latest: left as it is, and the run says so (exit 0: the run itself is fine).
mkdir -p "$dir/a"
echo precious >"$dir/a/latest"
check latest-file-kept 0 "is a file, not PayStorm's link: left as it is and not updated" -- \
    "$PAYSTORM" run "$PROFILES/smoke.json5" "${short[@]}" --reports "$dir/a"
if [[ "$(cat "$dir/a/latest")" == precious ]]; then echo "PASS latest-file-content-kept"; else
    echo "FAIL latest-file-content-kept: $(head -c 100 "$dir/a/latest")"; fi

# A real directory named latest: left, and the run says it was not updated.
mkdir -p "$dir/b/latest"
check latest-directory-not-updated 0 "is a directory, not PayStorm's link" -- \
    "$PAYSTORM" run "$PROFILES/smoke.json5" "${short[@]}" --reports "$dir/b"

# A shard's summary whose counts went negative: merge refuses it (65), naming the figure.
"$PAYSTORM" run "$PROFILES/smoke.json5" "${short[@]}" --shard 0/1 --reports "$dir/s" >/dev/null 2>&1
shard="$(ls -d "$dir"/s/*shard0of1 2>/dev/null | head -1)"
if [[ -n "$shard" ]]; then
    python3 - "$shard/summary.json" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
summary["shard"]["figures"]["counts"]["all"]["sent"] = -5
json.dump(summary, open(sys.argv[1], "w"))
PY
    check merge-negative-count 65 "shard.figures.counts.all.sent is negative" -- \
        "$PAYSTORM" merge "$shard" --out "$dir/merged"
else
    echo "FAIL merge-negative-count: the shard run left no report"
fi
rm -rf "$dir"
