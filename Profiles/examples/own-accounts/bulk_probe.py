#!/usr/bin/env python3
"""A bulk probe for the own-accounts examples: reads the accounts to print on stdin, one JSON line each as
provisioning printed them ({"appAccountToken": ..., "id": ..., ...}), reads each from the backend's contract-v1
account endpoint (GET BASE/accounts/{appAccountToken}) and prints its state as one JSON line keyed by the token.

A backend with its own store would look its accounts up by their ids in one query instead (a SQL `IN`, say); an
account it cannot read gets no line, which PayStorm counts as unknown, never as owning nothing.
Usage: bulk_probe.py BASE_URL   (for example http://127.0.0.1:8000)
"""
import json
import sys
import urllib.error
import urllib.request

base = sys.argv[1].rstrip("/")
for line in sys.stdin:
    account = json.loads(line)
    token = account["appAccountToken"]
    try:
        with urllib.request.urlopen("%s/accounts/%s" % (base, token), timeout=10) as response:
            state = json.load(response)
    except (urllib.error.URLError, ValueError) as error:
        print("cannot read account %s (%s): %s" % (account.get("id"), token, error), file=sys.stderr)
        continue
    state["appAccountToken"] = token
    print(json.dumps(state))
