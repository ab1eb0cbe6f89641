#!/usr/bin/env bash
# Interop test: PayStorm-minted signed data against Apple's own verifier (app-store-server-library, Python).
#
# Usage: Tests/Interop/run.sh [pytest options]
# Needs a built paystorm: $PAYSTORM, or .build/debug/paystorm (build it first with `swift build`).
# Creates Tests/Interop/.venv on first use and writes Tests/Interop/matrix.md ($INTEROP_MATRIX to write
# elsewhere). The matrix holds no time, so a re-run with the same verdicts leaves it unchanged; a run
# filtered with -k, -m or --deselect, or stopped early by -x or --maxfail, does not write it.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export PAYSTORM="${PAYSTORM:-$root/.build/debug/paystorm}"
if [[ ! -x "$PAYSTORM" ]]; then
    echo "run.sh: no paystorm binary at $PAYSTORM (run 'swift build' or set PAYSTORM)" >&2
    exit 66
fi
python="$("$root/scripts/python-venv.sh" "$here/.venv" "appstoreserverlibrary, pytest" app-store-server-library pytest)"
export INTEROP_MATRIX="${INTEROP_MATRIX:-$here/matrix.md}"
cd "$here"
exec "$python" -m pytest -q -p no:cacheprovider "$@" test_interop.py
