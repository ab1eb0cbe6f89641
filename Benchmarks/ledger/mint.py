#!/usr/bin/env python3
"""Mints a test PKI (root, intermediate and leaf with Apple's marker OIDs) and N signed DID_RENEW webhook
bodies (outer payload + nested signedTransactionInfo + signedRenewalInfo: 3 ES256 JWS each) for the ledger
benchmark. Everything is generated at run time into OUT_DIR; nothing is committed."""
import base64, datetime, json, sys, uuid
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID

out_dir, count, bundle_id = sys.argv[1], int(sys.argv[2]), sys.argv[3]
now = datetime.datetime.now(datetime.timezone.utc)
LEAF_OID = x509.ObjectIdentifier("1.2.840.113635.100.6.11.1")
INTERMEDIATE_OID = x509.ObjectIdentifier("1.2.840.113635.100.6.2.1")


def certificate(name, key, issuer_name, issuer_key, ca, marker):
    builder = (x509.CertificateBuilder()
               .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
               .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer_name)]))
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(days=400))
               .not_valid_after(now + datetime.timedelta(days=730))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False))
    if issuer_key is not key:
        builder = builder.add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False)
    usage = x509.KeyUsage(digital_signature=not ca, content_commitment=False, key_encipherment=False,
                          data_encipherment=False, key_agreement=False, key_cert_sign=ca, crl_sign=ca,
                          encipher_only=False, decipher_only=False)
    builder = builder.add_extension(usage, critical=True)
    if marker is not None:
        builder = builder.add_extension(x509.UnrecognizedExtension(marker, b"\x05\x00"), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


root_key, intermediate_key, leaf_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
root = certificate("PayStorm Bench Root", root_key, "PayStorm Bench Root", root_key, True, None)
intermediate = certificate("PayStorm Bench Intermediate", intermediate_key, "PayStorm Bench Root", root_key,
                           True, INTERMEDIATE_OID)
leaf = certificate("PayStorm Bench Leaf", leaf_key, "PayStorm Bench Intermediate", intermediate_key, False,
                   LEAF_OID)
with open(f"{out_dir}/root.der", "wb") as handle:
    handle.write(root.public_bytes(serialization.Encoding.DER))

x5c = [base64.b64encode(c.public_bytes(serialization.Encoding.DER)).decode() for c in (leaf, intermediate, root)]


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


header = b64url(json.dumps({"alg": "ES256", "x5c": x5c}, separators=(",", ":")).encode())


def sign(payload):
    signing_input = header + "." + b64url(json.dumps(payload, separators=(",", ":")).encode())
    r, s = decode_dss_signature(leaf_key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
    return signing_input + "." + b64url(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


now_ms = int(now.timestamp() * 1000)
with open(f"{out_dir}/bodies.jsonl", "w") as bodies:
    for index in range(count):
        original = str(2_000_000_000 + index)
        transaction = str(3_000_000_000 + index)
        token = str(uuid.uuid4())
        tx = {"transactionId": transaction, "originalTransactionId": original, "bundleId": bundle_id,
              "environment": "Sandbox", "productId": "bench.monthly", "type": "Auto-Renewable Subscription",
              "appAccountToken": token, "purchaseDate": now_ms - 1000, "originalPurchaseDate": now_ms - 86_400_000,
              "expiresDate": now_ms + 2_592_000_000, "quantity": 1, "signedDate": now_ms,
              "inAppOwnershipType": "PURCHASED", "transactionReason": "RENEWAL", "storefront": "USA",
              "storefrontId": "143441", "price": 9990, "currency": "USD"}
        renewal = {"originalTransactionId": original, "autoRenewProductId": "bench.monthly",
                   "productId": "bench.monthly", "autoRenewStatus": 1, "environment": "Sandbox",
                   "signedDate": now_ms, "renewalDate": now_ms + 2_592_000_000}
        notification = {"notificationType": "DID_RENEW", "notificationUUID": str(uuid.uuid4()),
                        "version": "2.0", "signedDate": now_ms,
                        "data": {"bundleId": bundle_id, "environment": "Sandbox", "bundleVersion": "1",
                                 "signedTransactionInfo": sign(tx), "signedRenewalInfo": sign(renewal),
                                 "status": 1}}
        bodies.write(json.dumps({"signedPayload": sign(notification)}, separators=(",", ":")) + "\n")
