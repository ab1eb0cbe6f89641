"""An example in-app purchase backend: Flask (served by gunicorn) + SQLite + Apple's app-store-server-library.

It is not a PayStorm target by design: its API is its own (see README.md), and PayStorm drives it only through
a mapping profile (Profiles/examples/example-backend.json5). `BUGS=a,b` switches on realistic bugs, each in this
file's own code paths; without BUGS it behaves as a careful backend should:

- every signed object is verified with `SignedDataVerifier` (trusting $EXAMPLE_TRUST, the test root);
- a notification is processed once (notificationUUID) and a transaction credited once (transactionId), both
  enforced by unique constraints inside one `BEGIN IMMEDIATE` transaction, so concurrent duplicates on
  different gunicorn workers cannot both win;
- a refund revokes that transaction only, and sticks: only a newer REFUND_REVERSED lifts it;
- subscription state follows the newest signedDate, and a period never moves back;
- an error answers 500 so the App Store retries; a 2xx is sent only after COMMIT.

Configuration (environment): EXAMPLE_DB (SQLite file), EXAMPLE_TRUST (DER root certificate), EXAMPLE_BUNDLE_ID,
EXAMPLE_APP_APPLE_ID, EXAMPLE_ENVIRONMENT (Sandbox), BUGS.

With EXAMPLE_TOKEN_SECRET set, the app's endpoints (`/api/v1/...`) want the user's session token, as a staging
backend's do: `Authorization: Bearer <user>.<expires ms>.<HMAC-SHA256 of "<user>.<expires ms>">`, for the user the
request names, not expired; anything else is 401. `provision.py` issues such tokens (the secret shared through the
environment), valid for EXAMPLE_TOKEN_SECONDS.

With EXAMPLE_WALLET_LIMIT=N, each worker answers at most N wallet reads in each second of the clock and 429 (with
`Retry-After: 1`) past that, as a staging gateway that limits a client's rate does. EXAMPLE_DEVICE_LIMIT=N does the
same to the app's purchase verifications (`/api/v1/purchases/verify`); the webhook is never limited.

The pull endpoint (`POST /api/v1/purchases/pull`, `{"transactionId", "userId", "sku"}`) asks the App Store Server
API with Apple's AppStoreServerAPIClient: EXAMPLE_API_URL (the base URL, PayStorm's API in tests), EXAMPLE_API_KEY
(the .p8 private key file), EXAMPLE_API_KEY_ID, EXAMPLE_API_ISSUER_ID; the HTTPS client trusts REQUESTS_CA_BUNDLE.
With EXAMPLE_PURCHASES_BY_PULL=1 a one-time purchase is granted by the app's pull: the webhook's ONE_TIME_CHARGE
only confirms it (renewals, refunds and subscriptions still go through the webhook), and grants it only when a pull
claimed it while Apple's API could not answer; a pull Apple's API cannot answer grants what a webhook confirmed.

The receipt endpoint (`POST /api/v1/receipts/verify`, `{"receipt", "userId"}`) checks the app's receipt with Apple's
legacy verifyReceipt at Apple's own URLs (receipt.py says how a test routes them to PayStorm: REQUESTS_CA_BUNDLE and
EXAMPLE_APPLE_HOSTS) and grants what the App Store's answer lists, by the app's catalog (RECEIPT_PRODUCTS).
"""

import contextlib
import hashlib
import hmac
import logging
import os
import sqlite3
import threading
import time
import uuid

import jwt
import receipt
from appstoreserverlibrary.api_client import APIException, AppStoreServerAPIClient
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.models.JWSRenewalInfoDecodedPayload import JWSRenewalInfoDecodedPayload
from appstoreserverlibrary.models.JWSTransactionDecodedPayload import JWSTransactionDecodedPayload
from appstoreserverlibrary.models.LibraryUtility import _get_cattrs_converter
from appstoreserverlibrary.models.ResponseBodyV2DecodedPayload import ResponseBodyV2DecodedPayload
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException
from flask import Flask, jsonify, request

# What each bug does; README.md says which invariant should catch it.
KNOWN_BUGS = {
    "racy-dedupe": "dedupe by a read before the write transaction, and no unique constraint behind it",
    "pending-unlock": "a pending (Ask to Buy) report unlocks the product until the parent decides",
    "refund-by-sku": "a refund revokes every purchase of the product by that user, not the refunded transaction",
    "skip-verify": "signed payloads are decoded without verifying signature, chain, bundle or environment",
    "blind-upsert": "purchases and subscriptions are upserted whatever their signedDate (INSERT OR REPLACE)",
    "token-case": "webhooks file purchases under appAccountToken as sent (uppercase); the app uses lowercase",
    "grant-unconfirmed": "the pull endpoint grants the app's claimed product when Apple answers not found or an error",
    "ack-on-rate-limit": "the pull endpoint answers 200 without granting when Apple answers 429 (rate limited)",
    "ack-before-commit": "webhooks are answered 200 at once and filed half a second later, from memory",
    "stale-expiry": "an expiry (EXPIRED, billing retry, a device's view of a lapsed period) is applied whatever its signedDate",
    "refuse-reversal": "every REFUND_REVERSED is answered 500: its handler throws, so Apple retries it until it gives up",
    "dies-on-restart": "start-up replays a journal after an outage and fails from the second restart on (exit 1)",
    "receipt-grants-cancelled": "the receipt endpoint grants every transaction the receipt lists, cancelled ones too",
    "claim-replay": "a signed claim of coins already credited adds them again (claims.py)",
}

BUGS = frozenset(name.strip() for name in os.environ.get("BUGS", "").split(",") if name.strip())
if BUGS - KNOWN_BUGS.keys():
    raise SystemExit(f"BUGS: unknown {', '.join(sorted(BUGS - KNOWN_BUGS.keys()))} (known: {', '.join(KNOWN_BUGS)})")

CONSUMABLE = "Consumable"
NON_CONSUMABLE = "Non-Consumable"
AUTO_RENEWABLE = "Auto-Renewable Subscription"
NON_RENEWING = "Non-Renewing Subscription"

# The app's catalog, as a backend on receipts keeps it: verifyReceipt names products, not their types.
RECEIPT_PRODUCTS = {
    "coins.100": CONSUMABLE, "pro.unlock": NON_CONSUMABLE, "premium.gold": AUTO_RENEWABLE,
    "premium.silver": AUTO_RENEWABLE, "season.pass": NON_RENEWING,
}

# Subscription states as the wallet shows them. Entitled: ACTIVE and GRACE_PERIOD (until their end).
ACTIVE, GRACE_PERIOD, BILLING_RETRY, EXPIRED, REVOKED = "ACTIVE", "GRACE_PERIOD", "BILLING_RETRY", "EXPIRED", "REVOKED"
# App Store `data.status` values.
STATUS_STATES = {1: ACTIVE, 2: EXPIRED, 3: BILLING_RETRY, 4: GRACE_PERIOD, 5: REVOKED}

SCHEMA = """
CREATE TABLE IF NOT EXISTS notifications (
    notification_uuid TEXT {unique},
    notification_type TEXT NOT NULL,
    subtype TEXT,
    signed_date INTEGER NOT NULL,
    received_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS purchases (
    transaction_id TEXT PRIMARY KEY,
    original_transaction_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    sku TEXT NOT NULL,
    kind TEXT NOT NULL,
    quantity INTEGER NOT NULL,
    expires_at_ms INTEGER,
    upgraded INTEGER NOT NULL DEFAULT 0,
    signed_date INTEGER NOT NULL,
    revoked_at INTEGER,
    revoke_signed_date INTEGER,
    reversal_signed_date INTEGER
);
CREATE INDEX IF NOT EXISTS purchases_by_user ON purchases (user_id);
CREATE TABLE IF NOT EXISTS credits (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    transaction_id TEXT NOT NULL {unique},
    user_id TEXT NOT NULL,
    sku TEXT NOT NULL,
    amount INTEGER NOT NULL,
    source TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS subscriptions (
    original_transaction_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    sku TEXT NOT NULL,
    transaction_id TEXT NOT NULL,
    state TEXT NOT NULL,
    expires_at_ms INTEGER,
    grace_expires_at_ms INTEGER,
    state_signed_date INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS subscriptions_by_user ON subscriptions (user_id);
-- Pulling mode: one-time purchases Apple's webhook confirmed (signed) and ids the app claimed while Apple's API
-- could not answer: whichever comes second grants, so neither channel alone can lose a purchase.
CREATE TABLE IF NOT EXISTS confirmations (
    transaction_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    signed_transaction TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS claims (
    transaction_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    PRIMARY KEY (transaction_id, user_id)
);
CREATE TABLE IF NOT EXISTS reports (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id TEXT NOT NULL,
    sku TEXT NOT NULL,
    result TEXT NOT NULL,
    received_at INTEGER NOT NULL
);
"""

log = logging.getLogger("example-backend")


def now_ms():
    return int(time.time() * 1000)


def connect(path):
    # Autocommit mode: every write transaction is an explicit BEGIN IMMEDIATE (see write_transaction).
    db = sqlite3.connect(path, timeout=15, isolation_level=None)
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA synchronous = FULL")
    return db


@contextlib.contextmanager
def write_transaction(db):
    """One durable write transaction; the caller answers 2xx only after it returns."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def init_db(path):
    db = connect(path)
    try:
        db.execute("PRAGMA journal_mode = WAL")
        # The racy-dedupe bug is a schema whose migration never added the unique constraints.
        unique = "" if "racy-dedupe" in BUGS else "UNIQUE"
        with write_transaction(db):
            for statement in SCHEMA.format(unique=unique).split(";"):
                if statement.strip():
                    db.execute(statement)
    finally:
        db.close()


def session_token(secret, user, expires_ms):
    """A user's session token, valid until `expires_ms` (provision.py issues them with the same secret)."""
    payload = f"{user}.{expires_ms}"
    return payload + "." + hmac.new(secret.encode(), payload.encode(), hashlib.sha256).hexdigest()


def session_user(secret, authorization, now):
    """The user a live `Bearer` session token names, or None for a missing, forged or expired one."""
    if not authorization.startswith("Bearer "):
        return None
    user, _, rest = authorization[len("Bearer "):].partition(".")
    expires, _, _ = rest.partition(".")
    if not expires.isdigit() or int(expires) <= now:
        return None
    expected = session_token(secret, user, int(expires))
    return user if hmac.compare_digest(expected, authorization[len("Bearer "):]) else None


def canonical_user(value):
    """The backend's user id: a lowercase UUID string, or None when `value` is not a UUID."""
    try:
        return str(uuid.UUID(str(value)))
    except ValueError:
        return None


class RateLimit:
    """At most `per_second` requests in each second of the clock, per worker (0: no limit), as a gateway limits a
    client's rate; past it, `refusal()` is a 429 answer with `Retry-After: 1`."""

    def __init__(self, per_second, what):
        self.per_second, self.what = per_second, what
        self.second, self.count = 0, 0
        self.lock = threading.Lock()

    def refusal(self):
        """None while the request is within the limit, else the 429 answer to return."""
        if self.per_second <= 0:
            return None
        second = int(time.time())
        with self.lock:
            if self.second != second:
                self.second, self.count = second, 0
            self.count += 1
            if self.count <= self.per_second:
                return None
        answer = jsonify({"ok": False, "error": f"rate limited: {self.per_second} {self.what} a second"})
        answer.headers["Retry-After"] = "1"
        return answer, 429


class Verifier:
    """Apple's SignedDataVerifier, or (skip-verify) a bare decode of the JWS payload."""

    def __init__(self, root_der, bundle_id, app_apple_id, environment):
        self.apple = SignedDataVerifier([root_der], False, environment, bundle_id, app_apple_id)

    def notification(self, jws):
        if "skip-verify" in BUGS:
            return self._decode(jws, ResponseBodyV2DecodedPayload)
        return self.apple.verify_and_decode_notification(jws)

    def transaction(self, jws):
        if "skip-verify" in BUGS:
            return self._decode(jws, JWSTransactionDecodedPayload)
        return self.apple.verify_and_decode_signed_transaction(jws)

    def renewal(self, jws):
        if "skip-verify" in BUGS:
            return self._decode(jws, JWSRenewalInfoDecodedPayload)
        return self.apple.verify_and_decode_renewal_info(jws)

    @staticmethod
    def _decode(jws, model):
        # The bug: "the payload came over TLS from Apple, just read it". No signature, chain, bundle or
        # environment check, so anyone can post a purchase.
        try:
            claims = jwt.decode(jws, options={"verify_signature": False})
            return _get_cattrs_converter(model).structure(claims, model)
        except Exception as error:
            raise VerificationException(None) from error


class Store:
    """The purchase ledger: purchases, credits (grants) and subscriptions, in one SQLite file."""

    def __init__(self, db):
        self.db = db

    def seen_notification(self, notification_uuid):
        return self.db.execute(
            "SELECT 1 FROM notifications WHERE notification_uuid = ?", (notification_uuid,)
        ).fetchone() is not None

    def credited(self, transaction_id):
        return self.db.execute("SELECT 1 FROM credits WHERE transaction_id = ?", (transaction_id,)).fetchone() is not None

    def record_notification(self, note):
        """True when this notification is new; inside the write transaction, so it decides duplicates."""
        cursor = self.db.execute(
            "INSERT INTO notifications (notification_uuid, notification_type, subtype, signed_date, received_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING"
            if "racy-dedupe" not in BUGS
            else "INSERT INTO notifications (notification_uuid, notification_type, subtype, signed_date, received_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (note.notificationUUID, note.rawNotificationType, note.rawSubtype, note.signedDate, now_ms()),
        )
        return cursor.rowcount == 1

    def record_purchase(self, tx, user, signed, revoked_at=None, reversal=False):
        """Stores the newest view of a transaction; a revocation sticks until a newer reversal."""
        values = (
            tx.transactionId, tx.originalTransactionId or tx.transactionId, user, tx.productId, tx.rawType,
            tx.quantity or 1, tx.expiresDate, 1 if tx.isUpgraded else 0, signed,
        )
        if "blind-upsert" in BUGS:
            # The bug: last write wins. A purchase replayed after its refund writes revoked_at back to NULL.
            self.db.execute(
                "INSERT OR REPLACE INTO purchases (transaction_id, original_transaction_id, user_id, sku, kind, "
                "quantity, expires_at_ms, upgraded, signed_date, revoked_at, revoke_signed_date) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values + (revoked_at, signed if revoked_at is not None else None),
            )
            return
        row = self.db.execute("SELECT * FROM purchases WHERE transaction_id = ?", (tx.transactionId,)).fetchone()
        if row is None:
            self.db.execute(
                "INSERT INTO purchases (transaction_id, original_transaction_id, user_id, sku, kind, quantity, "
                "expires_at_ms, upgraded, signed_date, revoked_at, revoke_signed_date, reversal_signed_date) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                values
                + (revoked_at, signed if revoked_at is not None else None, signed if reversal else None),
            )
            return
        if signed > row["signed_date"]:
            self.db.execute(
                "UPDATE purchases SET sku = ?, kind = ?, quantity = ?, expires_at_ms = ?, upgraded = ?, "
                "signed_date = ? WHERE transaction_id = ?",
                (tx.productId, tx.rawType, tx.quantity or 1, tx.expiresDate, 1 if tx.isUpgraded else 0, signed,
                 tx.transactionId),
            )
        # A replay carries no news of a refund, so it never lifts one; only a reversal signed after the refund
        # does, and a refund signed after the reversal sets it again.
        if revoked_at is not None and signed > (row["reversal_signed_date"] or -1):
            self.db.execute(
                "UPDATE purchases SET revoked_at = ?, revoke_signed_date = MAX(COALESCE(revoke_signed_date, 0), ?) "
                "WHERE transaction_id = ?",
                (revoked_at, signed, tx.transactionId),
            )
        elif reversal and signed > (row["revoke_signed_date"] or -1):
            self.db.execute(
                "UPDATE purchases SET revoked_at = NULL, "
                "reversal_signed_date = MAX(COALESCE(reversal_signed_date, 0), ?) WHERE transaction_id = ?",
                (signed, tx.transactionId),
            )

    def revoke_by_sku(self, user, sku, revoked_at, signed):
        # The bug: "refund the user's sku" instead of the refunded transaction.
        self.db.execute(
            "UPDATE purchases SET revoked_at = ?, revoke_signed_date = ? WHERE user_id = ? AND sku = ?",
            (revoked_at, signed, user, sku),
        )

    def is_revoked(self, transaction_id):
        row = self.db.execute("SELECT revoked_at FROM purchases WHERE transaction_id = ?", (transaction_id,)).fetchone()
        return row is not None and row["revoked_at"] is not None

    def credit(self, tx, user, source):
        """Credits a transaction once; True when this call credited it."""
        sql = "INSERT INTO credits (transaction_id, user_id, sku, amount, source, created_at) VALUES (?, ?, ?, ?, ?, ?)"
        if "racy-dedupe" not in BUGS:
            sql += " ON CONFLICT (transaction_id) DO NOTHING"
        cursor = self.db.execute(sql, (tx.transactionId, user, tx.productId, tx.quantity or 1, source, now_ms()))
        return cursor.rowcount == 1

    def update_subscription(self, tx, user, state, signed, grace_expires=None, reported=True):
        """Moves a subscription to `state` if `signed` is newer; its period only ever moves forward. A state not
        `reported` by the App Store (the device path's, read off the transaction) counts only for the current
        period."""
        original = tx.originalTransactionId or tx.transactionId
        row = self.db.execute("SELECT * FROM subscriptions WHERE original_transaction_id = ?", (original,)).fetchone()
        # Is this transaction the subscription's current period? A refund of an older period leaves it be.
        current = (
            row is None
            or row["transaction_id"] == tx.transactionId
            or (tx.expiresDate or 0) >= (row["expires_at_ms"] or 0)
        )
        # The wallet reads a refund off the current purchase's row, ordered against its reversal there; written
        # into the state here, with this view's signed date, it would outrank a reversal signed before this view
        # that is still on its way. blind-upsert's wallet does not look, so its state carries the refund.
        if "blind-upsert" in BUGS and self.is_revoked(tx.transactionId) and current:
            state = REVOKED
        if row is None or "blind-upsert" in BUGS:
            # blind-upsert: the newest arrival wins, whatever its signedDate and period.
            self.db.execute(
                "INSERT OR REPLACE INTO subscriptions (original_transaction_id, user_id, sku, transaction_id, state, "
                "expires_at_ms, grace_expires_at_ms, state_signed_date) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (original, user, tx.productId, tx.transactionId, state, tx.expiresDate, grace_expires, signed),
            )
            return
        newer_period = (tx.expiresDate or 0) > (row["expires_at_ms"] or 0)
        if newer_period:
            self.db.execute(
                "UPDATE subscriptions SET sku = ?, transaction_id = ?, expires_at_ms = ? "
                "WHERE original_transaction_id = ?",
                (tx.productId, tx.transactionId, tx.expiresDate, original),
            )
        # The stale-expiry bug: "it expired, so it expired", even when the news is older than the row (a retried or
        # reordered EXPIRED or DID_FAIL_TO_RENEW after a renewal, a late listener's view of a lapsed period). The
        # next renewal, newer, repairs the row.
        stale_expiry = "stale-expiry" in BUGS and state in (EXPIRED, BILLING_RETRY)
        if not current and (state == REVOKED or not reported) and not stale_expiry:
            return
        # A refund (or its reversal) that trails a newer view still counts: it is on the purchase's row, which
        # the wallet reads.
        if signed > row["state_signed_date"] or stale_expiry:
            self.db.execute(
                "UPDATE subscriptions SET state = ?, grace_expires_at_ms = ?, state_signed_date = ? "
                "WHERE original_transaction_id = ?",
                (state, grace_expires, signed, original),
            )

    def claimed(self, transaction_id, user):
        return self.db.execute(
            "SELECT 1 FROM claims WHERE transaction_id = ? AND user_id = ?", (transaction_id, user)
        ).fetchone() is not None

    def confirm(self, transaction_id, user, signed_transaction):
        self.db.execute(
            "INSERT OR IGNORE INTO confirmations (transaction_id, user_id, signed_transaction) VALUES (?, ?, ?)",
            (transaction_id, user, signed_transaction),
        )

    def confirmation(self, transaction_id, user):
        """The signed transaction Apple's webhook confirmed for `user`, or None."""
        row = self.db.execute(
            "SELECT signed_transaction FROM confirmations WHERE transaction_id = ? AND user_id = ?",
            (transaction_id, user),
        ).fetchone()
        return row["signed_transaction"] if row is not None else None

    def claim(self, transaction_id, user):
        self.db.execute("INSERT OR IGNORE INTO claims (transaction_id, user_id) VALUES (?, ?)", (transaction_id, user))

    def record_report(self, user, sku, result):
        self.db.execute(
            "INSERT INTO reports (user_id, sku, result, received_at) VALUES (?, ?, ?, ?)", (user, sku, result, now_ms())
        )

    def wallet(self, user, now, with_credits=False):
        owned = [
            row["sku"]
            for row in self.db.execute(
                "SELECT DISTINCT p.sku FROM purchases p JOIN credits c ON c.transaction_id = p.transaction_id "
                "WHERE p.user_id = ? AND p.kind IN (?, ?) AND p.revoked_at IS NULL ORDER BY p.sku",
                (user, NON_CONSUMABLE, NON_RENEWING),
            )
        ]
        coins = {
            row["sku"]: row["total"]
            for row in self.db.execute(
                "SELECT p.sku, SUM(c.amount) AS total FROM credits c JOIN purchases p "
                "ON p.transaction_id = c.transaction_id WHERE c.user_id = ? AND p.kind = ? AND p.revoked_at IS NULL "
                "GROUP BY p.sku ORDER BY p.sku",
                (user, CONSUMABLE),
            )
        }
        subscriptions = []
        for row in self.db.execute(
            "SELECT s.*, p.revoked_at AS current_revoked_at FROM subscriptions s "
            "LEFT JOIN purchases p ON p.transaction_id = s.transaction_id "
            "WHERE s.user_id = ? ORDER BY s.sku, s.original_transaction_id",
            (user,),
        ):
            state, expires = row["state"], row["expires_at_ms"]
            # A refunded current period is revoked, whichever view of the subscription was filed last.
            if row["current_revoked_at"] is not None and "blind-upsert" not in BUGS:
                state = REVOKED
            if state == GRACE_PERIOD:
                expires = row["grace_expires_at_ms"] or expires
            # A period that ended without news is over; the EXPIRED notification may still be on its way.
            if state in (ACTIVE, GRACE_PERIOD) and expires is not None and expires <= now:
                state = EXPIRED
            subscriptions.append({"sku": row["sku"], "state": state, "expires_at_ms": expires})
        wallet = {"owned": owned, "subscriptions": subscriptions, "coins": coins}
        if not with_credits:
            return wallet
        # What was credited, per transaction (refunded ones left out, as the rest of the wallet does).
        wallet["credits"] = [
            {"transaction_id": row["transaction_id"], "sku": row["sku"]}
            for row in self.db.execute(
                "SELECT c.transaction_id, c.sku FROM credits c LEFT JOIN purchases p "
                "ON p.transaction_id = c.transaction_id WHERE c.user_id = ? AND p.revoked_at IS NULL "
                "ORDER BY c.id",
                (user,),
            )
        ]
        return wallet


def subscription_state(note, renewal):
    """The state a notification reports: its data.status when present, else what its type implies."""
    status = note.data.rawStatus if note.data is not None else None
    if status in STATUS_STATES:
        return STATUS_STATES[status]
    kind, subtype = note.rawNotificationType, note.rawSubtype
    if kind in ("REFUND", "REVOKE"):
        return REVOKED
    if kind == "EXPIRED":
        return EXPIRED
    if kind == "DID_FAIL_TO_RENEW":
        return GRACE_PERIOD if subtype == "GRACE_PERIOD" or (renewal and renewal.gracePeriodExpiresDate) else BILLING_RETRY
    if kind == "GRACE_PERIOD_EXPIRED":
        return BILLING_RETRY
    return ACTIVE


def api_client(bundle_id, environment):
    """Apple's client pointed at EXAMPLE_API_URL, or None when the pull endpoint is not configured."""
    url = os.environ.get("EXAMPLE_API_URL")
    if not url:
        return None
    with open(os.environ["EXAMPLE_API_KEY"], "rb") as file:
        key = file.read()
    client = AppStoreServerAPIClient(
        key, os.environ["EXAMPLE_API_KEY_ID"], os.environ["EXAMPLE_API_ISSUER_ID"], bundle_id, environment
    )
    client._base_url = url  # Apple's host, mapped to PayStorm's API (a hosts entry does the same)
    return client


class DeferredFiling:
    """ack-before-commit's queue: what the webhook acknowledged, kept in this worker's memory and filed every half
    second (EXAMPLE_FILING_SECONDS) by a thread of its own, started at the first notification, after gunicorn
    forked the worker."""

    def __init__(self, app, file):
        self.app, self.file = app, file
        self.every = float(os.environ.get("EXAMPLE_FILING_SECONDS") or 0.5)
        self.lock = threading.Lock()
        self.waiting = []
        self.thread = None

    def put(self, signed_payload):
        with self.lock:
            self.waiting.append(signed_payload)
            if self.thread is None:
                self.thread = threading.Thread(target=self.run, name="deferred-filing", daemon=True)
                self.thread.start()

    def run(self):
        while True:
            time.sleep(self.every)
            with self.lock:
                batch, self.waiting = self.waiting, []
            with self.app.app_context():
                for signed_payload in batch:
                    try:
                        self.file(signed_payload)
                    except Exception:  # a failure here is lost like the rest: the bug is that nobody retries
                        log.exception("deferred notification not filed")


def start_up(db_path):
    """What start.sh runs before it starts the server. With dies-on-restart, it counts the starts of the database
    (in DB.starts) and fails from the third on: the first restart comes back, the second never does."""
    if "dies-on-restart" not in BUGS:
        return
    counter = db_path + ".starts"
    starts = 1
    with contextlib.suppress(FileNotFoundError, ValueError):
        with open(counter) as file:
            starts = int(file.read().strip()) + 1
    with open(counter, "w") as file:
        file.write(str(starts))
    if starts >= 3:
        raise SystemExit(f"start-up failed: replaying the journal after an outage (start {starts} of {db_path}) "
                         "found a torn page")


def create_app():
    import claims  # it uses this module's helpers, so it is imported once this module is

    db_path = os.environ["EXAMPLE_DB"]
    with open(os.environ["EXAMPLE_TRUST"], "rb") as file:
        root = file.read()
    verifier = Verifier(
        root,
        os.environ.get("EXAMPLE_BUNDLE_ID", "com.example.paystorm"),
        int(os.environ.get("EXAMPLE_APP_APPLE_ID", "1234567890")),
        Environment(os.environ.get("EXAMPLE_ENVIRONMENT", "Sandbox")),
    )
    init_db(db_path)
    apple = api_client(os.environ.get("EXAMPLE_BUNDLE_ID", "com.example.paystorm"),
                       Environment(os.environ.get("EXAMPLE_ENVIRONMENT", "Sandbox")))
    purchases_by_pull = os.environ.get("EXAMPLE_PURCHASES_BY_PULL") == "1"
    token_secret = os.environ.get("EXAMPLE_TOKEN_SECRET")
    wallet_limit = RateLimit(int(os.environ.get("EXAMPLE_WALLET_LIMIT") or 0), "wallet reads")
    device_limit = RateLimit(int(os.environ.get("EXAMPLE_DEVICE_LIMIT") or 0), "purchase verifications")
    app = Flask("example-backend")

    if token_secret:
        @app.before_request
        def require_session():
            if not request.path.startswith("/api/v1/"):
                return None
            user = session_user(token_secret, request.headers.get("Authorization", ""), now_ms())
            body = request.get_json(silent=True) if request.method == "POST" else None
            named = request.view_args.get("user_id") if request.view_args else None
            if named is None and isinstance(body, dict):
                named = body.get("userId")
            if user is None or (named is not None and canonical_user(named) != user):
                return jsonify({"ok": False, "error": "a live session token for this user is required"}), 401
            return None

    def error(status, message):
        return jsonify({"ok": False, "error": message}), status

    def webhook_user(tx):
        if "token-case" in BUGS:
            # The bug: the token as the App Store sent it (uppercase), while the app's userId is lowercase.
            return tx.appAccountToken
        return canonical_user(tx.appAccountToken) if tx.appAccountToken else None

    def apply_transaction(store, tx, user, signed, source, owed, state=None, revoked_at=None, reversal=False,
                          grace_expires=None):
        """Files a verified transaction and credits it if owed and not revoked. Returns True if credited."""
        store.record_purchase(tx, user, signed, revoked_at=revoked_at, reversal=reversal)
        credited = False
        if owed and not store.is_revoked(tx.transactionId) and not tx.isUpgraded:
            credited = store.credit(tx, user, source)
        if tx.rawType == AUTO_RENEWABLE and not tx.isUpgraded:
            reported = state is not None
            if state is None:
                ended = tx.expiresDate is not None and tx.expiresDate <= now_ms()
                state = REVOKED if tx.revocationDate else (EXPIRED if ended else ACTIVE)
            store.update_subscription(tx, user, state, signed, grace_expires, reported=reported)
        return credited

    @app.post("/apple/notifications")
    def apple_notification():
        body = request.get_json(silent=True)
        signed_payload = body.get("signedPayload") if isinstance(body, dict) else None
        if not isinstance(signed_payload, str):
            return error(400, "body must be {\"signedPayload\": \"<JWS>\"}")
        if "ack-before-commit" in BUGS:
            # The bug: "answer Apple fast, file it in the background": a crash in the next half second loses what
            # Apple was told is filed, and Apple never sends it again.
            deferred.put(signed_payload)
            return jsonify({"ok": True, "queued": True})
        return file_notification(signed_payload)

    def file_notification(signed_payload):
        """Verifies and files one notification, durably, and answers what Apple should hear."""
        try:
            note = verifier.notification(signed_payload)
        except VerificationException as failure:
            return error(400, f"notification not verified: {failure.status}")
        if "refuse-reversal" in BUGS and note.rawNotificationType == "REFUND_REVERSED":
            # The bug: the reversal's handler throws on every copy, so no attempt of Apple's is ever acknowledged.
            return error(500, "internal error while applying REFUND_REVERSED")
        store = Store(connect(db_path))
        try:
            if store.seen_notification(note.notificationUUID):
                return jsonify({"ok": True, "duplicate": True})
            data = note.data
            if data is None or not data.signedTransactionInfo:
                with write_transaction(store.db):
                    store.record_notification(note)
                return jsonify({"ok": True})
            try:
                tx = verifier.transaction(data.signedTransactionInfo)
                renewal = verifier.renewal(data.signedRenewalInfo) if data.signedRenewalInfo else None
            except VerificationException as failure:
                return error(400, f"nested payload not verified: {failure.status}")
            user = webhook_user(tx)
            if user is None and not tx.appAccountToken:
                # Made without appAccountToken: the account that claimed it owns it (claims.py), else it waits.
                user = claims.owner_or_park(store.db, tx, signed_payload)
                if user is None:
                    return jsonify({"ok": True, "parked": True})
            if purchases_by_pull and note.rawNotificationType == "ONE_TIME_CHARGE" and user is not None:
                # The app's pull grants one-time purchases; this notification confirms one, and grants it (below)
                # only if the app already claimed it while Apple's API could not answer (see pull_failed).
                with write_transaction(store.db):
                    store.confirm(tx.transactionId, user, data.signedTransactionInfo)
                    claimed = store.claimed(tx.transactionId, user)
                    if not claimed:
                        store.record_notification(note)
                if not claimed:
                    return jsonify({"ok": True})
            # Read before the write transaction; a stale answer is harmless because the unique constraints
            # inside it decide (unless racy-dedupe removed them).
            owed = not store.credited(tx.transactionId)
            kind = note.rawNotificationType
            revoking = kind in ("REFUND", "REVOKE")
            with write_transaction(store.db):
                if not store.record_notification(note):
                    return jsonify({"ok": True, "duplicate": True})
                if user is None:
                    log.warning("notification %s: transaction %s has no appAccountToken", note.notificationUUID,
                                tx.transactionId)
                    return jsonify({"ok": True})
                revoked_at = tx.revocationDate or (note.signedDate if revoking else None)
                state = subscription_state(note, renewal) if tx.rawType == AUTO_RENEWABLE else None
                grace = renewal.gracePeriodExpiresDate if renewal is not None and state == GRACE_PERIOD else None
                apply_transaction(store, tx, user, note.signedDate, "webhook", owed, state=state,
                                  revoked_at=revoked_at, reversal=kind == "REFUND_REVERSED", grace_expires=grace)
                if revoking and "refund-by-sku" in BUGS:
                    store.revoke_by_sku(user, tx.productId, revoked_at, note.signedDate)
            return jsonify({"ok": True})
        finally:
            store.db.close()

    deferred = DeferredFiling(app, file_notification)

    @app.post("/api/v1/purchases/verify")
    def verify_purchase():
        if (limited := device_limit.refusal()) is not None:
            return limited
        body = request.get_json(silent=True)
        if not isinstance(body, dict) or not isinstance(body.get("jws"), str):
            return error(400, "body must be {\"jws\": \"<signed transaction>\", \"userId\": \"<uuid>\"}")
        user = canonical_user(body.get("userId"))
        if user is None:
            return error(400, "userId must be a UUID")
        try:
            tx = verifier.transaction(body["jws"])
        except VerificationException as failure:
            return error(400, f"transaction not verified: {failure.status}")
        return file_device_transaction(tx, user)

    def file_device_transaction(tx, user):
        """Files a verified transaction the app brought (signed, or pulled from Apple by its id) for `user`."""
        if tx.appAccountToken and canonical_user(tx.appAccountToken) != user:
            return error(403, "transaction belongs to another user")
        store = Store(connect(db_path))
        try:
            # A refunded copy is still filed (its revocation counts); any other copy of a credited one is a repeat.
            if store.credited(tx.transactionId) and not tx.revocationDate:
                if "stale-expiry" in BUGS and tx.rawType == AUTO_RENEWABLE and (tx.expiresDate or 0) <= now_ms():
                    # The bug: "the app's view refreshes the subscription": a late listener's lapsed period ends
                    # the subscription a newer renewal runs (see update_subscription).
                    with write_transaction(store.db):
                        store.update_subscription(tx, user, EXPIRED, tx.signedDate, reported=False)
                return error(409, "already processed")
            with write_transaction(store.db):
                credited = apply_transaction(store, tx, user, tx.signedDate, "device", owed=True,
                                             revoked_at=tx.revocationDate)
            if credited:
                return jsonify({"ok": True, "granted": True})
            if store.credited(tx.transactionId):
                return error(409, "already processed")
            # Verified, but nothing to grant: refunded, upgraded away, or a period already over.
            return jsonify({"ok": False, "granted": False})
        finally:
            store.db.close()

    claims.register(app, verifier, db_path, file_device_transaction, file_notification)

    @app.post("/api/v1/purchases/pull")
    def pull_purchase():
        body = request.get_json(silent=True)
        if not isinstance(body, dict) or not isinstance(body.get("transactionId"), str):
            return error(400, "body must be {\"transactionId\", \"userId\": \"<uuid>\", \"sku\"}")
        user = canonical_user(body.get("userId"))
        if user is None:
            return error(400, "userId must be a UUID")
        if apple is None:
            return error(501, "no App Store Server API configured (EXAMPLE_API_URL)")
        try:
            answer = apple.get_transaction_info(body["transactionId"])
            tx = verifier.transaction(answer.signedTransactionInfo)
        except APIException as failure:
            return pull_failed(failure, body, user)
        except VerificationException as failure:
            return error(502, f"Apple's answer not verified: {failure.status}")
        return file_device_transaction(tx, user)

    def pull_failed(failure, body, user):
        status = failure.http_status_code
        if "ack-on-rate-limit" in BUGS and status == 429:
            # The bug: "Apple is busy, we'll pick it up later" (nothing ever does), yet the app hears 200 and
            # finishes the transaction.
            return jsonify({"ok": True, "queued": True})
        if "grant-unconfirmed" in BUGS and status in (404, 500, 503) and isinstance(body.get("sku"), str):
            # The bug: "Apple is flaky, don't punish the customer": the app's word for the product is enough.
            store = Store(connect(db_path))
            try:
                with write_transaction(store.db):
                    grant_claimed(store, body["transactionId"], user, body["sku"])
                return jsonify({"ok": True, "granted": True})
            finally:
                store.db.close()
        if status == 404:
            # Not found yet (eventual consistency): the app keeps the transaction unfinished and asks again.
            return error(404, "App Store Server API answered 404")
        # Rate limited or failing: Apple's webhook may already have confirmed this purchase for this user (signed,
        # verified), so grant that. Otherwise remember the claim, so that the confirmation grants it when it comes
        # (one write transaction, so a webhook cannot slip between the look and the claim), and the app asks again.
        store = Store(connect(db_path))
        try:
            with write_transaction(store.db):
                confirmed = store.confirmation(body["transactionId"], user)
                if confirmed is None:
                    store.claim(body["transactionId"], user)
            if confirmed is not None:
                return file_device_transaction(verifier.transaction(confirmed), user)
        finally:
            store.db.close()
        return error(503, f"App Store Server API answered {status}")

    def grant_claimed(store, transaction_id, user, sku):
        kind = CONSUMABLE if sku.startswith("coins") else NON_CONSUMABLE
        store.db.execute(
            "INSERT OR IGNORE INTO purchases (transaction_id, original_transaction_id, user_id, sku, kind, quantity, "
            "signed_date) VALUES (?, ?, ?, ?, ?, 1, ?)",
            (transaction_id, transaction_id, user, sku, kind, now_ms()),
        )
        store.db.execute(
            "INSERT OR IGNORE INTO credits (transaction_id, user_id, sku, amount, source, created_at) "
            "VALUES (?, ?, ?, 1, 'unconfirmed', ?)",
            (transaction_id, user, sku, now_ms()),
        )

    @app.post("/api/v1/purchases/report")
    def report_purchase():
        body = request.get_json(silent=True)
        if not isinstance(body, dict):
            return error(400, "body must be a JSON object")
        user = canonical_user(body.get("userId"))
        sku, result = body.get("sku"), body.get("result")
        if user is None or not isinstance(sku, str) or not sku or result not in ("pending", "cancelled"):
            return error(400, "body must be {\"userId\": \"<uuid>\", \"sku\", \"result\": \"pending\"|\"cancelled\"}")
        store = Store(connect(db_path))
        try:
            with write_transaction(store.db):
                store.record_report(user, sku, result)
                if "pending-unlock" in BUGS:
                    unlock_while_pending(store, user, sku, result)
            return jsonify({"ok": True})
        finally:
            store.db.close()

    def unlock_while_pending(store, user, sku, result):
        # The bug: "don't make the kid wait for the parent": a pending purchase unlocks at once, under a
        # placeholder transaction, and only a cancelled report takes it back. A declined Ask to Buy sends none.
        placeholder = f"pending:{user}:{sku}"
        if result == "pending":
            store.db.execute(
                "INSERT OR IGNORE INTO purchases (transaction_id, original_transaction_id, user_id, sku, kind, "
                "quantity, signed_date) VALUES (?, ?, ?, ?, ?, 1, ?)",
                (placeholder, placeholder, user, sku, NON_CONSUMABLE, now_ms()),
            )
            store.db.execute(
                "INSERT OR IGNORE INTO credits (transaction_id, user_id, sku, amount, source, created_at) "
                "VALUES (?, ?, ?, 1, 'pending', ?)",
                (placeholder, user, sku, now_ms()),
            )
        else:
            store.db.execute("DELETE FROM credits WHERE transaction_id = ?", (placeholder,))

    # The receipt endpoint: the app's receipt, checked with verifyReceipt (receipt.py), grants what Apple lists.
    receipts_routed = receipt.route_apple_hosts(os.environ.get("EXAMPLE_APPLE_HOSTS"))
    bundle_id = os.environ.get("EXAMPLE_BUNDLE_ID", "com.example.paystorm")
    environment = Environment(os.environ.get("EXAMPLE_ENVIRONMENT", "Sandbox"))

    @app.post("/api/v1/receipts/verify")
    def verify_app_receipt():
        body = request.get_json(silent=True)
        if not isinstance(body, dict) or not isinstance(body.get("receipt"), str) or not body["receipt"]:
            return error(400, "body must be {\"receipt\": \"<base64 app receipt>\", \"userId\": \"<uuid>\"}")
        user = canonical_user(body.get("userId"))
        if user is None:
            return error(400, "userId must be a UUID")
        if not receipts_routed:
            return error(501, "no route to verifyReceipt configured (EXAMPLE_APPLE_HOSTS)")
        try:
            answer = receipt.verify(body["receipt"], os.environ.get("EXAMPLE_SHARED_SECRET"))
        except receipt.Unavailable as failure:
            # The app keeps the receipt and posts it again at its next launch.
            return error(503, f"verifyReceipt unavailable: {failure}")
        if answer["status"] != 0:
            return error(400, f"receipt not verified: status {answer['status']}")
        if (answer.get("receipt") or {}).get("bundle_id") != bundle_id:
            return error(400, "receipt of another app")
        if answer.get("environment") != environment.value:
            return error(400, f"receipt of another environment: {answer.get('environment')}")
        return file_receipt(receipt.transactions(answer, RECEIPT_PRODUCTS, AUTO_RENEWABLE), user)

    def file_receipt(transactions, user):
        """Files every transaction of a verified receipt for `user` (those of another user are left alone) and
        credits what is owed: a consumable once per transaction, an unlock, a subscription period; a cancelled
        transaction is filed revoked and credits nothing. A transaction already filed as the receipt shows it is
        skipped: a receipt lists the account's whole history, every time."""
        store = Store(connect(db_path))
        try:
            known = filed_purchases(store, [tx.transactionId for tx in transactions])
            credited = mine = 0
            news = []
            for tx in transactions:
                row = known.get(tx.transactionId)
                token_user = canonical_user(tx.appAccountToken) if tx.appAccountToken else user
                if token_user != user or (row is not None and row["user_id"] != user):
                    continue
                mine += 1
                if "receipt-grants-cancelled" in BUGS:
                    # The bug: "the receipt is the truth": its cancellation_date is never read.
                    tx.revocationDate = None
                if row is None or (row["revoked_at"] is not None) != (tx.revocationDate is not None):
                    news.append(tx)
            with write_transaction(store.db):
                for tx in news:
                    owner = store.db.execute(
                        "SELECT user_id FROM purchases WHERE transaction_id IN (?, ?) LIMIT 1",
                        (tx.transactionId, tx.originalTransactionId),
                    ).fetchone()
                    if owner is not None and owner["user_id"] != user:
                        continue
                    if "receipt-grants-cancelled" in BUGS:
                        grant_cancelled(store, tx)
                    credited += apply_transaction(store, tx, user, tx.signedDate, "receipt", owed=True,
                                                  revoked_at=tx.revocationDate)
            if transactions and not mine:
                return error(403, "the receipt's purchases belong to another user")
            return jsonify({"ok": True, "granted": credited > 0})
        finally:
            store.db.close()

    def filed_purchases(store, ids):
        """The purchases rows (user and revocation) of the transaction ids already filed, by id."""
        rows = {}
        for at in range(0, len(ids), 500):
            chunk = ids[at:at + 500]
            rows.update(
                (row["transaction_id"], row)
                for row in store.db.execute(
                    "SELECT transaction_id, user_id, revoked_at FROM purchases WHERE transaction_id IN "
                    f"({', '.join('?' * len(chunk))})",
                    chunk,
                )
            )
        return rows

    def grant_cancelled(store, tx):
        # The bug: "the receipt is the truth": whatever it lists is owned, so a transaction a refund revoked is owned
        # again at the next receipt the app sends.
        store.db.execute("UPDATE purchases SET revoked_at = NULL WHERE transaction_id = ?", (tx.transactionId,))

    @app.get("/api/v1/users/<user_id>/wallet")
    def wallet(user_id):
        if (limited := wallet_limit.refusal()) is not None:
            return limited
        user = canonical_user(user_id)
        if user is None:
            return error(400, "user id must be a UUID")
        store = Store(connect(db_path))
        try:
            return jsonify(store.wallet(user, now_ms(), with_credits=request.args.get("credits") == "1"))
        finally:
            store.db.close()

    @app.get("/healthz")
    def health():
        return jsonify({"ok": True, "bugs": sorted(BUGS)})

    return app
