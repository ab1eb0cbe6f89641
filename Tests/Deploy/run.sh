#!/usr/bin/env bash
# The nightly CI files in deploy/ci: both workflows parsed with PyYAML and their fields checked, nightly.sh's
# exit-code handling run against a fake paystorm, and the staging profile validated by the real one. PyYAML
# goes into Tests/Deploy/.venv on first use (scripts/python-venv.sh). Sends nothing over the network.
# Usage: Tests/Deploy/run.sh   (uses $PAYSTORM, else .build/debug/paystorm). Ends with `N passed, M failed`.
set -euo pipefail
cd "$(dirname "$0")/../.."
PAYSTORM="${PAYSTORM:-$PWD/.build/debug/paystorm}"
if [[ ! -x "$PAYSTORM" ]]; then
    echo "run.sh: no paystorm binary at $PAYSTORM (run 'swift build' or set PAYSTORM)" >&2
    exit 66
fi
python="$(scripts/python-venv.sh Tests/Deploy/.venv yaml pyyaml==6.0.3)"
"$python" Tests/Deploy/test_nightly.py "$PWD" "$PAYSTORM"
