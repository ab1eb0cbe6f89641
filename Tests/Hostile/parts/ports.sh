#!/usr/bin/env bash
# Hostile-suite part: every command that listens, on a port another process holds: exit 69 and one plain line
# that names the address once. Prints `PASS name` or `FAIL name: why`. Needs $PAYSTORM, $PKI, $PROFILES and
# $HOSTILE_WORK from run.sh.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../check.sh
source "$here/../check.sh"
dir="$(mktemp -d "$HOSTILE_WORK/ports.XXXX")"

python3 - "$dir/port" <<'PY' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(120)
PY
holder=$!
for _ in $(seq 100); do [[ -s "$dir/port" ]] && break; sleep 0.1; done
address="127.0.0.1:$(cat "$dir/port")"
said="cannot listen on $address: the address is already in use"

once() { # NAME -- COMMAND...: also fails when the line says "cannot listen" twice or blames the PEM
    local name="$1"
    shift 2
    local output
    output="$("$@" 2>&1 </dev/null)"
    if [[ "$(grep -o "cannot listen" <<<"$output" | wc -l)" != 1 || "$output" == *PEM* ]]; then
        echo "FAIL $name-said-once: $(head -c 300 <<<"$output" | tr '\n' ' ')"
    else
        echo "PASS $name-said-once"
    fi
}
api=("$PAYSTORM" api serve --pki "$PKI" --listen "$address")
ledger=("$PAYSTORM" ledger serve --db "$dir/l.db" --trust "$PKI/root.der" --bundle-id x --listen "$address")
metrics=("$PAYSTORM" run "$PROFILES/smoke.json5" --quiet --metrics-listen "$address" --reports "$dir/r")
ocsp=("$PAYSTORM" pki ocsp --pki "$PKI" --listen "$address")
check port-in-use-api 69 "$said" -- "${api[@]}"
once port-in-use-api -- "${api[@]}"
check port-in-use-ledger 69 "$said" -- "${ledger[@]}"
once port-in-use-ledger -- "${ledger[@]}"
check port-in-use-metrics 69 "--metrics-listen: $said" -- "${metrics[@]}"
once port-in-use-metrics -- "${metrics[@]}"
check port-in-use-ocsp 69 "$said" -- "${ocsp[@]}"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
rm -rf "$dir"
