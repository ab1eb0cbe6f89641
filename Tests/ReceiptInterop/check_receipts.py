"""Reads `paystorm mint receipt` output with asn1crypto, which shares no code with PayStorm or OpenSSL.

Checks the PKCS#7 envelope (SignedData over data, the leaf, intermediate and root certificates, one
signer whose certificate carries Apple's receipt-signing OID) and the receipt inside it: Apple's SET of
(type INTEGER, version INTEGER, value OCTET STRING) attributes, the bundle ID, the creation date and each
in-app purchase's fields. Then posts a receipt to `paystorm api serve`'s verifyReceipt over HTTPS under
Apple's two receipt host names (certificate checked against the test root and the host name), as a legacy
backend does: 0 from sandbox, 21007 from production. Every forged receipt (`--forge`) is still PKCS#7 that
asn1crypto reads, and verifyReceipt refuses it as Apple would. Usage: check_receipts.py PAYSTORM PKI_DIR [PORT]
"""

import base64
import http.client
import json
import socket
import ssl
import subprocess
import sys
import tempfile

from asn1crypto import cms, core, x509

RECEIPT_SIGNING_OID = "1.2.840.113635.100.6.11.1"


class Attribute(core.Sequence):
    _fields = [("type", core.Integer), ("version", core.Integer), ("value", core.OctetString)]


class Attributes(core.SetOf):
    _child_spec = Attribute


def attributes(der):
    """The attributes of a receipt SET as (type, value bytes) pairs, in their order."""
    parsed = Attributes.load(der, strict=True)
    return [(item["type"].native, item["value"].native) for item in parsed]


def decoded(value):
    """An attribute value's own DER: a string or an integer."""
    return core.load(value, strict=True).native


def mint(paystorm, pki, *args):
    result = subprocess.run(
        [paystorm, "mint", "receipt", "--pki", pki, *args], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, f"mint receipt {args}: {result.stderr.strip()}"
    return base64.b64decode(result.stdout.strip(), validate=True)


def check_envelope(der, pki):
    info = cms.ContentInfo.load(der, strict=True)
    assert info["content_type"].native == "signed_data", info["content_type"].native
    signed = info["content"]
    assert signed["encap_content_info"]["content_type"].native == "data"
    certificates = [choice.chosen for choice in signed["certificates"]]
    subjects = {cert.subject.native["common_name"] for cert in certificates}
    assert len(certificates) == 3, subjects
    root = x509.Certificate.load(open(f"{pki}/root.der", "rb").read())
    assert root.dump() in {cert.dump() for cert in certificates}, "the root is not in the SignedData"
    (signer,) = signed["signer_infos"]
    serial = signer["sid"].chosen["serial_number"].native
    (leaf,) = [cert for cert in certificates if cert.serial_number == serial]
    oids = {ext["extn_id"].dotted for ext in leaf["tbs_certificate"]["extensions"]}
    assert RECEIPT_SIGNING_OID in oids, f"the signer lacks {RECEIPT_SIGNING_OID}"
    assert signer["digest_algorithm"]["algorithm"].native == "sha256"
    return signed["encap_content_info"]["content"].native


def check_receipt(paystorm, pki):
    der = mint(
        paystorm, pki,
        "--purchase", "pro.monthly:2000000000000101", "--purchase", "coins.100:2000000000000102",
        "--bundle-id", "com.acme.app", "--app-version", "7.2", "--created", "1767225600000",
    )
    receipt = attributes(check_envelope(der, pki))
    types = [kind for kind, _ in receipt]
    assert types == sorted(types), types
    fields = dict(receipt)
    assert decoded(fields[0]) == "ProductionSandbox"
    assert decoded(fields[2]) == "com.acme.app"
    assert decoded(fields[3]) == "7.2"
    assert decoded(fields[12]) == "2026-01-01T00:00:00Z"
    assert len(fields[5]) == 20 and len(fields[4]) > 0
    purchases = [dict(attributes(value)) for kind, value in receipt if kind == 17]
    assert [decoded(p[1703]) for p in purchases] == ["2000000000000101", "2000000000000102"]
    assert [decoded(p[1705]) for p in purchases] == ["2000000000000101", "2000000000000102"]
    assert [decoded(p[1702]) for p in purchases] == ["pro.monthly", "coins.100"]
    assert all(decoded(p[1701]) == 1 for p in purchases)
    assert decoded(purchases[0][1704]) == "2025-12-31T23:59:00Z"
    assert decoded(purchases[0][1708]) == "2026-01-30T23:59:00Z"


def check_transactions_file(paystorm, pki):
    with tempfile.NamedTemporaryFile("w", suffix=".json") as file:
        json.dump([{"transactionId": "55", "originalTransactionId": "50", "productId": "gold",
                    "purchaseDate": 1767225600000, "revocationDate": 1767229200000, "type": "Non-Consumable"}], file)
        file.flush()
        der = mint(paystorm, pki, "--transactions", file.name, "--environment", "Production")
    receipt = attributes(check_envelope(der, pki))
    assert decoded(dict(receipt)[0]) == "Production"
    (purchase,) = [dict(attributes(value)) for kind, value in receipt if kind == 17]
    assert decoded(purchase[1703]) == "55" and decoded(purchase[1705]) == "50"
    assert decoded(purchase[1712]) == "2026-01-01T01:00:00Z"
    assert decoded(purchase[1708]) == ""


class LoopbackHTTPS(http.client.HTTPSConnection):
    """HTTPS to 127.0.0.1 under another host name, as a hosts entry would map Apple's host to loopback."""

    def connect(self):
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def verify_receipt(pki, port, host, receipt):
    context = ssl.create_default_context(cafile=f"{pki}/root.pem")
    connection = LoopbackHTTPS(host, port, context=context, timeout=10)
    body = json.dumps({"receipt-data": base64.b64encode(receipt).decode(), "exclude-old-transactions": True})
    connection.request("POST", "/verifyReceipt", body=body, headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    assert response.status == 200, response.status
    return json.loads(response.read())


def check_verify_receipt(paystorm, pki, port):
    receipt = mint(paystorm, pki, "--purchase", "pro.monthly:2000000000000201")
    sandbox = verify_receipt(pki, port, "sandbox.itunes.apple.com", receipt)
    assert sandbox["status"] == 0 and sandbox["environment"] == "Sandbox", sandbox
    assert [item["transaction_id"] for item in sandbox["receipt"]["in_app"]] == ["2000000000000201"]
    assert sandbox["latest_receipt_info"][0]["expires_date_ms"].isdigit()
    production = verify_receipt(pki, port, "buy.itunes.apple.com", receipt)
    assert production["status"] == 21007, production


# verifyReceipt's status for the receipt of each forgery (`paystorm mint receipt --forge`), posted to the sandbox
# host: a receipt genuinely signed for another bundle is valid, one for Production is sent back to production.
FORGED_STATUS = {
    "bad-signature": 21003, "alg-es384": 21003, "alg-none": 21003, "chain-2": 21003, "chain-4": 21003,
    "base64url-x5c": 21003, "missing-leaf-oid": 21003, "missing-intermediate-oid": 21003, "critical-oids": 21003,
    "untrusted-root": 21003, "wrong-bundle": 0, "wrong-environment": 21008, "signed-date-before-chain": 21003,
    "dates-in-seconds": 21003, "tampered-payload": 21003, "forged-inner-transaction": 21003,
}


def check_forged_receipts(paystorm, pki, port):
    """Every forged receipt is still SignedData that asn1crypto reads, listing its purchase (ten of it when
    tampered), with the certificates its chain forgery attaches; verifyReceipt answers each as Apple would."""
    for forgery, status in FORGED_STATUS.items():
        der = mint(paystorm, pki, "--purchase", "coins.100:2000000000000301", "--product-type", "consumable",
                   "--forge", forgery)
        signed = cms.ContentInfo.load(der, strict=True)["content"]
        certificates = {"chain-2": 1, "chain-4": 4}.get(forgery, 3)
        assert len(signed["certificates"]) == certificates, (forgery, len(signed["certificates"]))
        receipt = attributes(signed["encap_content_info"]["content"].native)
        (purchase,) = [dict(attributes(value)) for kind, value in receipt if kind == 17]
        assert decoded(purchase[1703]) == "2000000000000301", forgery
        assert decoded(purchase[1701]) == (10 if forgery == "tampered-payload" else 1), forgery
        if port is not None:
            answer = verify_receipt(pki, port, "sandbox.itunes.apple.com", der)
            assert answer["status"] == status, (forgery, answer)


def main():
    paystorm, pki = sys.argv[1], sys.argv[2]
    check_receipt(paystorm, pki)
    check_transactions_file(paystorm, pki)
    port = int(sys.argv[3]) if len(sys.argv) > 3 else None
    if port is not None:
        check_verify_receipt(paystorm, pki, port)
    check_forged_receipts(paystorm, pki, port)


if __name__ == "__main__":
    main()
