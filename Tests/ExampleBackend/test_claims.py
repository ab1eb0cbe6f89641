"""The example backend's signed purchase claims (claims.py) on their own: keys, signatures, purchases without
appAccountToken, and the claim-replay bug. Run with test_backend.py by run.sh --standalone."""

import base64
import json
import subprocess
import sys

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from claims import claim_digest
from test_backend import HERE, PAYSTORM, USER, pki, start  # noqa: F401 (fixtures)

OTHER = "0b7e9a1c-5d2f-4e3a-8c6b-9f1d2e3a4b5c"


def sign_up(backend, user=USER):
    """Registers two fresh key pairs for `user`; returns them (identity, device)."""
    keys = (Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate())
    status, _ = backend.request("POST", "/api/v1/accounts/keys", {"accounts": [
        {"userId": user, "identityKey": hex_public(keys[0]), "deviceKey": hex_public(keys[1])}]})
    assert status == 200
    return keys


def hex_public(key):
    return key.public_key().public_bytes_raw().hex()


def claim(backend, keys, jws, transaction_id=None, signed_id=None):
    """Posts the claim of `jws` (naming `transaction_id`, signed over `signed_id`, both the JWS's by default)."""
    if transaction_id is None:
        payload = jws.split(".")[1]
        transaction_id = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["transactionId"]
    publics = [key.public_key().public_bytes_raw() for key in keys]
    digest = claim_digest(1, publics[0], publics[1], "apple", signed_id or transaction_id)
    return backend.request("POST", "/api/v1/purchases/claim", {
        "version": 1, "provider": "apple", "transactionId": transaction_id, "signedTransaction": jws,
        "identityKey": publics[0].hex(), "deviceKey": publics[1].hex(),
        "identitySignature": keys[0].sign(digest).hex(), "deviceSignature": keys[1].sign(digest).hex()})


def mint(backend, *args, product="coins.100", kind="consumable", token=None):
    """`paystorm mint`, without appAccountToken unless `token` is given."""
    command = [PAYSTORM, "mint", "--pki", str(backend.pki), "--product", product, "--product-type", kind, *args]
    if token is not None:
        command += ["--account-token", token]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_a_signed_claim_grants_a_purchase_without_token_to_the_keys_account(start):
    backend = start()
    keys = sign_up(backend)
    jws = mint(backend, "--transaction", "--transaction-id", "9101", product="pro.unlock", kind="non-consumable")
    assert claim(backend, keys, jws) == (200, {"ok": True, "granted": True})
    assert claim(backend, keys, jws)[0] == 409
    assert backend.wallet()["owned"] == ["pro.unlock"]


def test_claims_with_wrong_keys_or_signatures_or_transaction_are_refused(start):
    backend = start()
    keys = sign_up(backend)
    jws = mint(backend, "--transaction", "--transaction-id", "9201")
    stranger = (Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate())
    assert claim(backend, stranger, jws)[0] == 401
    assert claim(backend, (keys[0], stranger[1]), jws)[0] == 401
    # Signed over another transaction id than the one it names and carries.
    assert claim(backend, keys, jws, signed_id="9202")[0] == 401
    # Names (and signs) another transaction than the JWS it carries.
    assert claim(backend, keys, jws, transaction_id="9202")[0] == 400
    forged = mint(backend, "--transaction", "--forge", "bad-signature")
    assert claim(backend, keys, forged)[0] == 400
    assert backend.request("POST", "/api/v1/purchases/claim", {"version": 2})[0] == 400
    # A purchase with another user's token is that user's, whoever claims it.
    assert claim(backend, keys, mint(backend, "--transaction", token=OTHER))[0] == 403
    assert backend.wallet()["coins"] == {}


def test_a_purchase_belongs_to_the_first_account_that_claims_it(start):
    backend = start()
    mine, theirs = sign_up(backend), sign_up(backend, OTHER)
    jws = mint(backend, "--transaction", "--transaction-id", "9301")
    assert claim(backend, mine, jws)[0] == 200
    assert claim(backend, theirs, jws)[0] == 403
    assert backend.wallet(OTHER)["coins"] == {}


def test_notifications_without_token_wait_for_the_claim_then_follow_it(start):
    backend = start()
    keys = sign_up(backend)
    # The refund comes before the app's claim of the purchase: parked, then applied for the claimant.
    refund = mint(backend, "--type", "REFUND", "--transaction-id", "9401", product="pro.unlock", kind="non-consumable")
    assert backend.notify(refund) == (200, {"ok": True, "parked": True})
    jws = mint(backend, "--transaction", "--transaction-id", "9401", product="pro.unlock", kind="non-consumable")
    claim(backend, keys, jws)
    assert backend.wallet()["owned"] == []
    # Once claimed, the purchase's notifications are filed for its owner at once.
    jws = mint(backend, "--transaction", "--transaction-id", "9402")
    assert claim(backend, keys, jws)[0] == 200
    assert backend.notify(mint(backend, "--type", "ONE_TIME_CHARGE", "--transaction-id", "9402")) == (200, {"ok": True})
    assert backend.notify(mint(backend, "--type", "REFUND", "--transaction-id", "9402"))[0] == 200
    assert backend.wallet()["coins"] == {}


def test_a_replayed_claim_of_coins_is_granted_again_only_under_claim_replay(start):
    for bugs, coins in (("", 1), ("claim-replay", 3)):
        backend = start(bugs)
        keys = sign_up(backend)
        jws = mint(backend, "--transaction", "--transaction-id", "9501")
        answers = [claim(backend, keys, jws)[0] for _ in range(3)]
        assert answers == ([200, 409, 409] if not bugs else [200, 200, 200])
        assert backend.wallet()["coins"] == {"coins.100": coins}


def test_provisioning_registers_keys_the_hook_signs_with(start):
    backend = start()
    printed = subprocess.run(
        [sys.executable, HERE / "provision.py", "--dictate-tokens", "--claim-keys", backend.base],
        input=json.dumps({"appAccountToken": USER.upper()}) + "\n", capture_output=True, text=True, timeout=60, check=True).stdout
    account = json.loads(printed)
    assert account["id"] == account["dictatedToken"] != USER
    jws = mint(backend, "--transaction", "--transaction-id", "9601")
    request = {"id": 1, "account": account, "body": json.dumps({"transactionId": "9601"})}
    hook = HERE.parents[1] / "Profiles/examples/claim-hook/sign_claim.py"
    answer = json.loads(subprocess.run([sys.executable, hook], input=json.dumps(request) + "\n",
                                       capture_output=True, text=True, timeout=60, check=True).stdout)
    body = {"version": 1, "provider": "apple", "transactionId": "9601", "signedTransaction": jws,
            "identityKey": account["identityKey"], "deviceKey": account["deviceKey"], **answer["setBodyFields"]}
    assert backend.request("POST", "/api/v1/purchases/claim", body) == (200, {"ok": True, "granted": True})
    assert backend.wallet(account["id"])["coins"] == {"coins.100": 1}
