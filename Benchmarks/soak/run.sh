#!/usr/bin/env bash
# Soak: runs every profile in Profiles/ that targets the embedded reference ledger, stretched to N times
# its schedule, over several seeds, and fails on any invariant violation. PayStorm must never fail its own
# correct ledger, however long it runs (folding, expiries, retries only show up in long runs).
# Not run in CI: at the defaults it takes an hour or more.
#
# Usage: Benchmarks/soak/run.sh [--factor N] [--seeds S] [--first-seed F] [--rate-scale X] [--profile NAME]...
#                                [--history] [--build release|debug]
#   --factor N     stretch every schedule segment N times (default 5)
#   --seeds S      S seeds per profile, F..F+S-1 (default 3)
#   --first-seed F the first seed (default 1)
#   --rate-scale X every rate X times the profile's (paystorm run --rate-scale): denser runs, where deliveries
#                  overtake each other and checks meet boundaries more often, find what longer ones do not
#                  (the wider sweep: --factor 1 --rate-scale 40 --seeds 12 --profile detect --profile smoke)
#   --profile NAME only this profile (smoke, detect...); repeatable. Without it: detect, forgery and smoke.
#                  soak (four hours at 500 actions/s) and capacity (a step search) run only when named.
#   --history      keep each run's delivery history, so that a violating run's copy in Reports/ holds what
#                  explaining it needs (a rerun of the seed may not repeat a failure that hangs on the machine's
#                  timing); off by default, as it is large: 37 MB for smoke's minute at 80 times its rate
#   --build B      the build to run (default release)
# Exit status: 0 if no run had a violation, 1 if one did, 70 if a run could not be made.
# Unknown verdicts and breached thresholds (a shared machine is slow) are listed but do not fail the soak.
set -euo pipefail
cd "$(dirname "$0")/../.."
FACTOR=5; SEEDS=3; FIRST=1; SCALE=""; BUILD=release; ONLY=(); HISTORY=(--no-history)
while (( $# )); do
    case "$1" in
        --factor) FACTOR="$2"; shift 2 ;;
        --seeds) SEEDS="$2"; shift 2 ;;
        --first-seed) FIRST="$2"; shift 2 ;;
        --rate-scale) SCALE="$2"; shift 2 ;;
        --profile) ONLY+=("$2"); shift 2 ;;
        --history) HISTORY=(); shift ;;
        --build) BUILD="$2"; shift 2 ;;
        *) echo "soak: unknown argument $1 (see the usage at the top of $0)" >&2; exit 64 ;;
    esac
done
(( ${#ONLY[@]} )) || ONLY=(detect forgery smoke)
swift build -c "$BUILD" --product paystorm >/dev/null
BIN="$(swift build -c "$BUILD" --show-bin-path)/paystorm"
WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT

violated=0; failed=0; lines=()
for profile in Profiles/*.json5; do
    name=$(basename "$profile" .json5)
    [[ " ${ONLY[*]} " == *" $name "* ]] || continue
    grep -Eq 'embeddedLedger:[[:space:]]*true' "$profile" || continue
    scripts/stretch-profile.py "$profile" "$FACTOR" > "$WORK/$name.json5"
    for seed in $(seq "$FIRST" $(( FIRST + SEEDS - 1 ))); do
        reports="$WORK/reports-$name-$seed"
        started=$(date +%s)
        set +e
        "$BIN" run "$WORK/$name.json5" --seed "$seed" --reports "$reports" --quiet ${HISTORY[@]+"${HISTORY[@]}"} \
            ${SCALE:+--rate-scale "$SCALE"} > "$WORK/out.txt" 2>&1
        code=$?
        set -e
        summary=$(ls "$reports"/*/summary.json 2>/dev/null | head -1 || true)
        detail="no summary"
        if [[ -n "$summary" ]]; then
            detail=$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
bad = [v for v in s.get("violations", [])]
first = (bad[0]["invariant"] + ": " + bad[0]["summary"]) if bad else ""
print("verdict %s, %d violations %s" % (s.get("verdict"), len(bad), first))' "$summary")
        fi
        line="$name x$FACTOR${SCALE:+ at ${SCALE}x rate} seed $seed: exit $code, $(( $(date +%s) - started )) s, $detail"
        echo "$line"
        lines+=("$line")
        case "$code" in
            0|2|3) ;;
            1) violated=1; [[ -n "$summary" ]] && cp -r "$(dirname "$summary")" "Reports/soak-$name-$seed" 2>/dev/null || true ;;
            *) failed=1; tail -5 "$WORK/out.txt" >&2 ;;
        esac
    done
done
echo "--"
printf '%s\n' "${lines[@]}"
if (( violated )); then echo "soak: FAIL (violations; reports copied to Reports/soak-*)" >&2; exit 1; fi
if (( failed )); then echo "soak: a run could not be made" >&2; exit 70; fi
echo "soak: no violation"
