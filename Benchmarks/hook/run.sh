#!/usr/bin/env bash
# The request hook's cost (issue 45, item 1): requests per second through the example HMAC-SHA256 hook
# (Profiles/examples/request-hook/sign.py, Python's standard library), measured two ways.
#   1. The hook alone: LINES request lines like a run's device deliveries (a 3 KB body each) piped through it,
#      answers per second of wall time.
#   2. `paystorm run` against nginx `return 200` at RATE deliveries per second for SECONDS (no probe, no
#      faults, 2,000 provisioned accounts, every role through the hook), beside the same run without the hook:
#      sent/s, p50 and p99 from the intended time, and the hook's own p50 and p99 from summary.json.
# nginx gets the last core. Not run in CI.
#
# Usage: [PAYSTORM=path] Benchmarks/hook/run.sh [RATE=1000] [SECONDS=15] [LINES=100000]
set -euo pipefail
source "$(dirname "$0")/../load/common.sh"
cd "$ROOT"
RATE="${1:-1000}"
RUN_SECONDS="${2:-15}"
LINES="${3:-100000}"
ensure_paystorm
HOOK="$ROOT/Profiles/examples/request-hook"

echo "# $(uname -srm), $(nproc) cores, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $PAYSTORM, rate $RATE/s for $RUN_SECONDS s; $LINES lines through the hook alone"

python3 - "$LINES" >"$WORK/lines.jsonl" <<'PY'
import json, sys
body = json.dumps({"jws": "e" * 3000, "userId": "user-00000000"})
for i in range(int(sys.argv[1])):
    print(json.dumps({"id": i, "role": "deviceDelivery", "kind": "device", "method": "POST",
                      "url": "http://127.0.0.1:8000/api/purchases", "headers": {"Content-Type": "application/json"},
                      "body": body, "account": {"appAccountToken": "A", "id": "user-%08d" % (i % 2000),
                                                "secret": "%032x" % (i % 2000)},
                      "transaction": {"id": str(i), "productId": "coins.100"}}))
PY
start=$(date +%s.%N)
python3 "$HOOK/sign.py" <"$WORK/lines.jsonl" >"$WORK/answers.jsonl"
end=$(date +%s.%N)
python3 -c "print(f'hook alone: {$LINES} answers in {$end - $start:.2f} s: {$LINES / ($end - $start):,.0f} answers/s')"

start_nginx "$(( $(nproc) - 1 ))"
"$PAYSTORM" pki init "$WORK/pki" >/dev/null
for mode in without with; do
    hook=""
    [[ $mode == with ]] && hook="requestHook: [\"python3\", \"$HOOK/sign.py\"],"
    cat >"$WORK/$mode.json5" <<JSON5
{
  name: "hook-$mode", seed: 1,
  target: {
    webhookURL: "http://127.0.0.1:$NGINX_PORT/notifications",
    deviceURL: "http://127.0.0.1:$NGINX_PORT/transactions",
    requestTimeoutSeconds: 10,
    accounts: { provision: ["python3", "$HOOK/provision.py"] },
    $hook
  },
  catalog: { products: [{ id: "coins.100", type: "consumable", priceMilli: 990 }] },
  population: { accounts: 2000 },
  actionMix: { consumable: 1 },
  schedule: [{ kind: "constant", rate: $RATE, seconds: $RUN_SECONDS }],
  settleSeconds: 1,
}
JSON5
    "$PAYSTORM" run "$WORK/$mode.json5" --pki "$WORK/pki" --quiet --no-history --reports "$WORK/reports-$mode" \
        >"$WORK/run-$mode.txt" 2>&1 || true
    [[ -f "$WORK/reports-$mode/latest/summary.json" ]] || { cat "$WORK/run-$mode.txt" >&2; exit 1; }
    python3 - "$WORK/reports-$mode/latest/summary.json" "$RUN_SECONDS" "$mode" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
seconds, mode = float(sys.argv[2]), sys.argv[3]
latency = {(l["kind"], l["measure"]): l for l in report["latency"]}
ms = lambda entry, key: entry["micros"].get(key, 0) / 1000 if entry else 0
intended, hook = latency.get(("all", "intended")), latency.get(("all", "hook"))
requests = report["requests"]
line = (f"run {mode:<7} hook: sent {requests['sent']:,} of {requests['intended']:,} ({requests['sent'] / seconds:,.0f}/s), "
        f"missed {requests['missed']}, p50 {ms(intended, 'p50'):.1f} ms, p99 {ms(intended, 'p99'):.1f} ms")
if hook:
    line += f"; hook p50 {ms(hook, 'p50'):.1f} ms, p99 {ms(hook, 'p99'):.1f} ms over {hook['count']:,} requests"
limit = report.get("harnessLimited")
print(line + (f"; harness-limited from {limit['fromSeconds']:.0f} s ({limit['reason']})" if limit else ""))
PY
done
