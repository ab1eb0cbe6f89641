"""The example backend's purchase claims: the app proves a purchase is its account's with two Ed25519 signatures.

Each account has two Ed25519 key pairs, its identity key and its device key, whose public halves are registered at
sign-up (`POST /api/v1/accounts/keys`; provision.py does it for a load test). To claim an Apple purchase the app
posts `POST /api/v1/purchases/claim`:

    {"version": 1, "provider": "apple", "transactionId": "<id>", "signedTransaction": "<JWS>",
     "identityKey": "<hex>", "deviceKey": "<hex>", "identitySignature": "<hex>", "deviceSignature": "<hex>"}

Both keys sign the BLAKE2b-256 hash of the claim (`claim_digest`): the version byte, the two 32-byte public keys,
the provider (one length byte, then its bytes) and the transaction id. The keys name the account; no user id is
sent. The backend checks the signatures, verifies the JWS with Apple's SignedDataVerifier, checks it is the
transaction signed for, and files it for the account as `/api/v1/purchases/verify` does (the same answers).

A purchase made without `appAccountToken` belongs to the account that claims it: the claim records its owner (by
original transaction id, so renewals and refunds follow), and Apple's notifications about it are filed for that
owner. One that arrives before any claim is parked, acknowledged, and filed when the claim comes.
"""

import hashlib

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from flask import jsonify, request

import app as backend

CLAIM_VERSION = 1
PROVIDER = "apple"

SCHEMA = """
CREATE TABLE IF NOT EXISTS account_keys (
    identity_key TEXT PRIMARY KEY,
    device_key TEXT NOT NULL,
    user_id TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS owners (
    original_transaction_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS parked_notifications (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    original_transaction_id TEXT NOT NULL,
    signed_payload TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS parked_by_original ON parked_notifications (original_transaction_id);
"""

CLAIM_FIELDS = ("provider", "transactionId", "signedTransaction", "identityKey", "deviceKey", "identitySignature",
                "deviceSignature")


def claim_digest(version, identity_key, device_key, provider, transaction_id):
    """The 32-byte BLAKE2b hash both keys sign: version, the two public keys, the provider and the transaction id."""
    hasher = hashlib.blake2b(digest_size=32)
    hasher.update(bytes([version]))
    hasher.update(identity_key)
    hasher.update(device_key)
    hasher.update(bytes([len(provider)]) + provider.encode())
    hasher.update(transaction_id.encode())
    return hasher.digest()


def init_db(db):
    with backend.write_transaction(db):
        for statement in SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)


def owner(db, original):
    """The account that claimed the purchase (or subscription) `original`, or None. An owner never changes."""
    row = db.execute("SELECT user_id FROM owners WHERE original_transaction_id = ?", (original,)).fetchone()
    return row["user_id"] if row is not None else None


def owner_or_park(db, tx, signed_payload):
    """The account that claimed `tx`'s purchase, or None after parking the notification until one does. The park is
    one write transaction with a second look, so a claim recording its owner meanwhile either comes first (found
    here) or finds it parked."""
    original = tx.originalTransactionId or tx.transactionId
    if (known := owner(db, original)) is not None:
        return known
    with backend.write_transaction(db):
        row = db.execute("SELECT user_id FROM owners WHERE original_transaction_id = ?", (original,)).fetchone()
        if row is None:
            db.execute("INSERT INTO parked_notifications (original_transaction_id, signed_payload) VALUES (?, ?)",
                       (original, signed_payload))
    return row["user_id"] if row is not None else None


def register(app, verifier, db_path, file_device_transaction, file_notification):
    """Adds the key registration and claim endpoints to `app`. `file_device_transaction(tx, user)` files a verified
    transaction the app brought; `file_notification(signed_payload)` files a notification as the webhook does."""

    db = backend.connect(db_path)
    try:
        init_db(db)
    finally:
        db.close()

    def error(status, message):
        return jsonify({"ok": False, "error": message}), status

    @app.post("/api/v1/accounts/keys")
    def register_keys():
        body = request.get_json(silent=True)
        accounts = body.get("accounts") if isinstance(body, dict) else None
        if not isinstance(accounts, list):
            return error(400, "body must be {\"accounts\": [{\"userId\", \"identityKey\", \"deviceKey\"}]}")
        rows = []
        for account in accounts:
            user = backend.canonical_user(account.get("userId")) if isinstance(account, dict) else None
            keys = [public_key(account.get(name)) for name in ("identityKey", "deviceKey")] if user else [None]
            if None in keys:
                return error(400, f"not a user id and two hex Ed25519 public keys: {account}")
            rows.append((account["identityKey"].lower(), account["deviceKey"].lower(), user))
        db = backend.connect(db_path)
        try:
            with backend.write_transaction(db):
                for identity, device, user in rows:
                    known = db.execute("SELECT * FROM account_keys WHERE identity_key = ?", (identity,)).fetchone()
                    if known is not None and (known["user_id"], known["device_key"]) != (user, device):
                        raise KeyConflict(identity)
                    db.execute("INSERT OR IGNORE INTO account_keys (identity_key, device_key, user_id) "
                               "VALUES (?, ?, ?)", (identity, device, user))
        except KeyConflict as conflict:
            return error(409, f"identity key {conflict} is registered to another account or device key")
        finally:
            db.close()
        return jsonify({"ok": True, "registered": len(rows)})

    @app.post("/api/v1/purchases/claim")
    def claim_purchase():
        body = request.get_json(silent=True)
        if not isinstance(body, dict) or body.get("version") != CLAIM_VERSION or body.get("provider") != PROVIDER \
                or not all(isinstance(body.get(name), str) for name in CLAIM_FIELDS):
            return error(400, f"body must be a version {CLAIM_VERSION} claim with {', '.join(CLAIM_FIELDS)}")
        user = claimant(body)
        if user is None:
            return error(401, "the claim's keys are not an account's, or its signatures do not verify")
        try:
            tx = verifier.transaction(body["signedTransaction"])
        except backend.VerificationException as failure:
            return error(400, f"transaction not verified: {failure.status}")
        if tx.transactionId != body["transactionId"]:
            return error(400, "the signed transaction is not the one the claim names")
        original = tx.originalTransactionId or tx.transactionId
        db = backend.connect(db_path)
        try:
            # A series' first claim records its owner (one write); its later claims only read it.
            claimed_by = owner(db, original)
            if claimed_by is None:
                with backend.write_transaction(db):
                    db.execute("INSERT OR IGNORE INTO owners (original_transaction_id, user_id) VALUES (?, ?)",
                               (original, user))
                    claimed_by = owner(db, original)
            if claimed_by != user:
                return error(403, "the purchase was claimed by another account")
            if "claim-replay" in backend.BUGS and (replayed := top_up(db, tx)) is not None:
                return replayed
            answer = file_device_transaction(tx, user)
            file_parked(db, original)
            return answer
        finally:
            db.close()

    def claimant(body):
        """The account whose registered keys signed `body`'s claim, or None."""
        identity, device = public_key(body["identityKey"]), public_key(body["deviceKey"])
        if identity is None or device is None:
            return None
        db = backend.connect(db_path)
        try:
            row = db.execute("SELECT user_id FROM account_keys WHERE identity_key = ? AND device_key = ?",
                             (body["identityKey"].lower(), body["deviceKey"].lower())).fetchone()
        finally:
            db.close()
        digest = claim_digest(CLAIM_VERSION, identity.public_bytes_raw(), device.public_bytes_raw(), PROVIDER,
                              body["transactionId"])
        try:
            identity.verify(bytes.fromhex(body["identitySignature"]), digest)
            device.verify(bytes.fromhex(body["deviceSignature"]), digest)
        except (InvalidSignature, ValueError):
            return None
        return row["user_id"] if row is not None else None

    def file_parked(db, original):
        """Files the notifications about `original` that came before its owner was known, oldest first. The owner
        is committed, so none is parked after this read: most claims need no write here."""
        if db.execute("SELECT 1 FROM parked_notifications WHERE original_transaction_id = ?",
                      (original,)).fetchone() is None:
            return
        with backend.write_transaction(db):
            parked = db.execute("SELECT id, signed_payload FROM parked_notifications WHERE original_transaction_id = ? "
                                "ORDER BY id", (original,)).fetchall()
            db.execute("DELETE FROM parked_notifications WHERE original_transaction_id = ?", (original,))
        for row in parked:
            file_notification(row["signed_payload"])

    def top_up(db, tx):
        # The bug: "a claim is signed by the account's own keys, so it cannot be a replay": a claim of coins already
        # credited adds them again instead of answering "already processed".
        if tx.rawType != backend.CONSUMABLE or tx.revocationDate:
            return None
        with backend.write_transaction(db):
            cursor = db.execute("UPDATE credits SET amount = amount + ? WHERE transaction_id = ?",
                                (tx.quantity or 1, tx.transactionId))
        return jsonify({"ok": True, "granted": True}) if cursor.rowcount == 1 else None


class KeyConflict(Exception):
    """An identity key registered again for another account or with another device key."""


def public_key(text):
    """The Ed25519 public key `text` holds (64 hex digits), or None."""
    try:
        raw = bytes.fromhex(text)
        return Ed25519PublicKey.from_public_bytes(raw) if len(raw) == 32 else None
    except (TypeError, ValueError):
        return None
