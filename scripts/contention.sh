#!/usr/bin/env bash
# The example backend's matrix (Tests/ExampleBackend/run.sh --matrix) while CPU-heavy processes run beside it, as on
# a CI machine shared with other jobs: a busy machine may make a run longer (restarts slower, answers later, the
# settle period waiting longer for the last retries), never its verdict different. Not in CI: the whole matrix takes
# several times its quiet length.
#
# Usage: scripts/contention.sh [--busy N] [--limit SECONDS] [ROW...]
#   --busy N         how many busy processes (`while :; do :; done`) run beside the matrix (default 2)
#   --limit SECONDS  the longest the whole script may run, busy processes included (default 7200)
#   ROW...           run.sh's row names (default: every row)
# Needs what run.sh needs (a built paystorm). The busy processes are killed on exit, however the script ends.
# Ends with run.sh's table, then one line: the rows' result, how long it took, and the load beside it.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
busy=2 limit=7200
while [[ "${1:-}" == --busy || "${1:-}" == --limit ]]; do
    case "$1" in
        --busy) busy="${2:?--busy needs a count}" ;;
        --limit) limit="${2:?--limit needs seconds}" ;;
    esac
    shift 2
done
if ! [[ "$busy" =~ ^[0-9]+$ && "$limit" =~ ^[0-9]+$ ]] || (( limit == 0 )); then
    echo "contention.sh: --busy and --limit take whole numbers (--limit above 0)" >&2
    exit 64
fi

pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
for _ in $(seq 1 "$busy"); do
    # Bounded on its own too, so an abandoned one cannot outlive the script's limit.
    timeout "$limit" sh -c 'while :; do :; done' &
    pids+=($!)
done

started="$(date +%s)"
code=0
timeout "$limit" "$root/Tests/ExampleBackend/run.sh" --matrix "$@" || code=$?
took=$(($(date +%s) - started))
load="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
if (( code == 124 )); then
    echo "contention.sh: the matrix did not finish within $limit s beside $busy busy processes" >&2
fi
echo "contention.sh: exit $code after $took s beside $busy busy processes (load average at the end: $load)"
exit "$code"
