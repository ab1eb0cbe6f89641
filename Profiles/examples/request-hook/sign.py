#!/usr/bin/env python3
"""A PayStorm request hook: signs each request's body with its account's secret.

PayStorm starts it once per run and writes one rendered request per line on its standard input; it answers one
line per request on its standard output, tagged with the request's id (docs/request-hook.md). The answer adds
`X-Signature: sha256=<hex HMAC-SHA256 of the body, keyed by the account's secret>`, the secret being a field the
provisioning command printed for the account. Python's standard library only.
"""
import hashlib
import hmac
import json
import sys


def answer(request):
    secret = request["account"].get("secret")
    if not secret:
        # Refusing stops the run with this text: better than a request the backend would reject as unsigned.
        return {"id": request["id"], "error": "account %s has no secret" % request["account"]["id"]}
    digest = hmac.new(secret.encode(), request["body"].encode(), hashlib.sha256).hexdigest()
    return {"id": request["id"], "addHeaders": {"X-Signature": "sha256=" + digest}}


for line in sys.stdin:
    sys.stdout.write(json.dumps(answer(json.loads(line))) + "\n")
    sys.stdout.flush()
