#!/usr/bin/env bash
# PayStorm's hostile-input suite: every command fed bad flags, bad profiles, bad files and misbehaving targets
# must end with the README's exit code and one line naming the problem, never a crash or a backtrace.
#
# Usage: Tests/Hostile/run.sh [NAME_PATTERN]
#   NAME_PATTERN  only the table's cases whose name matches this bash glob (the parts still run)
# Needs a built paystorm: $PAYSTORM, or .build/debug/paystorm; python3 (standard library only) for the fault
# server. HOSTILE_JOBS (default 4) cases run at once, beside the parts (below).
#
# The table, cases.tsv, has one case a line, four tab-separated columns:
#   name      unique, [a-z0-9-]
#   exit      the exit code expected (`2|69`: either)
#   words     what the output (stdout and stderr together) must contain, ` ;; `-separated; `!text` must NOT appear
#   command   the arguments after `paystorm`, as bash words (so $'a\r\nb' works), with these variables:
#               $PROFILES the repository's Profiles/   $FIX fixtures (Tests/Hostile/fixtures/ and generated ones)
#               $PKI      a test PKI                   $OUT this case's own empty folder (its working directory)
#               $HTTP     the fault server (fault_server.py), e.g. $HTTP/hang
#               $RESET    a listener that resets every connection   $SILENT one that never answers
# Every case also fails on a trap or a backtrace in its output, and past 120 s.
#
# Beside the table, every executable parts/*.sh runs (each in the background) with the same variables exported
# (and $PAYSTORM); each prints `PASS <name>` or `FAIL <name>: <why>` lines, counted with the table's. A part that
# exits non-zero without a FAIL line counts as one failure.
# Ends with `N passed, M failed` and exits non-zero on any failure.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export PAYSTORM="${PAYSTORM:-$root/.build/debug/paystorm}"
if [[ ! -x "$PAYSTORM" ]]; then
    echo "run.sh: no paystorm binary at $PAYSTORM (run 'swift build' or set PAYSTORM)" >&2
    exit 66
fi

# One case, run by xargs: run_case INDEX. Writes results/INDEX: `PASS name` or `FAIL name: why`.
if [[ "${1:-}" == --case ]]; then
    index="$2"
    IFS=$'\t' read -r name expected words command < <(sed -n "${index}p" "$HOSTILE_WORK/cases")
    export OUT="$HOSTILE_WORK/out/$name"
    mkdir -p "$OUT"
    cd "$OUT"
    code=0
    eval "arguments=($command)"
    timeout -k 5 120 "$PAYSTORM" "${arguments[@]}" >"$OUT.log" 2>&1 </dev/null || code=$?
    why=""
    [[ "|$expected|" == *"|$code|"* ]] || why="exit $code, expected $expected"
    if grep -qE 'Fatal error|Current stack trace|Backtrace|backtrace' "$OUT.log"; then why="${why:+$why; }a trap"; fi
    if [[ -n "$words" ]]; then
        while IFS= read -r word; do
            [[ -n "$word" ]] || continue
            if [[ "$word" == '!'* ]]; then
                ! grep -qF -- "${word#!}" "$OUT.log" || why="${why:+$why; }says '${word#!}'"
            else
                grep -qF -- "$word" "$OUT.log" || why="${why:+$why; }does not say '$word'"
            fi
        done < <(printf '%s\n' "${words// ;; /$'\n'}")
    fi
    if [[ -z "$why" ]]; then
        echo "PASS $name" >"$HOSTILE_WORK/results/$index"
    else
        echo "FAIL $name: $why; output: $(head -c 300 "$OUT.log" | tr '\n' ' ')" >"$HOSTILE_WORK/results/$index"
    fi
    exit 0
fi

pattern="${1:-*}"
started=$SECONDS
work="$(mktemp -d)"
export HOSTILE_WORK="$work"
server_pid="" parts_pids=()
cleanup() {
    if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; fi
    for pid in "${parts_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

python3 "$here/fault_server.py" "$work/ports" &
server_pid=$!
for _ in $(seq 100); do [[ -s "$work/ports" ]] && break; sleep 0.1; done
read -r http reset silent <"$work/ports"
export HTTP="http://127.0.0.1:${http#http=}" RESET="http://127.0.0.1:${reset#reset=}"
export SILENT="http://127.0.0.1:${silent#silent=}"
export PROFILES="$root/Profiles" PKI="$work/pki" FIX="$work/fixtures"
"$PAYSTORM" pki init "$PKI" >/dev/null
mkdir -p "$FIX" "$work/out" "$work/results"
cp -R "$here/fixtures/." "$FIX/"
"$here/fixtures.sh" "$FIX"

# The table without comments and blank lines, filtered by name.
: >"$work/cases"
while IFS= read -r line; do
    [[ -z "$line" || "$line" == '#'* ]] && continue
    name="${line%%$'\t'*}"
    # shellcheck disable=SC2053
    [[ "$name" == $pattern ]] && printf '%s\n' "$line" >>"$work/cases"
done <"$here/cases.tsv"
duplicates="$(cut -f1 "$work/cases" | sort | uniq -d)"
if [[ -n "$duplicates" ]]; then
    echo "run.sh: cases.tsv names these cases twice: $duplicates" >&2
    exit 65
fi
count="$(wc -l <"$work/cases")"
# The parts, each in the background beside the others and the table (most cases and parts wait on a child or a
# misbehaving target rather than compute): each prints PASS/FAIL lines of its own, into parts/NAME.
run_part() { # PART
    local name code=0 part_started=$SECONDS
    name="$(basename "$1")"
    "$1" >"$work/parts/$name.log" 2>"$work/parts/$name.err" || code=$?
    grep -E '^(PASS|FAIL) ' "$work/parts/$name.log" >"$work/parts/$name" || true
    if (( code != 0 )) && ! grep -q '^FAIL ' "$work/parts/$name.log"; then
        echo "FAIL $name: exited $code; $(tail -c 300 "$work/parts/$name.err" | tr '\n' ' ')" >>"$work/parts/$name"
    fi
    echo "$name $((SECONDS - part_started)) s" >"$work/parts/$name.time"
}
mkdir -p "$work/parts"
parts_pids=()
for part in "$here"/parts/*.sh; do
    [[ -x "$part" ]] || continue
    run_part "$part" &
    parts_pids+=("$!")
done
table_started=$SECONDS
seq "$count" | xargs -r -P "${HOSTILE_JOBS:-4}" -n 1 "$here/run.sh" --case
table_seconds=$((SECONDS - table_started))
for pid in "${parts_pids[@]}"; do wait "$pid" || true; done
parts_pids=()
cat "$work"/results/* 2>/dev/null | sort -t' ' -k2 >"$work/table-results" || true
cat "$work"/parts/*.sh >"$work/part-results" 2>/dev/null || true

cat "$work/table-results" "$work/part-results" | grep '^FAIL ' || true
passed="$(cat "$work/table-results" "$work/part-results" | grep -c '^PASS ' || true)"
failed="$(cat "$work/table-results" "$work/part-results" | grep -c '^FAIL ' || true)"
ran="$(wc -l <"$work/table-results")"
if (( ran != count )); then
    echo "FAIL run.sh: $((count - ran)) of the table's cases left no result"
    failed=$((failed + count - ran))
fi
echo "hostile suite: $count table cases and $(wc -l <"$work/part-results") from parts in $((SECONDS - started)) s" \
    "(table $table_seconds s; $(cat "$work"/parts/*.time 2>/dev/null | paste -sd, | sed 's/,/, /g'))"
echo "$passed passed, $failed failed"
(( failed == 0 ))
