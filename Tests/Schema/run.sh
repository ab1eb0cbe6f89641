#!/usr/bin/env bash
# The profile schema against the profiles: Profiles/profile.schema.json is a valid JSON Schema (2020-12), every
# shipped profile validates against it (as an editor checks them), a whole ${NAME} reference is accepted in a
# number or boolean field, and a value of the wrong type is still refused. Packages (PyPI `jsonschema`, `json5`)
# in Tests/Schema/.venv, made on first use (scripts/python-venv.sh).
# Usage: Tests/Schema/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
python="$(scripts/python-venv.sh Tests/Schema/.venv "jsonschema, json5" jsonschema json5)"
"$python" Tests/Schema/check_schema.py
