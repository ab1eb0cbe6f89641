#!/usr/bin/env bash
# PayStorm's main job, from a fresh clone: install what it needs, build, and run the smoke profile
# against the embedded reference ledger (about a minute). Extra arguments go to `paystorm run`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build --product paystorm 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]' || { echo "build failed"; exit 1; }
exec .build/debug/paystorm run "$@"
