"""The App Store Server API PayStorm serves, called with Apple's own client (app-store-server-library).

`paystorm api serve` plays Tests/APIInterop/api-world.json5 (fixed seed) over HTTPS with a certificate from a
fresh test PKI. AppStoreServerAPIClient (Environment.SANDBOX, its base URL pointed at PayStorm, the test CA
trusted through REQUESTS_CA_BUNDLE) calls every endpoint; SignedDataVerifier trusting the test root (online
checks off) verifies every signed answer; errors must be APIException with Apple's APIError: not found, rate
limit (with Retry-After), retryable and plain 500s, eventual consistency, and 401 for a token PayStorm refuses.

Run through run.sh, which makes the virtualenv and finds the paystorm binary.
"""

import datetime
import os
import pathlib
import subprocess
import time
import uuid

import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from appstoreserverlibrary.api_client import APIError, APIException, AppStoreServerAPIClient
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.models.ExtendReasonCode import ExtendReasonCode
from appstoreserverlibrary.models.ExtendRenewalDateRequest import ExtendRenewalDateRequest
from appstoreserverlibrary.models.NotificationHistoryRequest import NotificationHistoryRequest
from appstoreserverlibrary.models.NotificationTypeV2 import NotificationTypeV2
from appstoreserverlibrary.models.TransactionHistoryRequest import Order, ProductType, TransactionHistoryRequest
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier

try:  # the library renamed the v1 body when it added v2 consumption information
    from appstoreserverlibrary.models.ConsumptionRequestV1 import ConsumptionRequestV1 as ConsumptionBody
except ImportError:
    from appstoreserverlibrary.models.ConsumptionRequest import ConsumptionRequest as ConsumptionBody
from appstoreserverlibrary.models.ConsumptionStatus import ConsumptionStatus
from appstoreserverlibrary.models.Platform import Platform
from appstoreserverlibrary.models.AccountTenure import AccountTenure
from appstoreserverlibrary.models.PlayTime import PlayTime
from appstoreserverlibrary.models.LifetimeDollarsRefunded import LifetimeDollarsRefunded
from appstoreserverlibrary.models.LifetimeDollarsPurchased import LifetimeDollarsPurchased
from appstoreserverlibrary.models.UserStatus import UserStatus

try:
    from appstoreserverlibrary.models.DeliveryStatusV1 import DeliveryStatusV1 as DeliveryStatus
except ImportError:
    from appstoreserverlibrary.models.DeliveryStatus import DeliveryStatus
try:
    from appstoreserverlibrary.api_client import GetTransactionHistoryVersion
except ImportError:
    GetTransactionHistoryVersion = None

HERE = pathlib.Path(__file__).resolve().parent
PAYSTORM = os.environ.get("PAYSTORM") or str(HERE.parents[1] / ".build/debug/paystorm")
BUNDLE = "com.example.paystorm"
APP_APPLE_ID = 1234567890
KEY_ID = "PAYSTORMK1"
ISSUER = "57246542-96fe-1a63-e053-0824d011072a"


class Server:
    """One `paystorm api serve` process; stopped with SIGTERM, killed if it lingers."""

    def __init__(self, tmp, *flags):
        self.process = subprocess.Popen(
            [PAYSTORM, "api", "serve", "--pki", str(tmp / "pki"), *flags],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.url = self.process.stdout.readline().strip()
        ca_line = self.process.stdout.readline().strip()
        if not self.url.startswith("https://") or not ca_line.startswith("ca: "):
            self.stop()
            raise AssertionError(f"paystorm api serve did not start: {self.url!r} {self.process.stderr.read()}")
        self.ca = ca_line[len("ca: "):]

    def client(self, key_pem):
        client = AppStoreServerAPIClient(key_pem, KEY_ID, ISSUER, BUNDLE, Environment.SANDBOX)
        client._base_url = self.url  # Apple's host, mapped to PayStorm (a hosts entry does the same for a backend)
        return client

    def transactions(self):
        return requests.get(self.url + "/paystorm/transactions", verify=self.ca, timeout=10).json()

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("api")
    subprocess.run([PAYSTORM, "pki", "init", str(tmp / "pki")], check=True, capture_output=True, timeout=60)
    key = ec.generate_private_key(ec.SECP256R1())
    private_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    public = tmp / "key.pub.pem"
    public.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return tmp, private_pem, public


@pytest.fixture(scope="module")
def world(keys):
    tmp, private_pem, public = keys
    server = Server(tmp, "--profile", str(HERE / "api-world.json5"), "--seed", "7",
                    "--key-id", KEY_ID, "--public-key", str(public))
    os.environ["REQUESTS_CA_BUNDLE"] = server.ca
    try:
        deadline = time.monotonic() + 60
        listed = []
        while time.monotonic() < deadline:
            listed = server.transactions()
            kinds = {t["type"] for t in listed}
            if "Auto-Renewable Subscription" in kinds and "Consumable" in kinds and any(t["revoked"] for t in listed):
                break
            time.sleep(0.5)
        assert listed, "the world produced no transaction within 60 s"
        yield server, server.client(private_pem), listed
    finally:
        server.stop()


@pytest.fixture(scope="module")
def verifier(keys):
    tmp, _, _ = keys
    root = (tmp / "pki" / "root.der").read_bytes()
    return SignedDataVerifier([root], False, Environment.SANDBOX, BUNDLE, APP_APPLE_ID)


def first(listed, **match):
    found = [t for t in listed if all(t[k] == v for k, v in match.items())]
    if not found:
        pytest.skip(f"the world has no transaction with {match} yet")
    return found[0]


def test_get_transaction_info(world, verifier):
    _, client, listed = world
    wanted = listed[0]
    response = client.get_transaction_info(wanted["transactionId"])
    decoded = verifier.verify_and_decode_signed_transaction(response.signedTransactionInfo)
    assert decoded.transactionId == wanted["transactionId"]
    assert decoded.productId == wanted["productId"]


def test_get_transaction_history_pages_with_revision(world, verifier):
    _, client, listed = world
    wanted = listed[0]
    same_customer = {t["transactionId"] for t in world[0].transactions() if t["customer"] == wanted["customer"]}
    request = TransactionHistoryRequest(sort=Order.ASCENDING, revoked=None)
    seen, revision = set(), None
    for _ in range(50):
        args = (wanted["transactionId"], revision, request)
        response = client.get_transaction_history(*args, GetTransactionHistoryVersion.V2) if GetTransactionHistoryVersion else client.get_transaction_history(*args)
        assert response.bundleId == BUNDLE and response.rawEnvironment == "Sandbox"
        for jws in response.signedTransactions:
            seen.add(verifier.verify_and_decode_signed_transaction(jws).transactionId)
        revision = response.revision
        if not response.hasMore:
            break
    assert wanted["transactionId"] in seen and seen <= same_customer | seen
    filtered = client.get_transaction_history(
        wanted["transactionId"], None, TransactionHistoryRequest(productTypes=[ProductType.CONSUMABLE], revoked=False),
        *([GetTransactionHistoryVersion.V2] if GetTransactionHistoryVersion else []))
    for jws in filtered.signedTransactions:
        decoded = verifier.verify_and_decode_signed_transaction(jws)
        assert decoded.rawType == "Consumable" and decoded.revocationDate is None


def test_get_all_subscription_statuses(world, verifier):
    _, client, listed = world
    subscription = first(listed, type="Auto-Renewable Subscription")
    response = client.get_all_subscription_statuses(subscription["transactionId"])
    assert response.bundleId == BUNDLE and response.appAppleId == APP_APPLE_ID
    items = [item for group in response.data for item in group.lastTransactions]
    assert items
    for item in items:
        transaction = verifier.verify_and_decode_signed_transaction(item.signedTransactionInfo)
        assert transaction.originalTransactionId == item.originalTransactionId
        assert item.rawStatus in (1, 2, 3, 4, 5)
        if item.signedRenewalInfo:
            renewal = verifier.verify_and_decode_renewal_info(item.signedRenewalInfo)
            assert renewal.originalTransactionId == item.originalTransactionId


def test_get_refund_history(world, verifier):
    _, client, listed = world
    refunded = first(listed, revoked=True)
    response = client.get_refund_history(refunded["transactionId"], None)
    decoded = [verifier.verify_and_decode_signed_transaction(jws) for jws in response.signedTransactions]
    assert refunded["transactionId"] in {t.transactionId for t in decoded}
    assert all(t.revocationDate is not None for t in decoded)


def test_look_up_order_id(world, verifier):
    _, client, listed = world
    wanted = listed[0]
    response = client.look_up_order_id(wanted["orderId"])
    assert response.rawStatus == 0
    ids = {verifier.verify_and_decode_signed_transaction(jws).transactionId for jws in response.signedTransactions}
    assert wanted["transactionId"] in ids
    assert client.look_up_order_id("NOSUCHORDR").rawStatus == 1


def test_test_notification_and_its_status(world, verifier):
    _, client, _ = world
    token = client.request_test_notification().testNotificationToken
    status = client.get_test_notification_status(token)
    notification = verifier.verify_and_decode_notification(status.signedPayload)
    assert notification.rawNotificationType == "TEST"


def test_get_notification_history(world, verifier):
    _, client, _ = world
    now = int(time.time() * 1000)
    client.request_test_notification()
    request = NotificationHistoryRequest(startDate=now - 3_600_000, endDate=now + 60_000)
    token, seen = None, []
    for _ in range(100):
        response = client.get_notification_history(token, request)
        seen += [verifier.verify_and_decode_notification(i.signedPayload) for i in response.notificationHistory]
        if not response.hasMore:
            break
        assert len(response.notificationHistory) == 20
        token = response.paginationToken
    assert "TEST" in {n.rawNotificationType for n in seen}
    assert len({n.notificationUUID for n in seen}) == len(seen)


def test_send_consumption_data(world):
    _, client, listed = world
    consumable = first(listed, type="Consumable")
    body = ConsumptionBody(
        customerConsented=True, consumptionStatus=ConsumptionStatus.PARTIALLY_CONSUMED, platform=Platform.APPLE,
        sampleContentProvided=False, deliveryStatus=DeliveryStatus.DELIVERED_AND_WORKING_PROPERLY, appAccountToken="",
        accountTenure=AccountTenure.THIRTY_DAYS_TO_NINETY_DAYS, playTime=PlayTime.ONE_TO_SIX_HOURS,
        lifetimeDollarsRefunded=LifetimeDollarsRefunded.ZERO_DOLLARS,
        lifetimeDollarsPurchased=LifetimeDollarsPurchased.ONE_CENT_TO_FORTY_NINE_DOLLARS_AND_NINETY_NINE_CENTS,
        userStatus=UserStatus.ACTIVE)
    client.send_consumption_data(consumable["transactionId"], body)
    with pytest.raises(APIException) as refused:
        client.send_consumption_data(consumable["transactionId"], ConsumptionBody(customerConsented=False))
    assert refused.value.http_status_code == 400
    assert refused.value.api_error == APIError.INVALID_CUSTOMER_CONSENTED


def test_extend_subscription_renewal_date(world, verifier):
    _, client, listed = world
    subscription = first(listed, type="Auto-Renewable Subscription")
    statuses = client.get_all_subscription_statuses(subscription["transactionId"])
    active = [i for g in statuses.data for i in g.lastTransactions if i.rawStatus == 1]
    if not active:
        pytest.skip("no active subscription at this moment")
    before = verifier.verify_and_decode_signed_transaction(active[0].signedTransactionInfo)
    response = client.extend_subscription_renewal_date(
        active[0].originalTransactionId,
        ExtendRenewalDateRequest(extendByDays=2, extendReasonCode=ExtendReasonCode.CUSTOMER_SATISFACTION,
                                 requestIdentifier=str(uuid.uuid4())))
    assert response.success and response.originalTransactionId == active[0].originalTransactionId
    assert response.effectiveDate == before.expiresDate + 2 * 86_400_000
    after = client.get_transaction_info(before.transactionId)
    assert verifier.verify_and_decode_signed_transaction(after.signedTransactionInfo).expiresDate == response.effectiveDate
    history = client.get_notification_history(None, NotificationHistoryRequest(
        startDate=int(time.time() * 1000) - 600_000, endDate=int(time.time() * 1000) + 60_000,
        notificationType=NotificationTypeV2.RENEWAL_EXTENDED))
    extended = [verifier.verify_and_decode_notification(i.signedPayload) for i in history.notificationHistory]
    assert extended and extended[-1].rawNotificationType == "RENEWAL_EXTENDED"
    extended_transaction = verifier.verify_and_decode_signed_transaction(extended[-1].data.signedTransactionInfo)
    assert extended_transaction.expiresDate == response.effectiveDate


def test_unknown_transaction_is_transaction_id_not_found(world):
    _, client, _ = world
    with pytest.raises(APIException) as error:
        client.get_transaction_info("1000000000000000001")
    assert error.value.http_status_code == 404
    assert error.value.api_error == APIError.TRANSACTION_ID_NOT_FOUND


def test_a_token_signed_by_another_key_is_401(world):
    server, _, listed = world
    other = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    with pytest.raises(APIException) as error:
        server.client(other).get_transaction_info(listed[0]["transactionId"])
    assert error.value.http_status_code == 401 and error.value.api_error is None


@pytest.mark.parametrize("flags,status,api_error", [
    (["--rate-limit", "1", "--retry-after", "3"], 429, APIError.RATE_LIMIT_EXCEEDED),
    (["--retryable-errors", "1"], 500, APIError.GENERAL_INTERNAL_RETRYABLE),
    (["--internal-errors", "1"], 500, APIError.GENERAL_INTERNAL),
])
def test_faults_are_apis_own_errors(keys, flags, status, api_error):
    tmp, private_pem, _ = keys
    server = Server(tmp, *flags)
    try:
        os.environ["REQUESTS_CA_BUNDLE"] = server.ca
        with pytest.raises(APIException) as error:
            server.client(private_pem).get_transaction_info("1000000000000000001")
        assert error.value.http_status_code == status and error.value.api_error == api_error
        if status == 429:
            raw = requests.get(server.url + "/inApps/v1/transactions/1", verify=server.ca, timeout=10,
                               headers={"Authorization": "Bearer " + server.client(private_pem)._generate_token()})
            assert raw.headers["Retry-After"] == "3"
    finally:
        server.stop()


def test_a_new_transaction_is_not_found_until_the_consistency_delay(keys):
    tmp, private_pem, _ = keys
    server = Server(tmp, "--profile", str(HERE / "api-world.json5"), "--seed", "7", "--not-found-seconds", "600")
    try:
        os.environ["REQUESTS_CA_BUNDLE"] = server.ca
        deadline = time.monotonic() + 30
        while not server.transactions() and time.monotonic() < deadline:
            time.sleep(0.2)
        listed = server.transactions()
        assert listed
        with pytest.raises(APIException) as error:
            server.client(private_pem).get_transaction_info(listed[0]["transactionId"])
        assert error.value.api_error == APIError.TRANSACTION_ID_NOT_FOUND
    finally:
        server.stop()
