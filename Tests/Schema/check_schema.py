"""Checks Profiles/profile.schema.json against the profiles PayStorm ships (see run.sh)."""
import copy
import glob
import json
import sys

import json5
import jsonschema

schema = json.load(open("Profiles/profile.schema.json"))
validator_class = jsonschema.Draft202012Validator
validator_class.check_schema(schema)
validator = validator_class(schema)
failures = []


def check(name, document, valid):
    errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message[:120]}" for e in validator.iter_errors(document)]
    if bool(errors) == valid:
        failures.append(f"{name}: expected {'valid' if valid else 'refused'}, got {errors or 'valid'}")
    else:
        print(f"ok   {name}")


profiles = sorted(glob.glob("Profiles/**/*.json5", recursive=True))
for path in profiles:
    check(path, json5.load(open(path)), valid=True)

smoke = json5.load(open("Profiles/smoke.json5"))
with_variables = copy.deepcopy(smoke)
with_variables["schedule"][0]["from"] = "${FROM}"
with_variables["target"] = {"embeddedLedger": "${EMBEDDED:-true}"}
check("a ${NAME} in a number and a boolean field", with_variables, valid=True)
wrong = copy.deepcopy(smoke)
wrong["schedule"][0]["from"] = "fast"
check("a word in a number field", wrong, valid=False)
wrong = copy.deepcopy(smoke)
wrong["target"] = {"embeddedLedger": "yes"}
check("a word in a boolean field", wrong, valid=False)

for failure in failures:
    print(f"FAIL {failure}")
print(f"{len(profiles) + 3 - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
