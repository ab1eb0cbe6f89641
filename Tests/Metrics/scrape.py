"""Runs a short `paystorm run --metrics-listen`, scrapes GET /metrics during the run, and checks the text
with prometheus_client's OpenMetrics parser (strict: one bad line and it raises)."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

from prometheus_client.openmetrics.parser import text_string_to_metric_families

PROFILE = """
{ name: "metrics", seed: 3,
  target: { embeddedLedger: true, bundleId: "com.example.paystorm", environment: "Sandbox" },
  catalog: { products: [
    { id: "coins.100", type: "consumable", priceMilli: 990 },
    { id: "pro.unlock", type: "nonConsumable", priceMilli: 4990 } ] },
  population: { accounts: 20, devicesPerAccount: 1 },
  actionMix: { consumable: 2, nonConsumable: 1, refund: 0.5 },
  schedule: [{ kind: "constant", rate: 20, seconds: 5 }],
  faults: { forgery: { probability: 0.2 } },
  settleSeconds: 1 }
"""


def fail(message):
    print("metrics: FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def total(text, family_name, sample_name):
    return sum(s.value for f in text_string_to_metric_families(text) if f.name == family_name
               for s in f.samples if s.name == sample_name)


def sends(text):
    return total(text, "paystorm_sends", "paystorm_sends_total")


def checks(text):
    return total(text, "paystorm_invariant_checks", "paystorm_invariant_checks_total")


def probe_checks(text):
    """Checks a probe made (no-double-grant is judged only on what a probe read; others, such as
    no-lost-notification, are judged on the target's answers alone)."""
    return sum(s.value for f in text_string_to_metric_families(text) if f.name == "paystorm_invariant_checks"
               for s in f.samples if s.name == "paystorm_invariant_checks_total"
               and s.labels.get("invariant") == "no-double-grant")


def main(binary, work):
    profile = os.path.join(work, "metrics.json5")
    with open(profile, "w") as f:
        f.write(PROFILE)
    port = free_port()
    run = subprocess.Popen(
        [binary, "run", profile, "--quiet", "--no-history", "--reports", os.path.join(work, "reports"),
         "--metrics-listen", "127.0.0.1:%d" % port],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    scraped, content_type = None, None
    # Bounded: at most 60 scrapes, 30 s, and only while the run is going.
    deadline = time.monotonic() + 30
    for _ in range(60):
        if time.monotonic() > deadline or run.poll() is not None:
            break
        time.sleep(0.5)
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=2) as response:
                body = response.read().decode()
                content_type = response.headers.get("Content-Type")
        except OSError:
            continue  # not listening yet
        if sends(body) > 0:
            scraped = body
            # Keep scraping until the safety probes have checked something (every 2 s on the embedded ledger they
            # read the accounts a refund or a forgery touched).
            if probe_checks(body) > 0:
                break
    try:
        output, _ = run.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        run.kill()
        fail("the run did not end within 90 s")
    if scraped is None:
        fail("no scrape during the run showed a send; run output:\n" + output)
    if not content_type or not content_type.startswith("application/openmetrics-text; version=1.0.0"):
        fail("Content-Type is %r" % content_type)
    if not scraped.endswith("# EOF\n"):
        fail("the exposition does not end with # EOF")
    families = {f.name: f for f in text_string_to_metric_families(scraped)}
    for name, kind in [("paystorm_sends", "counter"), ("paystorm_results", "counter"),
                       ("paystorm_latency_seconds", "histogram"), ("paystorm_in_flight", "gauge"),
                       ("paystorm_late", "counter"), ("paystorm_missed", "counter"), ("paystorm_resent", "counter"),
                       ("paystorm_invariant_checks", "counter"), ("paystorm_violations", "counter"),
                       ("paystorm_arrivals", "counter")]:
        if name not in families:
            fail("family %s missing; families: %s" % (name, sorted(families)))
        if families[name].type != kind:
            fail("family %s is a %s, not a %s" % (name, families[name].type, kind))
    webhook_results = [s for s in families["paystorm_results"].samples if s.labels.get("kind") == "webhook"]
    if not any(s.labels.get("class") == "2xx" and s.value > 0 for s in webhook_results):
        fail("no 2xx webhook result: %s" % webhook_results)
    buckets = [s for s in families["paystorm_latency_seconds"].samples
               if s.name.endswith("_bucket") and s.labels["kind"] == "webhook" and s.labels["measure"] == "intended"]
    counts = [s.value for s in buckets]
    if not counts or counts != sorted(counts) or buckets[-1].labels["le"] != "+Inf" or counts[-1] <= 0:
        fail("webhook latency buckets are not cumulative up to +Inf: %s" % buckets)
    passed = {s.labels["invariant"]: s.value for s in families["paystorm_invariant_checks"].samples
              if s.labels["outcome"] == "passed"}
    if passed.get("no-double-grant", 0) <= 0:
        fail("no passed no-double-grant check was served during the run: %s" % passed)
    if run.returncode not in (0, 2):
        fail("the run exited %d:\n%s" % (run.returncode, output))
    summary = json.load(open(os.path.join(work, "reports", "latest", "summary.json")))
    print("metrics: scraped %d families at %d sends and %d checks; run verdict %s"
          % (len(families), sends(scraped), checks(scraped), summary.get("verdict")))


if __name__ == "__main__":
    # The folder goes also when a check fails (fail() raises SystemExit through the with).
    with tempfile.TemporaryDirectory(prefix="paystorm-metrics-") as folder:
        main(sys.argv[1], folder)

