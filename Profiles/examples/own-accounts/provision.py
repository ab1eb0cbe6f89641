#!/usr/bin/env python3
"""Provisioning for the own-accounts examples: a user for each account, and the appAccountToken the app sets for it.

Many apps set appAccountToken to a name-based UUID of the backend's own user id. This stand-in derives the user id
from the token PayStorm gives (the same user each time it is given the same account, as provisioning must be) and
dictates the token the app would set: PayStorm then mints that account's purchases with it, and renders it for
{appAccountToken} in templates, probes and a bulk probe's input.
"""
import json
import sys
import uuid

# The app's namespace for its tokens: any fixed UUID of its own.
NAMESPACE = uuid.UUID("6f1c2a4e-1d9b-4c8e-9a55-0e7b3c2d4f10")

for line in sys.stdin:
    given = json.loads(line)["appAccountToken"]
    user = "user-" + given[:8].lower()
    dictated = str(uuid.uuid5(NAMESPACE, "user:" + user))
    print(json.dumps({"appAccountToken": given, "id": user, "dictatedToken": dictated}))
