#!/usr/bin/env bash
# Interop test of the App Store Server API PayStorm serves (`paystorm api serve`) with Apple's own client:
# app-store-server-library's AppStoreServerAPIClient over HTTPS trusting the test CA calls every endpoint,
# SignedDataVerifier checks every signed answer, and errors must come back as APIException with the right APIError.
#
# Usage: Tests/APIInterop/run.sh [pytest options]
# Needs a built paystorm: $PAYSTORM, or .build/debug/paystorm. Creates Tests/APIInterop/.venv on first use.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export PAYSTORM="${PAYSTORM:-$root/.build/debug/paystorm}"
if [[ ! -x "$PAYSTORM" ]]; then
    echo "run.sh: no paystorm binary at $PAYSTORM (run 'swift build' or set PAYSTORM)" >&2
    exit 66
fi
python="$("$root/scripts/python-venv.sh" "$here/.venv" "appstoreserverlibrary, pytest" app-store-server-library pytest)"
cd "$here"
exec "$python" -m pytest -q -p no:cacheprovider "$@" test_api_interop.py
