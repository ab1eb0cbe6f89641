#!/usr/bin/env bash
# Writes the hostile suite's generated fixtures into DIR: copies of the shipped profiles with one piece of text
# replaced (each a single defect), and files that are not what their name says.
# Usage: Tests/Hostile/fixtures.sh DIR
set -euo pipefail
dir="$1"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# variant NAME SOURCE OLD NEW: SOURCE (a fixture already in DIR, else a shipped profile) with OLD replaced by NEW,
# written to DIR/NAME.json5.
variant() {
    local source="$dir/$2.json5"
    [[ -f "$source" ]] || source="$root/Profiles/$2.json5"
    python3 - "$source" "$dir/$1.json5" "$3" "$4" <<'PY'
import sys
source, target, old, new = sys.argv[1:5]
text = open(source).read()
if old not in text:
    sys.exit(f"fixtures.sh: {source} no longer holds {old!r}")
open(target, "w").write(text.replace(old, new, 1))
PY
}

variant syntax-error smoke 'seed: 42,' 'seed: 42 43,'
variant duplicate-key smoke 'seed: 42,' 'seed: 42,
  seed: 7,'
variant unknown-key smoke 'seed: 42,' 'seed: 42, sede: 7,'
variant seed-negative smoke 'seed: 42,' 'seed: -1,'
variant seed-string smoke 'seed: 42,' 'seed: "x",'
variant no-schedule smoke 'schedule: [' 'scheduleX: ['
variant rate-zero smoke '{ kind: "constant", rate: 30, seconds: 40 }' '{ kind: "constant", rate: 0, seconds: 40 }'
variant rate-nan smoke '{ kind: "constant", rate: 30, seconds: 40 }' '{ kind: "constant", rate: NaN, seconds: 40 }'
variant rate-infinite smoke '{ kind: "constant", rate: 30, seconds: 40 }' '{ kind: "constant", rate: Infinity, seconds: 40 }'
variant segment-huge smoke '{ kind: "constant", rate: 30, seconds: 40 }' '{ kind: "constant", rate: 30, seconds: 1e300 }'
variant accounts-zero smoke 'accounts: 300' 'accounts: 0'
variant accounts-huge smoke 'accounts: 300' 'accounts: 1e18'
variant probability-high smoke 'crashBeforeFinish: { probability: 0.02' 'crashBeforeFinish: { probability: 1.5'
variant timeout-zero smoke 'requestTimeoutSeconds: 5' 'requestTimeoutSeconds: 0'
variant settle-negative smoke 'settleSeconds: 8' 'settleSeconds: -1'
variant threshold-long smoke '"p99 < 500ms"' '"p99 < 99999999999h"'
variant threshold-metric smoke '"p99 < 500ms"' '"p100 < 500ms"'
variant threshold-operator smoke '"p99 < 500ms"' '"p99 <> 500ms"'
variant threshold-unit smoke '"p99 < 500ms"' '"p99 < 500"'
variant threshold-kind smoke '"p99 < 500ms"' '"webhok.p99 < 500ms"'
variant threshold-vacuous-rate smoke '"p99 < 500ms"' '"errorRate < 150%"'
variant threshold-vacuous-count smoke '"p99 < 500ms"' '"missed == 0.5"'
variant threshold-negative-rate smoke '"p99 < 500ms"' '"errorRate < -1%"'
variant product-type smoke 'type: "consumable", priceMilli: 990' 'type: "gadget", priceMilli: 990'
variant environment smoke 'environment: "Sandbox"' 'environment: "Staging"'
variant production-no-app smoke 'environment: "Sandbox"' 'environment: "Production"'
variant header-crlf smoke 'requestTimeoutSeconds: 5,' 'requestTimeoutSeconds: 5, headers: { "X-Inj": "a\r\nX-Evil: b" },'
variant header-variable smoke 'requestTimeoutSeconds: 5,' 'requestTimeoutSeconds: 5, headers: { Authorization: "Bearer ${TOK}" },'
variant bool-variable smoke 'embeddedLedger: true,' 'embeddedLedger: "${EMBEDDED}",'
variant header-name smoke 'requestTimeoutSeconds: 5,' 'requestTimeoutSeconds: 5, headers: { "X Evil": "b" },'
variant webhook-and-embedded smoke 'embeddedLedger: true,' 'embeddedLedger: true, webhookURL: "http://127.0.0.1:1/n",'
variant url-port-range external '"${TARGET}/${HOOK:-ok}",
    deviceURL' '"http://127.0.0.1:99999/n",
    deviceURL'
variant url-space external '"${TARGET}/${HOOK:-ok}",
    deviceURL' '"http://127.0.0.1:1/a b",
    deviceURL'
variant url-quote external '"${TARGET}/${HOOK:-ok}",
    deviceURL' '"${TARGET}/${HOOK:-ok}${Q:-}",
    deviceURL'
variant url-port-variable external '"${TARGET}/${HOOK:-ok}",
    deviceURL' '"http://127.0.0.1:${PORT}/n",
    deviceURL'
variant url-nested external '"${TARGET}/${HOOK:-ok}",
    deviceURL' '"${DEV:-http://127.0.0.1:${PORT}/y}",
    deviceURL'
variant url-non-loopback external '"${TARGET}/${HOOK:-ok}",
    deviceURL' '"http://example.invalid/n",
    deviceURL'
variant url-ftp external '"${TARGET}/${HOOK:-ok}",
    deviceURL' '"ftp://127.0.0.1/n",
    deviceURL'
variant placeholder-unknown external '"${TARGET}/${HOOK:-ok}",
    deviceURL' '"${TARGET}/{x}",
    deviceURL'
variant probe-missing-command external 'probe: { kind: "http", url: "${TARGET}/accounts/{appAccountToken}" }' \
    'probe: { kind: "command", command: ["/nonexistent/paystorm-probe", "{appAccountToken}"] }'
variant provision-missing external 'probe: {' \
    'accounts: { provision: ["/nonexistent/paystorm-provision"] }, probe: {'
variant schedule-tiny smoke '{ kind: "ramp", from: 5, to: 30, seconds: 10 },
    { kind: "constant", rate: 30, seconds: 40 },' '{ kind: "constant", rate: 0.0001, seconds: 2 },'
variant one-connection external 'requestTimeoutSeconds: 1,
    connections: 2,' 'requestTimeoutSeconds: 0.2,
    connections: 1,'
variant one-connection-busy one-connection 'rate: 5, seconds: 1' 'rate: 40, seconds: 2'
variant provision-half external 'probe: {' \
    'accounts: { provision: ["sh", "-c", "head -n 2"] }, probe: {'
variant probe-huge-output external 'probe: { kind: "http", url: "${TARGET}/accounts/{appAccountToken}" }' \
    'probe: { kind: "command", command: ["sh", "-c", "head -c 67200000 /dev/zero", "{appAccountToken}"] }'

# Files that are not what their name says.
printf '\x00\x01\x02 not json5 at all \xff' >"$dir/binary.json5"
: >"$dir/empty.json5"
printf '[1, 2, 3]' >"$dir/array.json5"
mkdir -p "$dir/directory.json5"
head -c 2000000 /dev/zero | tr '\0' '[' >"$dir/deep.json5"
printf 'not a certificate\n' >"$dir/not-a-cert.der"
printf 'second,1\n' >"$dir/garbage-admissions.csv"
# A capacity step folder as far as its name goes (step.json), for the folder-given-twice check.
mkdir -p "$dir/step" && printf '{}' >"$dir/step/step.json"
# Someone else's SQLite database: the ledger must not adopt it.
python3 - "$dir/foreign.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript("CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE users (id INTEGER PRIMARY KEY);"
                 "INSERT INTO accounts (name) VALUES ('alice');")
db.commit()
PY
