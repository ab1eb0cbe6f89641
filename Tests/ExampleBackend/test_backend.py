"""The example backend on its own, without PayStorm's run: each endpoint, and each bug's behaviour, shown directly.

Every test starts the real server (start.sh: gunicorn daemon, several workers) on a free loopback port with a
fresh SQLite file, posts JWS minted by `paystorm mint` (JSON bodies with Content-Type: application/json), and
reads the wallet. Run through run.sh --standalone, which makes the venv and finds the paystorm binary.
"""

import concurrent.futures
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

import pytest

HERE = pathlib.Path(__file__).resolve().parent
PAYSTORM = os.environ.get("PAYSTORM") or str(HERE.parents[1] / ".build/debug/paystorm")
USER = "6f9619ff-8b86-d011-b42d-00c04fc964ff"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def pki(tmp_path_factory):
    directory = tmp_path_factory.mktemp("pki") / "pki"
    subprocess.run([PAYSTORM, "pki", "init", str(directory)], check=True, capture_output=True, timeout=60)
    return directory


class Backend:
    def __init__(self, pki, directory, bugs):
        self.pki = pki
        directory.mkdir(parents=True)
        self.db = directory / "backend.db"
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        subprocess.run(
            [HERE / "start.sh", str(self.port), str(self.db), str(pki / "root.der"), bugs],
            check=True, timeout=60,
        )

    def stop(self):
        subprocess.run([HERE / "kill.sh", str(self.db)], check=True, timeout=30)

    def restart(self, bugs):
        """A crash and a restart: SIGKILL, then start.sh again on the same port and database."""
        self.stop()
        subprocess.run(
            [HERE / "start.sh", str(self.port), str(self.db), str(self.pki / "root.der"), bugs],
            check=True, timeout=60,
        )

    def request(self, method, path, body=None):
        data = None if body is None else (body if isinstance(body, str) else json.dumps(body)).encode()
        headers = {"Content-Type": "application/json"} if data is not None else {}
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=10) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def notify(self, body):
        return self.request("POST", "/apple/notifications", body)

    def verify(self, jws, user=USER):
        return self.request("POST", "/api/v1/purchases/verify", {"jws": jws, "userId": user})

    def report(self, sku, result, user=USER):
        return self.request("POST", "/api/v1/purchases/report", {"userId": user, "sku": sku, "result": result})

    def wallet(self, user=USER):
        status, body = self.request("GET", f"/api/v1/users/{user}/wallet")
        assert status == 200, body
        return body

    def mint(self, *args, product="coins.100", kind="consumable", token=USER.upper(), signed=None):
        command = [PAYSTORM, "mint", "--pki", str(self.pki), "--product", product, "--product-type", kind]
        command += ["--account-token", token, *map(str, args)]
        if signed is not None:
            command += ["--signed-date", str(signed)]
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()


@pytest.fixture
def start(pki, tmp_path):
    started = []

    def run(bugs=""):
        backend = Backend(pki, tmp_path / f"b{len(started)}", bugs)
        started.append(backend)
        return backend

    yield run
    for backend in started:
        backend.stop()


def now_ms():
    return int(time.time() * 1000)


# --- the correct backend ------------------------------------------------------------------------------------


def test_webhook_credits_a_consumable_once(start):
    backend = start()
    body = backend.mint("--type", "ONE_TIME_CHARGE")
    assert backend.notify(body) == (200, {"ok": True})
    assert backend.notify(body) == (200, {"ok": True, "duplicate": True})
    assert backend.wallet() == {"owned": [], "subscriptions": [], "coins": {"coins.100": 1}}


def test_device_delivery_answers_409_when_already_processed(start):
    backend = start()
    jws = backend.mint("--transaction", "--transaction-id", "7001", product="pro.unlock", kind="non-consumable")
    assert backend.verify(jws) == (200, {"ok": True, "granted": True})
    assert backend.verify(jws)[0] == 409
    webhook = backend.mint("--type", "ONE_TIME_CHARGE", "--transaction-id", "7001", product="pro.unlock",
                           kind="non-consumable")
    assert backend.notify(webhook)[0] == 200
    assert backend.wallet()["owned"] == ["pro.unlock"]


def test_device_delivery_of_a_refunded_transaction_grants_nothing(start):
    backend = start()
    jws = backend.mint("--transaction", "--type", "REFUND", product="pro.unlock", kind="non-consumable")
    assert backend.verify(jws) == (200, {"ok": False, "granted": False})
    assert backend.wallet()["owned"] == []


def test_forged_and_malformed_input_is_rejected(start):
    backend = start()
    forged = backend.mint("--transaction", "--forge", "bad-signature", product="pro.unlock", kind="non-consumable")
    assert backend.verify(forged)[0] == 400
    assert backend.notify(backend.mint("--type", "ONE_TIME_CHARGE", "--forge", "untrusted-root"))[0] == 400
    assert backend.notify(backend.mint("--type", "ONE_TIME_CHARGE", "--forge", "wrong-bundle"))[0] == 400
    assert backend.verify(backend.mint("--transaction"), user="not-a-uuid")[0] == 400
    assert backend.verify(backend.mint("--transaction"), user=str(uuid.uuid4()))[0] == 403
    assert backend.request("POST", "/apple/notifications", "[]")[0] == 400
    assert backend.report("pro.unlock", "success")[0] == 400
    assert backend.wallet() == {"owned": [], "subscriptions": [], "coins": {}}


def test_pending_report_is_recorded_but_unlocks_nothing(start):
    backend = start()
    assert backend.report("pro.unlock", "pending") == (200, {"ok": True})
    assert backend.report("pro.unlock", "cancelled") == (200, {"ok": True})
    assert backend.wallet()["owned"] == []


def test_refund_revokes_only_its_transaction_and_sticks_until_reversed(start):
    backend = start()
    kept = backend.mint("--transaction", "--transaction-id", "8001")
    refunded = backend.mint("--transaction", "--transaction-id", "8002")
    assert backend.verify(kept)[0] == 200 and backend.verify(refunded)[0] == 200
    refund = backend.mint("--type", "REFUND", "--transaction-id", "8002")
    assert backend.notify(refund)[0] == 200
    assert backend.wallet()["coins"] == {"coins.100": 1}
    # A replay of the purchase, signed before the refund, arrives after it: the refund stays.
    replay = backend.mint("--type", "ONE_TIME_CHARGE", "--transaction-id", "8002", signed=now_ms() - 5_000)
    assert backend.notify(replay)[0] == 200
    assert backend.wallet()["coins"] == {"coins.100": 1}
    reversal = backend.mint("--type", "REFUND_REVERSED", "--transaction-id", "8002", signed=now_ms() + 1_000)
    assert backend.notify(reversal)[0] == 200
    assert backend.wallet()["coins"] == {"coins.100": 2}


def test_subscription_follows_the_newest_signed_date(start):
    backend = start()
    sub = dict(product="premium.gold", kind="auto-renewable")
    assert backend.notify(backend.mint("--type", "SUBSCRIBED/INITIAL_BUY", "--transaction-id", "9001", **sub))[0] == 200
    [state] = backend.wallet()["subscriptions"]
    assert state["sku"] == "premium.gold" and state["state"] == "ACTIVE" and state["expires_at_ms"] > now_ms()
    # A billing failure signed before the subscription's newest state arrives late: it changes nothing.
    stale = backend.mint("--type", "DID_FAIL_TO_RENEW", "--original-transaction-id", "9001", signed=now_ms() - 60_000,
                         **sub)
    assert backend.notify(stale)[0] == 200
    assert backend.wallet()["subscriptions"][0]["state"] == "ACTIVE"
    expired = backend.mint("--type", "EXPIRED/VOLUNTARY", "--original-transaction-id", "9001",
                           signed=now_ms() + 1_000, **sub)
    assert backend.notify(expired)[0] == 200
    [state] = backend.wallet()["subscriptions"]
    assert state["state"] == "EXPIRED"


@pytest.mark.parametrize("steps", [
    # The App Store's retries of a refund and of its reversal, both after a newer extension.
    [("SUBSCRIBED/INITIAL_BUY", 4_000, "ACTIVE"), ("RENEWAL_EXTENDED", 1_000, "ACTIVE"),
     ("REFUND", 3_000, "REVOKED"), ("REFUND_REVERSED", 2_000, "ACTIVE")],
    # A view signed after the reversal that arrives before it, while the refund stands (detect seed 204's shape).
    [("SUBSCRIBED/INITIAL_BUY", 4_000, "ACTIVE"), ("REFUND", 3_000, "REVOKED"),
     ("DID_CHANGE_RENEWAL_STATUS/AUTO_RENEW_ENABLED", 1_000, "REVOKED"), ("REFUND_REVERSED", 2_000, "ACTIVE")],
], ids=["trailing-refund-and-reversal", "newer-view-between"])
def test_a_refund_and_its_reversal_that_trail_a_newer_view_leave_the_subscription_active(start, steps):
    backend = start()
    sub = dict(product="premium.gold", kind="auto-renewable")
    now = now_ms()
    for kind, ago, state in steps:
        signed = now - ago
        note = backend.mint("--type", kind, "--transaction-id", "9201", "--original-transaction-id", "9201",
                            signed=signed, **sub)
        assert backend.notify(note)[0] == 200
        assert [s["state"] for s in backend.wallet()["subscriptions"]] == [state], kind


def test_a_device_view_of_a_lapsed_older_period_leaves_the_current_one_active(start):
    backend = start()
    sub = dict(product="premium.gold", kind="auto-renewable")
    now = now_ms()
    older = backend.mint("--transaction", "--type", "EXPIRED/VOLUNTARY", "--transaction-id", "9301",
                         "--original-transaction-id", "9301", signed=now, **sub)
    renewed = backend.mint("--type", "DID_RENEW", "--transaction-id", "9302", "--original-transaction-id", "9301",
                           signed=now - 2_000, **sub)
    assert backend.notify(renewed)[0] == 200
    # The app brings the lapsed first period, signed after every other view: it says nothing of the current one.
    backend.verify(older)
    [state] = backend.wallet()["subscriptions"]
    assert state["state"] == "ACTIVE" and state["expires_at_ms"] > now


def test_grace_period_is_listed_until_its_end(start):
    backend = start()
    sub = dict(product="premium.gold", kind="auto-renewable")
    assert backend.notify(backend.mint("--type", "DID_FAIL_TO_RENEW/GRACE_PERIOD", **sub))[0] == 200
    [state] = backend.wallet()["subscriptions"]
    assert state["state"] == "GRACE_PERIOD" and state["expires_at_ms"] > now_ms()


def test_wallet_uses_lowercase_ids_and_knows_no_stranger(start):
    backend = start()
    assert backend.notify(backend.mint("--type", "ONE_TIME_CHARGE"))[0] == 200
    assert backend.wallet(USER.upper())["coins"] == {"coins.100": 1}
    assert backend.wallet(str(uuid.uuid4())) == {"owned": [], "subscriptions": [], "coins": {}}
    assert backend.request("GET", "/api/v1/users/nobody/wallet")[0] == 400


def concurrent_duplicates(backend, pairs):
    """Sends each of `pairs` consumable purchases twice at once; returns the coin balance."""
    bodies = [backend.mint("--type", "ONE_TIME_CHARGE") for _ in range(pairs)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        for body in bodies:
            answers = list(pool.map(backend.notify, [body, body]))
            assert all(status == 200 for status, _ in answers), answers
    return backend.wallet()["coins"].get("coins.100", 0)


def test_concurrent_duplicates_credit_once(start):
    backend = start()
    assert concurrent_duplicates(backend, 20) == 20


# --- each bug, shown directly --------------------------------------------------------------------------------


def test_racy_dedupe_double_credits_concurrent_duplicates(start):
    backend = start("racy-dedupe")
    assert concurrent_duplicates(backend, 20) > 20


def test_pending_unlock_unlocks_on_a_pending_report(start):
    backend = start("pending-unlock")
    assert backend.report("pro.unlock", "pending")[0] == 200
    assert backend.wallet()["owned"] == ["pro.unlock"]


def test_refund_by_sku_revokes_the_other_purchase_too(start):
    backend = start("refund-by-sku")
    assert backend.verify(backend.mint("--transaction", "--transaction-id", "8101"))[0] == 200
    assert backend.verify(backend.mint("--transaction", "--transaction-id", "8102"))[0] == 200
    assert backend.notify(backend.mint("--type", "REFUND", "--transaction-id", "8102"))[0] == 200
    assert backend.wallet()["coins"] == {}


def test_skip_verify_grants_a_forged_transaction(start):
    backend = start("skip-verify")
    forged = backend.mint("--transaction", "--forge", "untrusted-root", product="pro.unlock", kind="non-consumable")
    assert backend.verify(forged)[0] == 200
    assert backend.wallet()["owned"] == ["pro.unlock"]


def test_blind_upsert_lets_a_stale_replay_undo_a_refund(start):
    backend = start("blind-upsert")
    assert backend.notify(backend.mint("--type", "REFUND", "--transaction-id", "8201"))[0] == 200
    replay = backend.mint("--type", "ONE_TIME_CHARGE", "--transaction-id", "8201", signed=now_ms() - 5_000)
    assert backend.notify(replay)[0] == 200
    assert backend.wallet()["coins"] == {"coins.100": 1}


def test_token_case_files_webhook_purchases_where_the_wallet_cannot_see_them(start):
    backend = start("token-case")
    assert backend.notify(backend.mint("--type", "ONE_TIME_CHARGE", "--transaction-id", "8301"))[0] == 200
    assert backend.wallet()["coins"] == {}
    assert backend.verify(backend.mint("--transaction", "--transaction-id", "8301"))[0] == 409


def test_session_tokens_guard_the_apps_endpoints_when_configured(start, monkeypatch):
    monkeypatch.setenv("EXAMPLE_TOKEN_SECRET", "s3cret")
    # Long enough for the checks below on a busy machine; the last one waits for the expiry the token names.
    monkeypatch.setenv("EXAMPLE_TOKEN_SECONDS", "6")
    backend = start()
    def status(path, token=None, body=None):
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if token is not None:
            headers["Authorization"] = "Bearer " + token
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(backend.base + path, data=data, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    wallet = f"/api/v1/users/{USER}/wallet"
    # First, so that the token's lifetime starts once the workers answer (they boot slowly on a busy machine).
    assert status(wallet) == 401
    # As PayStorm's target.accounts.provision runs it: a token line in, the user's id and session token out.
    issued = subprocess.run([sys.executable, str(HERE / "provision.py")], capture_output=True, text=True,
                            input=json.dumps({"appAccountToken": USER.upper()}) + "\n", timeout=60, check=True)
    account = json.loads(issued.stdout)
    assert (account["appAccountToken"], account["id"]) == (USER.upper(), USER)
    assert status(wallet, account["token"]) == 200
    # A forged signature: the last hex digit changed (to another digit whatever it was).
    forged = account["token"][:-1] + ("1" if account["token"][-1] == "0" else "0")
    assert status(wallet, forged) == 401
    assert status(f"/api/v1/users/{uuid.uuid4()}/wallet", account["token"]) == 401
    report = {"userId": USER, "sku": "pro.unlock", "result": "cancelled"}
    assert status("/api/v1/purchases/report", account["token"], report) == 200
    # The App Store's webhook carries no session: it is verified by its signature alone.
    assert backend.notify(backend.mint("--type", "ONE_TIME_CHARGE"))[0] == 200
    expires_ms = int(account["token"].split(".")[1])
    time.sleep(max(0.0, expires_ms / 1000 - time.time()) + 0.1)
    assert status(wallet, account["token"]) == 401


def status_and_retry_after(request):
    """The answer's status and its Retry-After header (None without one), error statuses included."""
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, None
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Retry-After")


def burst_in_one_second(call, count):
    """`count` calls of `call` made from the start of a second of the clock, as a rate limit counts them."""
    second = int(time.time())
    while int(time.time()) == second:
        time.sleep(0.01)
    return [call() for _ in range(count)]


def test_wallet_reads_past_the_limit_get_429_when_configured(start, monkeypatch):
    monkeypatch.setenv("EXAMPLE_WALLET_LIMIT", "2")
    backend = start()
    assert backend.notify(backend.mint("--type", "ONE_TIME_CHARGE"))[0] == 200

    def read():
        return status_and_retry_after(f"{backend.base}/api/v1/users/{USER}/wallet")

    # Three workers, two reads a second each: a burst of twelve in one second gets 429 for at least six.
    answers = burst_in_one_second(read, 12)
    assert (429, "1") in answers and answers.count((200, None)) <= 6
    # Purchases are never limited, and the next second reads again.
    assert backend.notify(backend.mint("--type", "ONE_TIME_CHARGE"))[0] == 200
    time.sleep(1.1)
    assert read() == (200, None)


def test_purchase_verifications_past_the_limit_get_429_when_configured(start, monkeypatch):
    monkeypatch.setenv("EXAMPLE_DEVICE_LIMIT", "1")
    backend = start()
    body = json.dumps({"jws": backend.mint("--transaction"), "userId": USER}).encode()

    def verify():
        return status_and_retry_after(urllib.request.Request(
            f"{backend.base}/api/v1/purchases/verify", data=body, method="POST",
            headers={"Content-Type": "application/json"}))

    # Three workers, one verification a second each: a burst of nine in one second gets 429 for at least six.
    answers = burst_in_one_second(verify, 9)
    assert (429, "1") in answers and len([a for a in answers if a[0] != 429]) <= 3
    # The webhook is never limited.
    assert backend.notify(backend.mint("--type", "ONE_TIME_CHARGE"))[0] == 200


def test_unknown_bug_stops_the_start(pki, tmp_path):
    with pytest.raises(subprocess.CalledProcessError):
        subprocess.run(
            [HERE / "start.sh", str(free_port()), str(tmp_path / "x.db"), str(pki / "root.der"), "no-such-bug"],
            check=True, timeout=60, capture_output=True,
        )


# --- the pull endpoint, against `paystorm api serve` --------------------------------------------------------

KEY_ID, ISSUER = "PAYSTORMK1", "57246542-96fe-1a63-e053-0824d011072a"


class API:
    """`paystorm api serve` playing Tests/APIInterop/api-world.json5, with the fault flags given."""

    def __init__(self, pki, tmp, *flags):
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        key = ec.generate_private_key(ec.SECP256R1())
        self.key = tmp / "api-key.p8"
        self.key.write_bytes(key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        self.process = subprocess.Popen(
            [PAYSTORM, "api", "serve", "--pki", str(pki), "--profile", str(HERE.parent / "APIInterop/api-world.json5"),
             "--seed", "7", *flags],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )
        self.url = self.process.stdout.readline().strip()
        self.ca = self.process.stdout.readline().strip()[len("ca: "):]
        assert self.url.startswith("https://"), self.url

    def env(self):
        return {"EXAMPLE_API_URL": self.url, "EXAMPLE_API_KEY": str(self.key), "EXAMPLE_API_KEY_ID": KEY_ID,
                "EXAMPLE_API_ISSUER_ID": ISSUER, "REQUESTS_CA_BUNDLE": self.ca}

    def known(self, kind, besides=()):
        """A transaction of `kind` the API knows (other than `besides`), waiting for the world to make one (at
        most 30 s)."""
        import ssl

        context = ssl.create_default_context(cafile=self.ca)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with urllib.request.urlopen(self.url + "/paystorm/transactions", timeout=10, context=context) as answer:
                found = [
                    t for t in json.loads(answer.read())
                    if t["type"] == kind and not t["revoked"] and t["transactionId"] not in besides
                ]
            if found:
                return found[0]
            time.sleep(0.5)
        raise AssertionError(f"no {kind} transaction within 30 s")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=15)


@pytest.fixture
def pulling(pki, tmp_path, monkeypatch):
    """Starts an API with the given flags and a backend (with the given bugs) that pulls from it."""
    started = []

    def run(bugs="", *flags):
        api = API(pki, tmp_path, *flags)
        started.append(api)
        for name, value in api.env().items():
            monkeypatch.setenv(name, value)
        backend = Backend(pki, tmp_path / f"b{len(started)}", bugs)
        started.append(backend)
        return api, backend

    yield run
    for item in reversed(started):
        item.stop()


def pull(backend, transaction_id, user=USER, sku="coins.100"):
    return backend.request("POST", "/api/v1/purchases/pull", {"transactionId": transaction_id, "userId": user, "sku": sku})


def test_pull_grants_what_apple_confirms_for_its_owner_only(pulling):
    api, backend = pulling()
    # The world plays on in real time: a purchase listed unrefunded may be refunded before the pull asks (then
    # the answer is 200 `granted: false`); take the next one then.
    refunded = []
    for _ in range(5):
        tx = api.known("Consumable", besides=refunded)
        owner = tx["appAccountToken"].lower()
        status, answer = pull(backend, tx["transactionId"], user=owner)
        assert status == 200, answer
        if answer.get("granted"):
            break
        refunded.append(tx["transactionId"])
    assert backend.wallet(owner)["coins"].get(tx["productId"], 0) >= 1  # the purchase's quantity
    assert pull(backend, tx["transactionId"], user=owner)[0] == 409
    assert pull(backend, tx["transactionId"], user=USER)[0] == 403
    assert pull(backend, "9000000000000001")[0] == 404
    assert backend.wallet()["coins"] == {}


def test_pull_bug_grant_unconfirmed_credits_a_made_up_id(pulling):
    _, backend = pulling("grant-unconfirmed")
    assert pull(backend, "9000000000000001")[0] == 200
    assert backend.wallet()["coins"] == {"coins.100": 1}


@pytest.mark.parametrize("bugs, status", [("", 503), ("ack-on-rate-limit", 200)])
def test_pull_rate_limited_is_retried_later_unless_the_bug_acknowledges_it(pulling, bugs, status):
    _, backend = pulling(bugs, "--rate-limit", "1")
    assert pull(backend, "1000000000000001")[0] == status
    assert backend.wallet()["coins"] == {}


@pytest.mark.parametrize("webhook_first", [True, False])
def test_pulling_grants_what_the_webhook_confirmed_when_apple_cannot_answer(pulling, monkeypatch, webhook_first):
    # One-time purchases are granted by the pull only; Apple's API rate-limits every call. The webhook's signed
    # confirmation and the app's claim meet whichever comes first, for the transaction's owner only.
    monkeypatch.setenv("EXAMPLE_PURCHASES_BY_PULL", "1")
    _, backend = pulling("", "--rate-limit", "1")
    webhook = backend.mint("--type", "ONE_TIME_CHARGE", "--transaction-id", "7101", product="pro.unlock",
                           kind="non-consumable")
    if webhook_first:
        assert backend.notify(webhook) == (200, {"ok": True})
        assert backend.wallet()["owned"] == []
        assert pull(backend, "7101", user=str(uuid.uuid4()), sku="pro.unlock")[0] == 503
        assert pull(backend, "7101", sku="pro.unlock") == (200, {"ok": True, "granted": True})
    else:
        assert pull(backend, "7101", sku="pro.unlock")[0] == 503
        assert backend.wallet()["owned"] == []
        assert backend.notify(webhook) == (200, {"ok": True})
    assert backend.wallet()["owned"] == ["pro.unlock"]
    assert pull(backend, "7101", sku="pro.unlock")[0] == 409


def test_pulling_bug_ack_on_rate_limit_still_loses_a_confirmed_purchase(pulling, monkeypatch):
    monkeypatch.setenv("EXAMPLE_PURCHASES_BY_PULL", "1")
    _, backend = pulling("ack-on-rate-limit", "--rate-limit", "1")
    assert backend.notify(backend.mint("--type", "ONE_TIME_CHARGE", "--transaction-id", "7102"))[0] == 200
    assert pull(backend, "7102") == (200, {"ok": True, "queued": True})
    assert backend.wallet()["coins"] == {}


def test_ack_before_commit_loses_what_it_acknowledged_when_killed(start, monkeypatch):
    # Filed five seconds after the answer here, so the kill surely comes first on a busy machine.
    monkeypatch.setenv("EXAMPLE_FILING_SECONDS", "5")
    backend = start("ack-before-commit")
    status, body = backend.notify(backend.mint("--type", "ONE_TIME_CHARGE", "--transaction-id", "8401"))
    assert status == 200 and body["queued"]
    backend.restart("ack-before-commit")
    assert backend.wallet()["coins"] == {}
    # The device's delivery of the same transaction repairs it, as the next renewal would a subscription.
    assert backend.verify(backend.mint("--transaction", "--transaction-id", "8401"))[0] == 200
    assert backend.wallet()["coins"] == {"coins.100": 1}


def test_ack_before_commit_files_what_it_acknowledged_when_left_running(start):
    backend = start("ack-before-commit")
    assert backend.notify(backend.mint("--type", "ONE_TIME_CHARGE", "--transaction-id", "8402"))[0] == 200
    deadline = time.monotonic() + 10
    while backend.wallet()["coins"] != {"coins.100": 1}:
        assert time.monotonic() < deadline, "never filed"
        time.sleep(0.1)


@pytest.mark.parametrize("bugs", ["", "stale-expiry"])
def test_an_expiry_signed_before_the_renewal_ends_the_subscription_only_under_stale_expiry(start, bugs):
    backend = start(bugs)
    sub = dict(product="premium.gold", kind="auto-renewable")
    assert backend.notify(backend.mint("--type", "SUBSCRIBED/INITIAL_BUY", "--transaction-id", "9101", **sub))[0] == 200
    renewal = backend.mint("--type", "DID_RENEW", "--transaction-id", "9102", "--original-transaction-id", "9101",
                           **sub)
    assert backend.notify(renewal)[0] == 200
    # The expiry of the first period, retried: signed before the renewal, delivered after it.
    stale = backend.mint("--type", "EXPIRED/VOLUNTARY", "--original-transaction-id", "9101",
                         signed=now_ms() - 60_000, **sub)
    assert backend.notify(stale)[0] == 200
    [state] = backend.wallet()["subscriptions"]
    assert state["state"] == ("EXPIRED" if bugs else "ACTIVE")


@pytest.mark.parametrize("bugs", ["", "stale-expiry"])
def test_a_late_view_of_a_lapsed_period_ends_the_subscription_only_under_stale_expiry(start, bugs):
    backend = start(bugs)
    sub = dict(product="premium.gold", kind="auto-renewable")
    # A first period that lapsed a minute ago, and its renewal, both filed from the webhook.
    lapsed = now_ms() - 31 * 86_400_000 - 60_000
    first = backend.mint("--type", "SUBSCRIBED/INITIAL_BUY", "--transaction-id", "9201", signed=lapsed, **sub)
    assert backend.notify(first)[0] == 200
    renewal = backend.mint("--type", "DID_RENEW", "--transaction-id", "9202", "--original-transaction-id", "9201",
                           **sub)
    assert backend.notify(renewal)[0] == 200
    assert backend.wallet()["subscriptions"][0]["state"] == "ACTIVE"
    # A late listener's view of the first period: already credited, so a repeat.
    view = backend.mint("--transaction", "--type", "SUBSCRIBED/INITIAL_BUY", "--transaction-id", "9201",
                        signed=lapsed, **sub)
    assert backend.verify(view)[0] == 409
    assert backend.wallet()["subscriptions"][0]["state"] == ("EXPIRED" if bugs else "ACTIVE")


@pytest.mark.parametrize("bugs", ["", "refuse-reversal"])
def test_a_refund_reversal_is_refused_every_time_only_under_refuse_reversal(start, bugs):
    backend = start(bugs)
    assert backend.verify(backend.mint("--transaction", "--transaction-id", "9301"))[0] == 200
    assert backend.notify(backend.mint("--type", "REFUND", "--transaction-id", "9301"))[0] == 200
    assert backend.wallet()["coins"] == {}
    reversal = backend.mint("--type", "REFUND_REVERSED", "--transaction-id", "9301", signed=now_ms() + 1_000)
    # Apple's retries send the same bytes: each is refused under the bug, and the refund stays.
    statuses = [backend.notify(reversal)[0] for _ in range(3)]
    assert statuses == ([500, 500, 500] if bugs else [200, 200, 200])
    assert backend.wallet()["coins"] == ({} if bugs else {"coins.100": 1})


@pytest.mark.parametrize("bugs", ["", "dies-on-restart"])
def test_the_second_restart_fails_only_under_dies_on_restart(start, bugs):
    backend = start(bugs)
    backend.restart(bugs)
    assert backend.wallet() == {"owned": [], "subscriptions": [], "coins": {}}
    backend.stop()
    second = subprocess.run(
        [HERE / "start.sh", str(backend.port), str(backend.db), str(backend.pki / "root.der"), bugs],
        capture_output=True, text=True, timeout=60,
    )
    if bugs:
        assert second.returncode != 0
        assert "start-up failed" in second.stderr
    else:
        assert second.returncode == 0, second.stderr
        assert backend.wallet()["coins"] == {}


# --- the receipt endpoint, against `paystorm api serve`'s verifyReceipt -------------------------------------


@pytest.fixture
def receipting(pki, tmp_path, monkeypatch):
    """Starts an API and a backend (with the given bugs) whose verifyReceipt calls, at Apple's URLs, reach it:
    the test root trusted (REQUESTS_CA_BUNDLE) and Apple's receipt hosts routed to the API (EXAMPLE_APPLE_HOSTS)."""
    started = []

    def run(bugs="", *flags, route=None):
        api = API(pki, tmp_path, *flags)
        started.append(api)
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", api.ca)
        monkeypatch.setenv("EXAMPLE_APPLE_HOSTS", route if route is not None else api.url[len("https://"):])
        backend = Backend(pki, tmp_path / f"b{len(started)}", bugs)
        started.append(backend)
        return backend

    yield run
    for item in reversed(started):
        item.stop()


def app_receipt(pki, tmp_path, *transactions, environment="Sandbox", bundle="com.example.paystorm"):
    """A base64 app receipt (`paystorm mint receipt`) of the app, listing the transactions (Apple's JSON)."""
    file = tmp_path / f"receipt-{uuid.uuid4()}.json"
    file.write_text(json.dumps(list(transactions)))
    result = subprocess.run(
        [PAYSTORM, "mint", "receipt", "--pki", str(pki), "--bundle-id", bundle, "--transactions",
         str(file), "--environment", environment],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def purchase(transaction_id, product, kind, **fields):
    purchased = now_ms() - 60_000
    return {"transactionId": transaction_id, "originalTransactionId": transaction_id, "productId": product,
            "type": kind, "purchaseDate": purchased, "originalPurchaseDate": purchased, "quantity": 1, **fields}


def post_receipt(backend, receipt, user=USER):
    return backend.request("POST", "/api/v1/receipts/verify", {"receipt": receipt, "userId": user})


def test_a_sandbox_receipt_is_retried_on_sandbox_and_grants_each_product_by_type(receipting, pki, tmp_path):
    backend = receipting()
    month = 30 * 86_400_000
    receipt = app_receipt(
        pki, tmp_path,
        purchase("7201", "coins.100", "Consumable"),
        purchase("7202", "pro.unlock", "Non-Consumable"),
        purchase("7203", "premium.gold", "Auto-Renewable Subscription", expiresDate=now_ms() + month),
    )
    # Production answers 21007 (a sandbox receipt); the backend asks sandbox, which answers 0.
    assert post_receipt(backend, receipt) == (200, {"ok": True, "granted": True})
    wallet = backend.wallet()
    assert wallet["coins"] == {"coins.100": 1}
    assert wallet["owned"] == ["pro.unlock"]
    assert [s["state"] for s in wallet["subscriptions"]] == ["ACTIVE"]
    # The same receipt again credits nothing more; another user's post of it is refused.
    assert post_receipt(backend, receipt) == (200, {"ok": True, "granted": False})
    assert backend.wallet()["coins"] == {"coins.100": 1}
    assert post_receipt(backend, receipt, user=str(uuid.uuid4()))[0] == 403


def test_an_expired_subscription_in_a_receipt_is_filed_but_not_entitled(receipting, pki, tmp_path):
    backend = receipting()
    lapsed = purchase("7211", "premium.gold", "Auto-Renewable Subscription", expiresDate=now_ms() - 1_000)
    assert post_receipt(backend, app_receipt(pki, tmp_path, lapsed))[0] == 200
    assert [s["state"] for s in backend.wallet()["subscriptions"]] == ["EXPIRED"]


@pytest.mark.parametrize("bugs", ["", "receipt-grants-cancelled"])
def test_a_cancelled_transaction_in_a_receipt_is_granted_only_under_receipt_grants_cancelled(
    receipting, pki, tmp_path, bugs
):
    backend = receipting(bugs)
    cancelled = purchase("7221", "pro.unlock", "Non-Consumable", revocationDate=now_ms() - 1_000)
    assert post_receipt(backend, app_receipt(pki, tmp_path, cancelled))[0] == 200
    assert backend.wallet()["owned"] == (["pro.unlock"] if bugs else [])


@pytest.mark.parametrize("bugs", ["", "receipt-grants-cancelled"])
def test_a_receipt_after_a_refund_restores_it_only_under_receipt_grants_cancelled(receipting, pki, tmp_path, bugs):
    backend = receipting(bugs)
    receipt = app_receipt(pki, tmp_path, purchase("7231", "pro.unlock", "Non-Consumable"))
    assert post_receipt(backend, receipt)[0] == 200
    refund = backend.mint("--type", "REFUND", "--transaction-id", "7231", product="pro.unlock", kind="non-consumable")
    assert backend.notify(refund)[0] == 200
    assert backend.wallet()["owned"] == []
    # The app posts its receipt again (its next purchase or launch).
    assert post_receipt(backend, receipt)[0] == 200
    assert backend.wallet()["owned"] == (["pro.unlock"] if bugs else [])


def test_receipts_apple_does_not_verify_are_refused(receipting, pki, tmp_path):
    backend = receipting()
    other = tmp_path / "other-pki"
    subprocess.run([PAYSTORM, "pki", "init", str(other)], check=True, capture_output=True, timeout=60)
    forged = app_receipt(other, tmp_path, purchase("7241", "pro.unlock", "Non-Consumable"))
    assert post_receipt(backend, forged) == (400, {"ok": False, "error": "receipt not verified: status 21003"})
    assert post_receipt(backend, "bm90IGEgcmVjZWlwdA==")[0] == 400
    # Genuine receipts (status 0) of another app, and of production, which the sandbox backend does not take.
    unlock = purchase("7242", "pro.unlock", "Non-Consumable")
    assert post_receipt(backend, app_receipt(pki, tmp_path, unlock, bundle="com.example.other")) == (
        400, {"ok": False, "error": "receipt of another app"})
    assert post_receipt(backend, app_receipt(pki, tmp_path, unlock, environment="Production")) == (
        400, {"ok": False, "error": "receipt of another environment: Production"})
    assert backend.wallet()["owned"] == []


def test_without_a_route_to_apple_the_receipt_endpoint_answers_501(start, monkeypatch):
    monkeypatch.delenv("EXAMPLE_APPLE_HOSTS", raising=False)
    assert post_receipt(start(), "bm90IGEgcmVjZWlwdA==")[0] == 501


def test_a_subscription_receipt_is_checked_with_the_shared_secret(receipting, pki, tmp_path, monkeypatch):
    month = 30 * 86_400_000
    receipt = app_receipt(
        pki, tmp_path, purchase("7271", "premium.gold", "Auto-Renewable Subscription", expiresDate=now_ms() + month))
    monkeypatch.setenv("EXAMPLE_SHARED_SECRET", "wrong")
    backend = receipting("", "--shared-secret", "s3cret")
    assert post_receipt(backend, receipt) == (400, {"ok": False, "error": "receipt not verified: status 21004"})
    monkeypatch.setenv("EXAMPLE_SHARED_SECRET", "s3cret")
    backend = receipting("", "--shared-secret", "s3cret")
    assert post_receipt(backend, receipt) == (200, {"ok": True, "granted": True})


@pytest.mark.parametrize("fault", ["--rate-limit", "--retryable-errors", "--internal-errors"])
def test_verify_receipt_that_cannot_answer_now_is_a_503_the_app_retries(receipting, pki, tmp_path, fault):
    backend = receipting("", fault, "1")
    receipt = app_receipt(pki, tmp_path, purchase("7281", "coins.100", "Consumable"))
    assert post_receipt(backend, receipt)[0] == 503
    assert backend.wallet()["coins"] == {}


def test_an_unreachable_verify_receipt_is_a_503_the_app_retries(receipting, pki, tmp_path):
    backend = receipting(route=f"127.0.0.1:{free_port()}")
    receipt = app_receipt(pki, tmp_path, purchase("7251", "coins.100", "Consumable"))
    assert post_receipt(backend, receipt)[0] == 503
    assert backend.wallet()["coins"] == {}


# Inside a network and mount namespace of its own: Apple's receipt hosts in a hosts file over /etc/hosts, the API on
# 127.0.0.1:443, the backend told only to trust the root and to resolve as the machine does.
HOSTS_ENTRY_RUN = r"""
set -euo pipefail
paystorm="$1" pki="$2" work="$3" here="$4" receipt="$5"
ip link set lo up
printf '127.0.0.1 localhost buy.itunes.apple.com sandbox.itunes.apple.com\n' >"$work/hosts"
mount --bind "$work/hosts" /etc/hosts
"$paystorm" api serve --pki "$pki" --listen 127.0.0.1:443 >"$work/serve.out" 2>&1 &
trap 'kill $! 2>/dev/null; "$here/kill.sh" "$work/b.db" 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q '^https://' "$work/serve.out" && break; sleep 0.1; done
REQUESTS_CA_BUNDLE="$pki/root.pem" EXAMPLE_APPLE_HOSTS=system "$here/start.sh" 8000 "$work/b.db" "$pki/root.der" ""
"$here/.venv/bin/python" - "$receipt" <<'EOF'
import json, sys, urllib.request
user = "6f9619ff-8b86-d011-b42d-00c04fc964ff"
body = json.dumps({"receipt": sys.argv[1], "userId": user}).encode()
post = urllib.request.Request("http://127.0.0.1:8000/api/v1/receipts/verify", body,
                              {"Content-Type": "application/json"})
print(urllib.request.urlopen(post, timeout=10).read().decode().strip())
wallet = f"http://127.0.0.1:8000/api/v1/users/{user}/wallet"
print(urllib.request.urlopen(wallet, timeout=10).read().decode().strip())
EOF
"""


def test_a_hosts_entry_and_port_443_reach_verify_receipt_with_apples_urls_untouched(pki, tmp_path):
    if shutil.which("ip") is None or subprocess.run(
        ["unshare", "--net", "--mount", "true"], capture_output=True, timeout=30
    ).returncode != 0:
        pytest.skip("no network and mount namespace here (unshare needs root; a container may forbid it)")
    receipt = app_receipt(pki, tmp_path, purchase("7261", "pro.unlock", "Non-Consumable"))
    result = subprocess.run(
        ["unshare", "--net", "--mount", "bash", "-c", HOSTS_ENTRY_RUN, "hosts-entry", PAYSTORM, str(pki),
         str(tmp_path), str(HERE), receipt],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    granted, wallet = result.stdout.splitlines()[-2:]
    assert json.loads(granted) == {"ok": True, "granted": True}
    assert json.loads(wallet)["owned"] == ["pro.unlock"]
