#!/usr/bin/env bash
# Makes (on first use) a Python virtual environment holding the packages a test suite needs, and prints the
# path of its python. Every suite that needs a Python package gets its own venv this way, so the tests need
# no global Python packages (a fresh machine has none).
#
# Usage: scripts/python-venv.sh VENV_DIR IMPORTS PACKAGE...
#   IMPORTS   the modules whose import proves the packages are installed, e.g. "hdrh" or "appstoreserverlibrary, pytest"
#   PACKAGE   what pip installs when an import fails
# Creates the venv with $PYTHON (default python3). Progress goes to stderr; stdout is only the python path.
set -euo pipefail
if (( $# < 3 )); then
    echo "usage: scripts/python-venv.sh VENV_DIR IMPORTS PACKAGE..." >&2
    exit 64
fi
venv="$1"
imports="$2"
shift 2
python="${PYTHON:-python3}"
if [[ ! -x "$venv/bin/python" ]]; then
    "$python" -m venv "$venv" >&2
fi
if ! "$venv/bin/python" -c "import $imports" 2>/dev/null; then
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$@" >&2
fi
echo "$venv/bin/python"
