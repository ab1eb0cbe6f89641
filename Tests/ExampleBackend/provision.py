"""Signs up the example backend's users for a load test, as a deployment's account script would.

PayStorm's `target.accounts.provision` runs it: one `{"appAccountToken": "<UUID>"}` line per account on stdin, one
`{"appAccountToken", "id", ...}` line per account on stdout. The backend's user id is the lowercase token.

- With EXAMPLE_TOKEN_SECRET set, each line has a session token (`token`), valid for EXAMPLE_TOKEN_SECONDS (default
  8) and signed with that secret, which the backend shares. Running it again issues fresh tokens for the same users
  (`target.accounts.refreshSeconds`).
- `--dictate-tokens`: the app sets the token the backend dictates, a name-based UUID of the user's sign-up name
  (here the token PayStorm gave), printed as `dictatedToken`; it is the user's id.
- `--claim-keys URL`: each user gets the two Ed25519 key pairs its app signs claims with (claims.py), printed as
  `identityKey`, `identitySecret`, `deviceKey` and `deviceSecret` (hex); their public halves are registered with
  the backend at URL in one request. The keys are derived from the user id and EXAMPLE_KEY_SEED, so running it
  again gives the same keys (a real app makes them on the device).
"""

import hashlib
import json
import os
import sys
import time
import urllib.request
import uuid

from app import canonical_user, session_token

# The namespace of the tokens the backend dictates (uuid5 of "user:<sign-up name>").
DICTATED_NAMESPACE = uuid.UUID("3d1f0a52-6c1e-4b8e-9f4a-5b7c2e8d9a10")


def key_pair(user, role):
    """The hex public and private halves of `user`'s `role` key, derived from EXAMPLE_KEY_SEED."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    seed = os.environ.get("EXAMPLE_KEY_SEED", "example-backend-claim-keys").encode()
    private = Ed25519PrivateKey.from_private_bytes(
        hashlib.blake2b(f"{user}/{role}".encode(), key=seed, digest_size=32).digest())
    return private.public_key().public_bytes_raw().hex(), private.private_bytes_raw().hex()


def register_keys(url, accounts):
    """Registers the accounts' public keys with the backend; exits 1 naming the answer when it refuses."""
    body = {"accounts": [{"userId": a["id"], "identityKey": a["identityKey"], "deviceKey": a["deviceKey"]}
                         for a in accounts]}
    request = urllib.request.Request(url.rstrip("/") + "/api/v1/accounts/keys", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            response.read()
    except OSError as failure:
        raise SystemExit(f"provision.py: registering {len(accounts)} accounts' keys at {url} failed: {failure}")


def main(arguments):
    dictate = "--dictate-tokens" in arguments
    keys_url = arguments[arguments.index("--claim-keys") + 1] if "--claim-keys" in arguments else None
    secret = os.environ.get("EXAMPLE_TOKEN_SECRET")
    lifetime_ms = int(float(os.environ.get("EXAMPLE_TOKEN_SECONDS", "8")) * 1000)
    expires = int(time.time() * 1000) + lifetime_ms
    accounts = []
    for line in sys.stdin:
        if not line.strip():
            continue
        token = json.loads(line)["appAccountToken"]
        account = {"appAccountToken": token, "id": canonical_user(token)}
        if dictate:
            account["id"] = account["dictatedToken"] = str(uuid.uuid5(DICTATED_NAMESPACE, f"user:{token.lower()}"))
        if secret:
            account["token"] = session_token(secret, account["id"], expires)
        if keys_url:
            account["identityKey"], account["identitySecret"] = key_pair(account["id"], "identity")
            account["deviceKey"], account["deviceSecret"] = key_pair(account["id"], "device")
        accounts.append(account)
    if keys_url and accounts:
        register_keys(keys_url, accounts)
    for account in accounts:
        print(json.dumps(account))


main(sys.argv[1:])
