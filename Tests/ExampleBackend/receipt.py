"""The example backend's legacy receipt check: Apple's verifyReceipt, called as backends built on app receipts call it.

The app posts its base64 app receipt; the backend posts `{"receipt-data", "password"?, "exclude-old-transactions"}`
to https://buy.itunes.apple.com/verifyReceipt and, when Apple answers 21007 (a sandbox receipt), to
https://sandbox.itunes.apple.com/verifyReceipt, then grants from the answer's transactions.

The URLs are Apple's and stay in the code. A test points them at PayStorm's App Store emulation the way it points any
program that hard-codes a host at a test server, by trust and by route:

- trust: `REQUESTS_CA_BUNDLE` names the test root (`PKI/root.pem`), which `requests` reads instead of its bundle;
- route: `EXAMPLE_APPLE_HOSTS=127.0.0.1:PORT` resolves Apple's two receipt hosts (port 443) to that address inside
  this process, as curl's `--connect-to` or a hosts entry with a port would; TLS still checks the certificate
  against Apple's host name. `EXAMPLE_APPLE_HOSTS=system` resolves them as the machine does (a hosts entry in a
  container and the emulation listening on 127.0.0.1:443). Unset, the endpoint answers 501: the example never
  calls Apple.

`EXAMPLE_SHARED_SECRET`, when set, goes as `password` (the app-specific shared secret).
"""

import socket
import threading
import types

import requests

PRODUCTION_URL = "https://buy.itunes.apple.com/verifyReceipt"
SANDBOX_URL = "https://sandbox.itunes.apple.com/verifyReceipt"
APPLE_RECEIPT_HOSTS = frozenset(("buy.itunes.apple.com", "sandbox.itunes.apple.com"))
SANDBOX_RECEIPT = 21007
# Apple's statuses that say "try again later": 21005 (server unavailable), 21009 (internal data access error) and
# 21100-21199 (internal data access errors); an answer may also say so with `"is-retryable": true`.
RETRYABLE = frozenset({21005, 21009} | set(range(21100, 21200)))

_ORIGINAL_GETADDRINFO = socket.getaddrinfo
_route_lock = threading.Lock()
_routed = None
# One HTTP session per thread: connections to Apple are kept alive between receipts, as a busy backend keeps them
# (a TLS handshake per call doubles its time).
_sessions = threading.local()


class Unavailable(Exception):
    """verifyReceipt could not answer (a connection error, a timeout, a non-200, a retryable status): the app keeps
    its receipt and posts it again later."""


def route_apple_hosts(setting):
    """Resolves Apple's receipt hosts at port 443 to `setting` ("HOST:PORT") in this process; "system" leaves the
    resolver as it is. Returns False when `setting` is empty: nothing may be sent."""
    global _routed
    if not setting:
        return False
    if setting == "system":
        return True
    host, _, port = setting.rpartition(":")
    with _route_lock:
        if _routed == setting:
            return True
        resolve = _ORIGINAL_GETADDRINFO

        def getaddrinfo(name, service, *args, **kwargs):
            if isinstance(name, str) and name.lower().rstrip(".") in APPLE_RECEIPT_HOSTS and str(service) == "443":
                return resolve(host, int(port), *args, **kwargs)
            return resolve(name, service, *args, **kwargs)

        socket.getaddrinfo = getaddrinfo
        _routed = setting
    return True


def _session():
    if getattr(_sessions, "session", None) is None:
        _sessions.session = requests.Session()
    return _sessions.session


def _post(url, body, timeout):
    try:
        response = _session().post(url, json=body, timeout=timeout)
    except requests.RequestException as failure:
        raise Unavailable(f"{url}: {type(failure).__name__}") from failure
    if response.status_code != 200:
        raise Unavailable(f"{url}: HTTP {response.status_code}")
    try:
        answer = response.json()
    except ValueError as failure:
        raise Unavailable(f"{url}: an answer that is no JSON") from failure
    if not isinstance(answer, dict) or not isinstance(answer.get("status"), int):
        raise Unavailable(f"{url}: an answer without a status")
    if answer["status"] in RETRYABLE or answer.get("is-retryable") is True:
        raise Unavailable(f"{url}: status {answer['status']} (retryable)")
    return answer


def verify(receipt_data, shared_secret=None, retry_sandbox=True, timeout=5):
    """Apple's answer for a receipt: production first, then sandbox on 21007. Raises `Unavailable`."""
    body = {"receipt-data": receipt_data, "exclude-old-transactions": True}
    if shared_secret:
        body["password"] = shared_secret
    answer = _post(PRODUCTION_URL, body, timeout)
    if answer["status"] == SANDBOX_RECEIPT and retry_sandbox:
        answer = _post(SANDBOX_URL, body, timeout)
    return answer


def _ms(value):
    return int(value) if isinstance(value, str) and value.isdigit() else None


def transactions(answer, product_types, auto_renewable):
    """The answer's transactions, as objects with the fields of Apple's decoded transaction that the ledger reads
    (`transactionId`, `productId`, `rawType`, `expiresDate`, `revocationDate`, ...). `latest_receipt_info` is the
    App Store's current view and wins over the receipt's own `in_app` for the same transaction. A product the app's
    catalog (`product_types`) does not know is an auto-renewable subscription if it has an expiry, else skipped."""
    items = {}
    receipt = answer.get("receipt") if isinstance(answer.get("receipt"), dict) else {}
    for source in (receipt.get("in_app"), answer.get("latest_receipt_info")):
        for item in source if isinstance(source, list) else []:
            if isinstance(item, dict) and isinstance(item.get("transaction_id"), str):
                items[item["transaction_id"]] = item
    found = []
    for item in items.values():
        expires = _ms(item.get("expires_date_ms"))
        kind = product_types.get(item.get("product_id")) or (auto_renewable if expires is not None else None)
        purchased = _ms(item.get("purchase_date_ms"))
        if kind is None or purchased is None:
            continue
        revoked = _ms(item.get("cancellation_date_ms"))
        found.append(types.SimpleNamespace(
            transactionId=item["transaction_id"],
            originalTransactionId=item.get("original_transaction_id") or item["transaction_id"],
            productId=item.get("product_id"),
            rawType=kind,
            quantity=int(item["quantity"]) if str(item.get("quantity", "")).isdigit() else 1,
            expiresDate=expires,
            isUpgraded=item.get("is_upgraded") == "true",
            revocationDate=revoked,
            # A receipt carries no signed date: its view of a transaction is as old as the purchase (or its
            # cancellation), so it never outranks a notification signed later.
            signedDate=revoked or purchased,
            appAccountToken=item.get("app_account_token") or None,
        ))
    return found
