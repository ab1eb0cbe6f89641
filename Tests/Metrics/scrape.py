"""Runs a short `paystorm run --metrics-listen` against a flawed embedded ledger, scrapes GET /metrics during the
run and during the linger after its report, and checks both formats with prometheus_client's parsers (strict:
one bad line and they raise): OpenMetrics when Accept asks for it, the classic Prometheus text otherwise. The
last scrape must agree with summary.json: violations in all and by invariant, the verdict, the requests."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics_families
from prometheus_client.parser import text_string_to_metric_families as classic_families

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

# What Prometheus sends: OpenMetrics first, the classic text format as a fallback.
PROMETHEUS_ACCEPT = ("application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
                     "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
LINGER_SECONDS = 6


def fail(message):
    print("metrics: FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def scrape(port, accept=None):
    """The body and Content-Type of one GET /metrics (OSError while the endpoint is not listening)."""
    request = urllib.request.Request("http://127.0.0.1:%d/metrics" % port)
    if accept:
        request.add_header("Accept", accept)
    with urllib.request.urlopen(request, timeout=2) as response:
        return response.read().decode(), response.headers.get("Content-Type")


def families(text, openmetrics):
    parse = openmetrics_families if openmetrics else classic_families
    return {f.name: f for f in parse(text)}


def values(family, sample_name, label=None):
    """label -> value of a family's samples named sample_name (the one unlabelled sample under None)."""
    return {s.labels.get(label) if label else None: s.value for s in family.samples if s.name == sample_name}


def total(found, family_name, sample_name):
    return sum(values(found[family_name], sample_name, "kind").values())


def check_types(found, where):
    for name, kind in [("paystorm_sends", "counter"), ("paystorm_results", "counter"),
                       ("paystorm_latency_seconds", "histogram"), ("paystorm_in_flight", "gauge"),
                       ("paystorm_late", "counter"), ("paystorm_missed", "counter"), ("paystorm_resent", "counter"),
                       ("paystorm_invariant_checks", "counter"), ("paystorm_violations", "counter"),
                       ("paystorm_invariant_violations", "counter"), ("paystorm_arrivals", "counter"),
                       ("paystorm_run_phase", "gauge"), ("paystorm_verdict", "gauge")]:
        if name not in found:
            fail("%s: family %s missing; families: %s" % (where, name, sorted(found)))
        if found[name].type != kind:
            fail("%s: family %s is a %s, not a %s" % (where, name, found[name].type, kind))


def check_live(body, content_type):
    """A scrape during the run: OpenMetrics as asked, with webhook results and cumulative latency buckets."""
    if not content_type or not content_type.startswith("application/openmetrics-text; version=1.0.0"):
        fail("asked for OpenMetrics, got Content-Type %r" % content_type)
    if not body.endswith("# EOF\n"):
        fail("the OpenMetrics exposition does not end with # EOF")
    found = families(body, openmetrics=True)
    check_types(found, "live OpenMetrics")
    webhook_results = [s for s in found["paystorm_results"].samples if s.labels.get("kind") == "webhook"]
    if not any(s.labels.get("class") == "2xx" and s.value > 0 for s in webhook_results):
        fail("no 2xx webhook result: %s" % webhook_results)
    buckets = [s for s in found["paystorm_latency_seconds"].samples
               if s.name.endswith("_bucket") and s.labels["kind"] == "webhook" and s.labels["measure"] == "intended"]
    counts = [s.value for s in buckets]
    if not counts or counts != sorted(counts) or buckets[-1].labels["le"] != "+Inf" or counts[-1] <= 0:
        fail("webhook latency buckets are not cumulative up to +Inf: %s" % buckets)
    return found


def scrape_live(run, port):
    """Scrapes (bounded: at most 60 times, 30 s, only while the run goes) until the safety probes have checked
    something; returns the last scrape that showed a send."""
    scraped = None
    deadline = time.monotonic() + 30
    for _ in range(60):
        if time.monotonic() > deadline or run.poll() is not None:
            break
        time.sleep(0.5)
        try:
            body, content_type = scrape(port, PROMETHEUS_ACCEPT)
        except OSError:
            continue  # not listening yet
        found = families(body, openmetrics=True)
        if total(found, "paystorm_sends", "paystorm_sends_total") > 0:
            scraped = (body, content_type)
            # Safety probes read the accounts a refund or a forgery touched every 2 s on the embedded ledger.
            if any(s.labels["invariant"] == "no-double-grant" and s.labels["outcome"] == "passed" and s.value > 0
                   for s in found["paystorm_invariant_checks"].samples):
                break
    return scraped


def scrape_final(run, port):
    """Scrapes (bounded: 120 times, 60 s) until the phase is `finished`, then once more in each format; returns
    the OpenMetrics and the classic text bodies, with their Content-Types."""
    deadline = time.monotonic() + 60
    for _ in range(120):
        if time.monotonic() > deadline or run.poll() is not None:
            break
        try:
            body, _ = scrape(port, PROMETHEUS_ACCEPT)
        except OSError:
            time.sleep(0.5)
            continue
        phase = values(families(body, openmetrics=True)["paystorm_run_phase"], "paystorm_run_phase", "phase")
        if phase.get("finished") == 1:
            return scrape(port, PROMETHEUS_ACCEPT), scrape(port)
        time.sleep(0.5)
    fail("the endpoint never served the phase finished before the run ended")


def check_final(found, summary, where):
    """The final scrape equals summary.json: violations in all and by invariant, the verdict, the requests."""
    violations_by = {i["name"]: i["violations"] for i in summary["invariants"]}
    expected_total = max(sum(violations_by.values()), len(summary["violations"]))
    served_total = values(found["paystorm_violations"], "paystorm_violations_total")[None]
    if served_total != expected_total:
        fail("%s: paystorm_violations_total is %s, summary.json has %s" % (where, served_total, expected_total))
    served_by = values(found["paystorm_invariant_violations"], "paystorm_invariant_violations_total", "invariant")
    for name, count in violations_by.items():
        if served_by.get(name) != count:
            fail("%s: %s has %s violations served, %s in summary.json" % (where, name, served_by.get(name), count))
    verdicts = values(found["paystorm_verdict"], "paystorm_verdict", "verdict")
    if verdicts != {v: (1 if v == summary["verdict"] else 0) for v in ("pass", "fail", "unknown")}:
        fail("%s: verdict gauges %s, summary.json's verdict is %s" % (where, verdicts, summary["verdict"]))
    requests = summary["requests"]
    for family, field in [("paystorm_sends", "sent"), ("paystorm_scheduled", "intended"),
                          ("paystorm_succeeded", "ok"), ("paystorm_missed", "missed"), ("paystorm_resent", "resent")]:
        served = total(found, family, family + "_total")
        if served != requests[field]:
            fail("%s: %s_total is %s over kinds, summary.json's requests.%s is %s"
                 % (where, family, served, field, requests[field]))
    return served_total


def main(binary, work):
    profile = os.path.join(work, "metrics.json5")
    with open(profile, "w") as f:
        f.write(PROFILE)
    port = free_port()
    # A ledger that trusts unverified transactions grants the forgeries: violations the final probe finds too.
    run = subprocess.Popen(
        [binary, "run", profile, "--quiet", "--no-history", "--reports", os.path.join(work, "reports"),
         "--flaw", "trust-unverified", "--metrics-listen", "127.0.0.1:%d" % port,
         "--metrics-linger", "%ds" % LINGER_SECONDS],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        live = scrape_live(run, port)
        final = scrape_final(run, port) if live else None
        output, _ = run.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        run.kill()
        fail("the run did not end within 90 s")
    except SystemExit:
        run.kill()
        raise
    if live is None:
        fail("no scrape during the run showed a send; run output:\n" + output)
    live_families = check_live(*live)
    (openmetrics_body, openmetrics_type), (classic_body, classic_type) = final
    if not classic_type or not classic_type.startswith("text/plain; version=0.0.4"):
        fail("without Accept, Content-Type is %r" % classic_type)
    if "# EOF" in classic_body or "# UNIT" in classic_body:
        fail("the classic text format has OpenMetrics-only lines")
    final_openmetrics = families(openmetrics_body, openmetrics=True)
    # The classic parser would read an OpenMetrics body's counters as untyped: check_types needs its own text.
    final_classic = families(classic_body, openmetrics=False)
    check_types(final_openmetrics, "final OpenMetrics")
    check_types(final_classic, "final Prometheus text")
    if run.returncode != 1:
        fail("the run with a flawed ledger exited %d, not 1 (violation):\n%s" % (run.returncode, output))
    if "metrics: the final values stay at http://127.0.0.1:%d/metrics for %d s" % (port, LINGER_SECONDS) not in output:
        fail("the run did not say how long the final values stay:\n" + output)
    summary = json.load(open(os.path.join(work, "reports", "latest", "summary.json")))
    violations = check_final(final_openmetrics, summary, "final OpenMetrics")
    check_final(final_classic, summary, "final Prometheus text")
    live_violations = values(live_families["paystorm_violations"], "paystorm_violations_total")[None]
    print("metrics: live scrape %d violations at %d sends; final scrapes (OpenMetrics and Prometheus text) %d "
          "violations at %d sends = summary.json; verdict %s"
          % (live_violations, total(live_families, "paystorm_sends", "paystorm_sends_total"), violations,
             summary["requests"]["sent"], summary["verdict"]))


if __name__ == "__main__":
    # The folder goes also when a check fails (fail() raises SystemExit through the with).
    with tempfile.TemporaryDirectory(prefix="paystorm-metrics-") as folder:
        main(sys.argv[1], folder)
