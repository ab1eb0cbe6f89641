#!/usr/bin/env bash
# Hostile-suite part: a ledger database held by someone else. Prints `PASS name` or `FAIL name: why` lines.
# Needs $PAYSTORM, $PKI and $HOSTILE_WORK from run.sh.
set -uo pipefail
dir="$(mktemp -d "$HOSTILE_WORK/databases.XXXX")"
ledger=(ledger serve --trust "$PKI/root.der" --bundle-id com.example.paystorm)

# check NAME EXPECTED_EXIT WORDS -- COMMAND...: runs COMMAND (bounded to 30 s), prints PASS or FAIL.
check() {
    local name="$1" expected="$2" words="$3"
    shift 4
    local code=0 output
    output="$(timeout -k 5 30 "$@" 2>&1 </dev/null)" || code=$?
    if [[ "$code" != "$expected" ]]; then
        echo "FAIL $name: exit $code, expected $expected: $(head -c 200 <<<"$output" | tr '\n' ' ')"
    elif [[ "$output" != *"$words"* ]]; then
        echo "FAIL $name: does not say '$words': $(head -c 200 <<<"$output" | tr '\n' ' ')"
    else
        echo "PASS $name"
    fi
}

# A database another ledger serves: the second refuses it at once (73), naming it.
"$PAYSTORM" "${ledger[@]}" --db "$dir/held.db" >"$dir/first.log" 2>&1 &
first=$!
for _ in $(seq 100); do [[ -s "$dir/first.log" ]] && break; sleep 0.1; done
check ledger-db-held-by-a-ledger 73 "held.db" -- "$PAYSTORM" "${ledger[@]}" --db "$dir/held.db"
kill "$first" 2>/dev/null
wait "$first" 2>/dev/null
rm -rf "$dir"
