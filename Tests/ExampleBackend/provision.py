"""Issues the example backend's session tokens, as a deployment's account script would for a load test.

PayStorm's `target.accounts.provision` runs it: one `{"appAccountToken": "<UUID>"}` line per account on stdin, one
`{"appAccountToken", "id", "token"}` line per account on stdout. The backend's user id is the lowercase token; the
session token is valid for EXAMPLE_TOKEN_SECONDS (default 8) and signed with EXAMPLE_TOKEN_SECRET, which the backend
shares. Running it again issues fresh tokens for the same users (`target.accounts.refreshSeconds`).
"""

import json
import os
import sys
import time

from app import canonical_user, session_token

secret = os.environ["EXAMPLE_TOKEN_SECRET"]
lifetime_ms = int(float(os.environ.get("EXAMPLE_TOKEN_SECONDS", "8")) * 1000)
expires = int(time.time() * 1000) + lifetime_ms
for line in sys.stdin:
    if not line.strip():
        continue
    token = json.loads(line)["appAccountToken"]
    user = canonical_user(token)
    print(json.dumps({"appAccountToken": token, "id": user, "token": session_token(secret, user, expires)}))
