#!/usr/bin/env bash
# Live metrics: a ~5 s `paystorm run --metrics-listen` against a flawed embedded ledger, scraped while it runs
# and in its linger (final values = summary.json), parsed with the PyPI `prometheus_client` parsers (OpenMetrics
# and the classic text format), installed into Tests/Metrics/.venv on
# first use (scripts/python-venv.sh), so no global Python package is needed.
# Usage: Tests/Metrics/run.sh   (uses $PAYSTORM, else builds .build/debug/paystorm with CI's flags)
set -euo pipefail
cd "$(dirname "$0")/../.."
checker_python="$(scripts/python-venv.sh Tests/Metrics/.venv prometheus_client prometheus-client)"
PAYSTORM="$(scripts/paystorm-binary.sh)"
"$checker_python" Tests/Metrics/scrape.py "$PAYSTORM"
echo "metrics suite passed"
