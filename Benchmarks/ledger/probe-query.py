#!/usr/bin/env python3
"""The probe's slowest query at soak scale, before and after the grants-by-transaction index (schema v3).

Builds the ledger's schema from Sources/ReferenceLedger/Schema.swift in memory, once with the migrations up to
v2 and once with all of them, fills both with the same transactions and grants spread over 5,000 accounts,
and times the owned-products query (`AccountQuery.owned`) for a few accounts. Prints the ratio: a probe must
not cost more as the database grows. Not run in CI.

Usage: Benchmarks/ledger/probe-query.py [TRANSACTIONS]   (default 300,000)
"""
import pathlib
import random
import re
import sqlite3
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCE = (ROOT / "Sources/ReferenceLedger/Schema.swift").read_text()
MIGRATION_LIST = re.search(r"static let migrations: \[String\] = \[\n(.*?)^    \]", SOURCE, re.S | re.M).group(1)
MIGRATIONS = re.findall(r'^        """\n(.*?)^        """', MIGRATION_LIST, re.S | re.M)
OWNED = re.search(r'static let owned = """\n(.*?)"""', SOURCE, re.S).group(1)
KINDS = ["Consumable", "Non-Consumable", "Non-Renewing Subscription", "Auto-Renewable Subscription"]


def database(migrations, count):
    db = sqlite3.connect(":memory:")
    for migration in migrations:
        db.executescript(migration)
    rng = random.Random(1)
    transactions, grants = [], []
    for i in range(count):
        account, tid = f"a{rng.randrange(5000)}", str(10**18 + i)
        transactions.append((tid, tid, account, "p", rng.choice(KINDS), 1, 0))
        grants.append(("k" + tid, tid, account, "p", 1, "webhook", 0))
    db.executemany(
        "INSERT INTO transactions (transaction_id, original_transaction_id, app_account_token, product_id,"
        " product_type, quantity, signed_date) VALUES (?, ?, ?, ?, ?, ?, ?)",
        transactions,
    )
    db.executemany(
        "INSERT INTO grants (grant_key, transaction_id, app_account_token, product_id, quantity, source,"
        " granted_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        grants,
    )
    return db


def per_account(db, accounts=10):
    start = time.perf_counter()
    for a in range(accounts):
        db.execute(OWNED, (f"a{a}", "Non-Consumable", "Non-Renewing Subscription")).fetchall()
    return (time.perf_counter() - start) / accounts


count = int(sys.argv[1]) if len(sys.argv) > 1 else 300_000
before = per_account(database(MIGRATIONS[:2], count))
after = per_account(database(MIGRATIONS, count))
print(f"{count:,} transactions over 5,000 accounts: owned-products query {before * 1000:.2f} ms per account at "
      f"schema v2, {after * 1000:.3f} ms at v{len(MIGRATIONS)}: {before / after:,.0f}x; "
      f"5,000 probes {before * 5000:.0f} s vs {after * 5000:.1f} s")
