#!/usr/bin/env bash
# Hostile-suite part: a ledger database held by someone else, or not a ledger's. Prints `PASS name` or
# `FAIL name: why` lines. Needs $PAYSTORM, $PKI and $HOSTILE_WORK from run.sh.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../check.sh
source "$here/../check.sh"
dir="$(mktemp -d "$HOSTILE_WORK/databases.XXXX")"
ledger=(ledger serve --trust "$PKI/root.der" --bundle-id com.example.paystorm)

# A database another ledger serves: the second refuses it at once (73), naming it.
"$PAYSTORM" "${ledger[@]}" --db "$dir/held.db" >"$dir/first.log" 2>&1 &
first=$!
for _ in $(seq 100); do [[ -s "$dir/first.log" ]] && break; sleep 0.1; done
check ledger-db-held-by-a-ledger 73 "held.db" -- "$PAYSTORM" "${ledger[@]}" --db "$dir/held.db"
kill "$first" 2>/dev/null
wait "$first" 2>/dev/null

# A database another SQLite program holds a write lock on: in use (73) after SQLite's busy timeout, not malformed.
python3 - "$dir/locked.db" "$dir/locked.ready" <<'PY' &
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("CREATE TABLE IF NOT EXISTS notifications (x)")
db.execute("BEGIN EXCLUSIVE")
open(sys.argv[2], "w").close()
time.sleep(30)
PY
holder=$!
for _ in $(seq 100); do [[ -e "$dir/locked.ready" ]] && break; sleep 0.1; done
check ledger-db-locked-by-sqlite 73 "another program holds a lock on it" -- \
    "$PAYSTORM" "${ledger[@]}" --db "$dir/locked.db"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
rm -rf "$dir"
