#!/usr/bin/env python3
"""A PayStorm request hook: signs each purchase claim with its account's two Ed25519 keys.

PayStorm starts it once per run and writes one rendered request per line on its standard input; it answers one
line per request on its standard output, tagged with the request's id (docs/request-hook.md). Each answer sets the
claim's `identitySignature` and `deviceSignature`: the account's identity and device keys (the `identitySecret` and
`deviceSecret` fields provisioning printed, hex) each sign the BLAKE2b-256 hash of the claim's version byte, the two
32-byte public keys, the provider (a length byte, then its bytes) and the transaction id. Needs the `cryptography`
package (README.md).
"""
import hashlib
import json
import sys

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

VERSION = 1
PROVIDER = "apple"
keys = {}  # the account's (identity, device) private keys and their public bytes, by identity secret


def account_keys(account):
    secrets = (account.get("identitySecret"), account.get("deviceSecret"))
    if secrets not in keys:
        private = [Ed25519PrivateKey.from_private_bytes(bytes.fromhex(secret)) for secret in secrets]
        keys[secrets] = [(key, key.public_key().public_bytes_raw()) for key in private]
    return keys[secrets]


def answer(request):
    account = request["account"]
    if not account.get("identitySecret") or not account.get("deviceSecret"):
        # Refusing stops the run with this text: better than a claim the backend would reject as unsigned.
        return {"id": request["id"], "error": "account %s has no claim keys" % account["id"]}
    (identity, identity_public), (device, device_public) = account_keys(account)
    # The transaction the claim names (a forged delivery's too: the backend must refuse it for its JWS).
    transaction_id = str(json.loads(request["body"]).get("transactionId", ""))
    digest = hashlib.blake2b(digest_size=32)
    for part in (bytes([VERSION]), identity_public, device_public, bytes([len(PROVIDER)]) + PROVIDER.encode(),
                 transaction_id.encode()):
        digest.update(part)
    signed = digest.digest()
    return {"id": request["id"], "setBodyFields": {
        "identitySignature": identity.sign(signed).hex(), "deviceSignature": device.sign(signed).hex()}}

for line in sys.stdin:
    sys.stdout.write(json.dumps(answer(json.loads(line))) + "\n")
    sys.stdout.flush()
