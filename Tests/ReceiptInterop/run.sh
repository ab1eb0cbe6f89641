#!/usr/bin/env bash
# App receipt interop: PayStorm's minted app receipts read by an independent ASN.1/PKCS#7 parser, the PyPI
# `asn1crypto` package, installed into Tests/ReceiptInterop/.venv on first use (scripts/python-venv.sh), and
# posted to `paystorm api serve`'s verifyReceipt over HTTPS under Apple's receipt host names.
# Usage: Tests/ReceiptInterop/run.sh   (uses $PAYSTORM, else builds .build/debug/paystorm with CI's flags)
set -euo pipefail
cd "$(dirname "$0")/../.."
python="$(scripts/python-venv.sh Tests/ReceiptInterop/.venv asn1crypto asn1crypto)"
PAYSTORM="$(scripts/paystorm-binary.sh)"
work="$(mktemp -d)"
server_pid=""
cleanup() { [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
"$PAYSTORM" pki init "$work/pki" >/dev/null
"$PAYSTORM" api serve --pki "$work/pki" --listen 127.0.0.1:0 >"$work/serve.out" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 100); do
    port="$(sed -n 's|^https://127\.0\.0\.1:\([0-9]*\)$|\1|p' "$work/serve.out")"
    [[ -n "$port" ]] && break
    sleep 0.1
done
[[ -n "$port" ]] || { echo "api serve did not start:" >&2; cat "$work/serve.out" >&2; exit 1; }
"$python" Tests/ReceiptInterop/check_receipts.py "$PAYSTORM" "$work/pki" "$port"
echo "app receipt interop passed"
