#!/usr/bin/env bash
# App receipt interop: PayStorm's minted app receipts read by an independent ASN.1/PKCS#7 parser, the PyPI
# `asn1crypto` package, installed into Tests/ReceiptInterop/.venv on first use (scripts/python-venv.sh).
# Usage: Tests/ReceiptInterop/run.sh   (uses $PAYSTORM, else builds .build/debug/paystorm)
set -euo pipefail
cd "$(dirname "$0")/../.."
python="$(scripts/python-venv.sh Tests/ReceiptInterop/.venv asn1crypto asn1crypto)"
if [[ -z "${PAYSTORM:-}" ]]; then
    swift build --product paystorm >/dev/null
    PAYSTORM="$PWD/.build/debug/paystorm"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$PAYSTORM" pki init "$work/pki" >/dev/null
"$python" Tests/ReceiptInterop/check_receipts.py "$PAYSTORM" "$work/pki"
echo "app receipt interop passed"
