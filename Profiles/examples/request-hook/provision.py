#!/usr/bin/env python3
"""Provisioning for the signed-requests example: gives each account an id and a secret.

A real backend creates the user and hands out the secret; this stand-in derives both from the account's token and
a master key (SIGNING_MASTER_KEY, or a fixed example key), so the backend and PayStorm agree without a shared file.
With --store FILE it also appends `id secret` lines there, as a backend's user table would hold them.
"""
import hashlib
import hmac
import json
import os
import sys

master = os.environ.get("SIGNING_MASTER_KEY", "example-master-key").encode()
store = open(sys.argv[2], "a") if len(sys.argv) > 2 and sys.argv[1] == "--store" else None
for line in sys.stdin:
    token = json.loads(line)["appAccountToken"].lower()
    user = "user-" + token[:8]
    secret = hmac.new(master, token.encode(), hashlib.sha256).hexdigest()[:32]
    print(json.dumps({"appAccountToken": token, "id": user, "secret": secret}))
    if store:
        store.write("%s %s\n" % (user, secret))
