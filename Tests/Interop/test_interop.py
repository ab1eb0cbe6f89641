"""PayStorm-minted signed data checked by Apple's own verifier (app-store-server-library, Python).

Every notificationType/subtype of the matrix, with its nested transaction, renewal info or app
transaction, must pass `SignedDataVerifier` trusting PayStorm's root (Sandbox, strict X.509, online
checks off); every forgery must be rejected with the status reference §8 predicts; PayStorm's own Swift
verifier (`paystorm verify`) must give the same verdict as Apple's in every case; and once with online
checks on against `paystorm pki ocsp`; and what a short `paystorm run` sends to a capturing loopback endpoint
(the simulation's own payloads: every notification and device transaction, with a FAMILY_SHARED subscription
and a RENEWAL_EXTENSION/SUMMARY among them) must pass too. Apple's ReceiptUtility must read the transaction ID of a
minted app receipt. Every verdict goes into matrix.md (or $INTEROP_MATRIX), which holds
nothing that changes from run to run (no time), so a re-run with the same verdicts leaves it byte for
byte the same; a filtered or stopped run (-k, -m, --deselect, -x) leaves it alone, as its rows would be partial.

Run through run.sh, which makes the virtualenv and finds the paystorm binary.
"""

import base64
import http.server
import importlib.metadata
import json
import os
import pathlib
import socket
import subprocess
import threading

import pytest
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.receipt_utility import ReceiptUtility
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException

PAYSTORM = os.environ.get("PAYSTORM") or str(pathlib.Path(__file__).resolve().parents[2] / ".build/debug/paystorm")
MATRIX = os.environ.get("INTEROP_MATRIX") or str(pathlib.Path(__file__).resolve().parent / "matrix.md")
BUNDLE = "com.example.paystorm"
APP_APPLE_ID = 1234567890

VF = "VERIFICATION_FAILURE"
IAI = "INVALID_APP_IDENTIFIER"
ICL = "INVALID_CHAIN_LENGTH"
IC = "INVALID_CERTIFICATE"
IE = "INVALID_ENVIRONMENT"
OK = "OK"

# What Apple's verifier answers for each forgery (reference §2 and §8), per object:
# (notification, bare transaction, bare renewal info, nested transaction of the forged notification).
# A renewal info has no bundleId, so wrong-bundle passes its check; forged-inner-transaction leaves the
# outer payload genuine and only the nested transaction is signed under another root.
EXPECTED = {
    "bad-signature": (VF, VF, VF, OK),
    "alg-es384": (VF, VF, VF, OK),
    "alg-none": (VF, VF, VF, OK),
    "chain-2": (ICL, ICL, ICL, OK),
    "chain-4": (ICL, ICL, ICL, OK),
    "base64url-x5c": (IC, IC, IC, OK),
    "missing-leaf-oid": (VF, VF, VF, OK),
    "missing-intermediate-oid": (VF, VF, VF, OK),
    "critical-oids": (VF, VF, VF, OK),
    "untrusted-root": (VF, VF, VF, OK),
    "wrong-bundle": (IAI, IAI, OK, IAI),
    "wrong-environment": (IE, IE, IE, IE),
    "signed-date-before-chain": (VF, VF, VF, VF),
    "dates-in-seconds": (VF, VF, VF, VF),
    "tampered-payload": (VF, VF, VF, OK),
    "forged-inner-transaction": (OK, None, None, VF),
}

ROWS = []


def paystorm(*args, stdin=None):
    return subprocess.run(
        [PAYSTORM, *map(str, args)], input=stdin, capture_output=True, text=True, timeout=60
    )


def mint(pki, *args):
    result = paystorm("mint", "--pki", pki, *args)
    assert result.returncode == 0, f"paystorm mint {' '.join(args)}: {result.stderr.strip()}"
    return result.stdout.strip()


def matrix_kinds():
    """The TYPE[/SUBTYPE] rows `paystorm mint --help` lists: the matrix PayStorm claims to mint."""
    text = paystorm("mint", "--help").stdout
    section = text.split("Notification types and subtypes")[1].split("Forgeries")[0]
    return [line.strip() for line in section.splitlines()[1:] if line.startswith("  ") and line.strip()]


KINDS = matrix_kinds()
# Kinds whose product may be any type: also minted as a subscription so nested renewal info is covered.
TRANSACTION_KINDS = ["REFUND", "REFUND_DECLINED", "REFUND_REVERSED", "CONSUMPTION_REQUEST", "REVOKE"]


def payload(jws):
    segment = jws.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))


def verifier(pki, environment=Environment.SANDBOX, app_apple_id=APP_APPLE_ID, online=False, bundle=BUNDLE):
    root = pathlib.Path(pki, "root.der").read_bytes()
    # Strict X.509 stays on: that is the library's default, as in production.
    return SignedDataVerifier([root], online, environment, bundle, app_apple_id)


def apple_verdict(apple, kind, jws):
    method = {
        "notification": apple.verify_and_decode_notification,
        "transaction": apple.verify_and_decode_signed_transaction,
        "renewal-info": apple.verify_and_decode_renewal_info,
        "app-transaction": apple.verify_and_decode_app_transaction,
    }[kind]
    try:
        method(jws)
        return OK
    except VerificationException as error:
        return error.status.name
    except Exception as error:  # a payload the library cannot even structure: not a verdict
        return f"EXCEPTION({type(error).__name__})"


def swift_verdict(pki, kind, jws, environment="Sandbox", app_apple_id=APP_APPLE_ID, online=False, bundle=BUNDLE):
    args = ["verify", "--trust", pathlib.Path(pki, "root.der"), "--bundle-id", bundle, "--environment", environment]
    args += ["--kind", kind]
    if app_apple_id is not None:
        args += ["--app-apple-id", app_apple_id]
    if online:
        args.append("--online")
    result = paystorm(*args, stdin=jws)
    verdict = result.stdout.strip()
    assert result.returncode == (0 if verdict == OK else 65), f"paystorm verify: {result.stderr.strip()}"
    return verdict


def check(case, kind, jws, expected, pki, apple, label=None, **swift_options):
    """Verifies one object with Apple's verifier and PayStorm's; both must answer `expected`."""
    got_apple = apple_verdict(apple, kind, jws)
    got_swift = swift_verdict(pki, kind, jws, **swift_options)
    ROWS.append((case, label or kind, expected, got_apple, got_swift))
    assert got_apple == expected, f"{case} {kind}: Apple says {got_apple}, expected {expected}"
    assert got_swift == got_apple, f"{case} {kind}: PayStorm says {got_swift}, Apple says {got_apple}"


def check_nested(case, body_payload, pki, apple, expected_transaction=OK, expected_renewal=OK, **options):
    """Verifies the JWS nested in a notification payload, each with its own method, as a backend must."""
    data = body_payload.get("data") or {}
    if "signedTransactionInfo" in data:
        check(case, "transaction", data["signedTransactionInfo"], expected_transaction, pki, apple, "nested transaction", **options)
    if "signedRenewalInfo" in data:
        check(case, "renewal-info", data["signedRenewalInfo"], expected_renewal, pki, apple, "nested renewal-info", **options)
    app_data = body_payload.get("appData") or {}
    if "signedAppTransactionInfo" in app_data:
        check(case, "app-transaction", app_data["signedAppTransactionInfo"], expected_transaction, pki, apple, "nested app-transaction", **options)


def runs_whole_suite(session):
    """Whether this run covers every case: only then is the matrix complete enough to be written."""
    options = session.config.option
    whole_file = any("::" not in arg for arg in session.config.args)  # run.sh always passes the file
    filtered = options.keyword or options.markexpr or options.deselect or not whole_file
    return not filtered and not session.shouldstop  # shouldstop: -x or --maxfail ended the run early


@pytest.fixture(scope="session", autouse=True)
def write_matrix(request):
    yield
    if not runs_whole_suite(request.session):
        return
    version = importlib.metadata.version("app-store-server-library")
    paystorm_version = paystorm("--version").stdout.strip()
    # No date or time here: the file is committed, and a re-run must not change it unless a verdict does.
    lines = [
        "# Interop matrix: PayStorm-minted signed data × Apple's SignedDataVerifier",
        "",
        f"Generated by `Tests/Interop/run.sh`: {paystorm_version}, app-store-server-library {version}",
        "(Python), strict X.509 on, Sandbox, online checks off unless the case says `online`.",
        "Apple = `SignedDataVerifier`; PayStorm = `paystorm verify` (the Swift verifier).",
        "",
        "| case | object | expected | Apple | PayStorm | agree |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for case, kind, expected, got_apple, got_swift in ROWS:
        agree = "yes" if got_apple == expected and got_swift == got_apple else "**NO**"
        lines.append(f"| {case} | {kind} | {expected} | {got_apple} | {got_swift} | {agree} |")
    agreeing = sum(1 for _, _, e, a, s in ROWS if a == e and s == a)
    lines += ["", f"{agreeing} of {len(ROWS)} verdicts as expected and in agreement.", ""]
    pathlib.Path(MATRIX).write_text("\n".join(lines))


@pytest.fixture(scope="session")
def pki(tmp_path_factory):
    directory = tmp_path_factory.mktemp("pki") / "pki"
    result = paystorm("pki", "init", directory)
    assert result.returncode == 0, f"paystorm pki init: {result.stderr.strip()}"
    return str(directory)


@pytest.fixture(scope="session")
def apple(pki):
    return verifier(pki)


def test_help_lists_the_whole_matrix():
    assert len(KINDS) == 40, KINDS
    assert "SUBSCRIBED/INITIAL_BUY" in KINDS and "RESCIND_CONSENT" in KINDS


@pytest.mark.parametrize("kind", KINDS)
def test_genuine_notification_passes(kind, pki, apple):
    body = json.loads(mint(pki, "--type", kind))
    signed = body["signedPayload"]
    check(kind, "notification", signed, OK, pki, apple)
    check_nested(kind, payload(signed), pki, apple)


@pytest.mark.parametrize("kind", TRANSACTION_KINDS)
def test_subscription_refund_kinds_carry_renewal_info(kind, pki, apple):
    signed = mint(pki, "--type", kind, "--product-type", "auto-renewable", "--jws")
    decoded = payload(signed)
    assert "signedRenewalInfo" in decoded["data"] and "status" in decoded["data"]
    check(f"{kind} (subscription)", "notification", signed, OK, pki, apple)
    check_nested(f"{kind} (subscription)", decoded, pki, apple)


@pytest.mark.parametrize("product_type", ["Auto-Renewable Subscription", "Non-Consumable", "Consumable", "Non-Renewing Subscription"])
def test_bare_transaction_passes(product_type, pki, apple):
    jws = mint(pki, "--transaction", "--product-type", product_type)
    assert payload(jws)["type"] == product_type
    check(f"bare {product_type}", "transaction", jws, OK, pki, apple)


def test_bare_renewal_info_passes(pki, apple):
    check("bare renewal info", "renewal-info", mint(pki, "--renewal-info"), OK, pki, apple)


def test_production_checks_the_app_apple_id(pki):
    signed = mint(pki, "--type", "DID_RENEW", "--environment", "Production", "--app-apple-id", "777", "--jws")
    production = verifier(pki, Environment.PRODUCTION, 777)
    check("DID_RENEW Production", "notification", signed, OK, pki, production, environment="Production", app_apple_id=777)
    check_nested("DID_RENEW Production", payload(signed), pki, production, environment="Production", app_apple_id=777)
    other = verifier(pki, Environment.PRODUCTION, 778)
    check("DID_RENEW Production, other appAppleId", "notification", signed, IAI, pki, other, environment="Production", app_apple_id=778)
    sandbox = verifier(pki)
    check("DID_RENEW Production, Sandbox verifier", "notification", signed, IE, pki, sandbox)


def test_receipt_utility_reads_the_transaction_id_of_an_app_receipt(pki):
    receipt = paystorm("mint", "receipt", "--pki", pki, "--purchase", "pro.monthly:2000000000000777")
    assert receipt.returncode == 0, f"paystorm mint receipt: {receipt.stderr.strip()}"
    assert ReceiptUtility().extract_transaction_id_from_app_receipt(receipt.stdout.strip()) == "2000000000000777"
    empty = paystorm("mint", "receipt", "--pki", pki)
    assert ReceiptUtility().extract_transaction_id_from_app_receipt(empty.stdout.strip()) is None


@pytest.mark.parametrize("forgery", list(EXPECTED))
def test_receipt_utility_reads_the_transaction_id_of_a_forged_app_receipt(forgery, pki):
    # ReceiptUtility validates nothing: every forged receipt is still PKCS#7 it walks to the purchase.
    receipt = paystorm("mint", "receipt", "--pki", pki, "--purchase", "pro.monthly:2000000000000778", "--forge", forgery)
    assert receipt.returncode == 0, f"paystorm mint receipt --forge {forgery}: {receipt.stderr.strip()}"
    assert ReceiptUtility().extract_transaction_id_from_app_receipt(receipt.stdout.strip()) == "2000000000000778"


def test_account_token_survives(pki, apple):
    token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
    jws = mint(pki, "--transaction", "--account-token", token)
    assert payload(jws)["appAccountToken"] == token
    check("bare transaction with appAccountToken", "transaction", jws, OK, pki, apple)


@pytest.mark.parametrize("forgery", list(EXPECTED))
def test_forged_notification_is_rejected(forgery, pki, apple):
    outer, _, _, inner = EXPECTED[forgery]
    signed = mint(pki, "--type", "SUBSCRIBED/INITIAL_BUY", "--forge", forgery, "--jws")
    case = f"forge {forgery}"
    check(case, "notification", signed, outer, pki, apple)
    inner_renewal = OK if forgery in ("wrong-bundle", "forged-inner-transaction") else inner
    check_nested(case, payload(signed), pki, apple, expected_transaction=inner, expected_renewal=inner_renewal)


@pytest.mark.parametrize("forgery", [name for name in EXPECTED if EXPECTED[name][1] is not None])
def test_forged_transaction_and_renewal_info_are_rejected(forgery, pki, apple):
    _, transaction, renewal, _ = EXPECTED[forgery]
    check(f"forge {forgery}", "transaction", mint(pki, "--transaction", "--forge", forgery), transaction, pki, apple, "bare transaction")
    check(f"forge {forgery}", "renewal-info", mint(pki, "--renewal-info", "--forge", forgery), renewal, pki, apple, "bare renewal-info")


def test_forgery_list_matches_paystorm():
    # The list ends at the first blank line (the exit codes and the receipt options follow).
    text = paystorm("mint", "--help").stdout.split("Forgeries")[1].split("\n\n")[0]
    listed = [line.split()[0] for line in text.splitlines()[1:] if line.startswith("  ")]
    assert listed == list(EXPECTED)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_online_checks_pass_against_paystorm_ocsp(tmp_path):
    os.environ["NO_PROXY"] = "127.0.0.1,localhost"  # requests must not send loopback OCSP to a proxy
    port = free_port()
    directory = tmp_path / "pki-ocsp"
    init = paystorm("pki", "init", directory, "--ocsp-url", f"http://127.0.0.1:{port}/")
    if init.returncode != 0:
        pytest.xfail(f"paystorm pki init --ocsp-url is not available: {init.stderr.strip()}")
    responder = subprocess.Popen(
        [PAYSTORM, "pki", "ocsp", "--pki", str(directory), "--listen", f"127.0.0.1:{port}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        address = responder.stdout.readline().strip()
        if not address:
            pytest.xfail(f"paystorm pki ocsp did not start: {responder.stderr.read().strip()}")
        assert address.endswith(f":{port}"), address
        online = verifier(str(directory), online=True)
        signed = mint(str(directory), "--type", "SUBSCRIBED/INITIAL_BUY", "--jws")
        check("SUBSCRIBED/INITIAL_BUY online", "notification", signed, OK, str(directory), online, online=True)
        check_nested("SUBSCRIBED/INITIAL_BUY online", payload(signed), str(directory), online, online=True)
    finally:
        responder.terminate()
        try:
            responder.wait(timeout=10)
        except subprocess.TimeoutExpired:
            responder.kill()
            responder.wait()


class Capture(http.server.BaseHTTPRequestHandler):
    """A webhook and device endpoint on loopback that keeps every body and answers 200."""

    bodies = []

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        Capture.bodies.append((self.path, json.loads(self.rfile.read(length) or b"{}")))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


# A run whose world shares every family-shareable subscription and makes mass renewal extensions: 15 s of
# deliveries, each request bounded by the run's 5 s timeout.
RUN_PROFILE = {
    "name": "interop-run",
    "seed": 5,
    "target": {"webhookURL": "URL/notifications", "deviceURL": "URL/transactions", "bundleId": BUNDLE,
               "environment": "Sandbox", "requestTimeoutSeconds": 5},
    "catalog": {
        "groups": [{"id": "g", "billingRetrySeconds": 4}],
        "products": [{"id": "gold", "type": "autoRenewable", "group": "g", "level": 1, "priceMilli": 9990,
                      "periodSeconds": 3, "familyShareable": True}],
    },
    "population": {"accounts": 10, "devicesPerAccount": 1, "familySharingFraction": 1},
    "actionMix": {"subscribe": 3, "refund": 1, "renewalExtension": 3},
    "timeCompression": {"secondsPerMonth": 3},
    "schedule": [{"kind": "constant", "rate": 4, "seconds": 15}],
    "settleSeconds": 1,
}


@pytest.fixture(scope="module")
def run_payloads(pki, tmp_path_factory):
    """The signed notifications and device transactions a `paystorm run` sent to a capturing endpoint."""
    Capture.bodies = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Capture)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        directory = tmp_path_factory.mktemp("run")
        profile = json.loads(json.dumps(RUN_PROFILE).replace("URL/", url + "/"))
        (directory / "run.json5").write_text(json.dumps(profile))
        result = subprocess.run(
            [PAYSTORM, "run", directory / "run.json5", "--pki", pki, "--quiet", "--no-history", "--reports",
             directory / "reports"],
            capture_output=True, text=True, timeout=120,
        )
        # No probe: the invariants are unchecked, so the verdict is unknown (2), never a failure.
        assert result.returncode in (0, 2), f"paystorm run: exit {result.returncode}\n{result.stdout}{result.stderr}"
    finally:
        server.shutdown()
        thread.join(timeout=10)
    return list(Capture.bodies)


def run_notifications(bodies):
    return [body["signedPayload"] for path, body in bodies if path == "/notifications"]


def test_a_run_sends_nothing_apple_rejects(run_payloads, apple):
    notes = run_notifications(run_payloads)
    devices = [body["signedTransaction"] for path, body in run_payloads if path == "/transactions"]
    assert notes and devices
    assert {apple_verdict(apple, "notification", jws) for jws in notes} == {OK}
    assert {apple_verdict(apple, "transaction", jws) for jws in devices} == {OK}


def test_a_run_family_shared_subscription_passes(run_payloads, pki, apple):
    shared = []
    for jws in run_notifications(run_payloads):
        decoded = payload(jws)
        inner = decoded.get("data", {}).get("signedTransactionInfo")
        if inner and payload(inner).get("inAppOwnershipType") == "FAMILY_SHARED" and decoded["notificationType"] == "SUBSCRIBED":
            shared.append((jws, decoded, inner))
    assert shared, "the run shared no subscription"
    jws, decoded, inner = shared[0]
    transaction = payload(inner)
    assert transaction["type"] == "Auto-Renewable Subscription" and transaction["price"] == 0
    assert payload(decoded["data"]["signedRenewalInfo"])["originalTransactionId"] == transaction["originalTransactionId"]
    check("run: SUBSCRIBED (FAMILY_SHARED subscription)", "notification", jws, OK, pki, apple)
    check("run: FAMILY_SHARED subscription transaction", "transaction", inner, OK, pki, apple)


def test_a_run_mass_extension_summary_passes(run_payloads, pki, apple):
    summaries = [jws for jws in run_notifications(run_payloads) if payload(jws).get("subtype") == "SUMMARY"]
    assert summaries, "the run sent no RENEWAL_EXTENSION/SUMMARY"
    decoded = payload(summaries[0])
    assert decoded["notificationType"] == "RENEWAL_EXTENSION" and "data" not in decoded
    summary = decoded["summary"]
    assert summary["bundleId"] == BUNDLE and summary["requestIdentifier"]
    assert summary["succeededCount"] + summary["failedCount"] >= 1
    check("run: RENEWAL_EXTENSION/SUMMARY", "notification", summaries[0], OK, pki, apple)
