#!/usr/bin/env python3
"""Prints a copy of a JSON5 profile whose schedule lasts FACTOR times as long.

Usage: scripts/stretch-profile.py PROFILE FACTOR

Every `seconds` inside the profile's `schedule: [...]` block is multiplied; rates, faults and everything
else stay as they are, so a stretched run is the same workload for longer (soaks of the reference ledger's
profiles, the example backend at ten times its test length).
"""
import re
import sys


def stretch(text: str, factor: float) -> str:
    start = text.index("schedule:")
    open_at = text.index("[", start)
    depth, end = 0, open_at
    for end in range(open_at, len(text)):
        depth += {"[": 1, "]": -1}.get(text[end], 0)
        if depth == 0:
            break
    block = re.sub(r"\bseconds:\s*([0-9.]+)", lambda m: "seconds: %g" % (float(m.group(1)) * factor),
                   text[open_at:end + 1])
    return text[:open_at] + block + text[end + 1:]


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: stretch-profile.py PROFILE FACTOR")
    sys.stdout.write(stretch(open(sys.argv[1]).read(), float(sys.argv[2])))
