#!/usr/bin/env bash
# Pure send rate: PayStorm vs Locust FastHttpUser, one core each, loopback nginx `return 200`,
# same users/connections, same ~3 KB POST body. Installs locust into a venv on first use
# (LOCUST_VENV, default ~/.cache/paystorm-locust-venv).
# Usage: Benchmarks/load/vs-locust.sh [USERS=32] [SECONDS=10] [ROUNDS=3]
source "$(dirname "$0")/common.sh"
USERS="${1:-32}"
SECONDS_RUN="${2:-10}"
ROUNDS="${3:-3}"
VENV="${LOCUST_VENV:-$HOME/.cache/paystorm-locust-venv}"
if [[ ! -x "$VENV/bin/locust" ]]; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q locust
fi
ensure_paystorm
make_body
start_nginx 0
URL="http://127.0.0.1:$NGINX_PORT"
cat >"$WORK/locustfile.py" <<PY
from locust import task
from locust.contrib.fasthttp import FastHttpUser

BODY = open("$WORK/body.json", "rb").read()

class Poster(FastHttpUser):
    @task
    def post(self):
        self.client.post("/", data=BODY, headers={"Content-Type": "application/json"})
PY
# Alternate the two tools ROUNDS times and compare medians: the machine may be shared.
locust_rates=()
ps_rates=()
for round in $(seq "$ROUNDS"); do
    rm -f "$WORK"/locust_*.csv
    (cd "$WORK" && taskset -c 1 "$VENV/bin/locust" -f locustfile.py --headless -u "$USERS" -r "$USERS" \
        -t "${SECONDS_RUN}s" --host "$URL" --csv "$WORK/locust" --only-summary >/dev/null 2>&1) || true
    locust_rates+=("$(python3 -c '
import csv, sys
for row in csv.DictReader(open(sys.argv[1])):
    if row["Name"] == "Aggregated":
        print(row["Requests/s"])' "$WORK/locust_stats.csv")")
    taskset -c 1 "$PAYSTORM" load --url "$URL/" --users "$USERS" --duration "${SECONDS_RUN}s" \
        --connections "$USERS" --body-file "$WORK/body.json" --header 'Content-Type: application/json' \
        --out "$WORK/ps" --quiet
    ps_rates+=("$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["achievedRate"])' "$WORK/ps/summary.json")")
    echo "round $round: locust ${locust_rates[-1]} req/s, paystorm ${ps_rates[-1]} req/s"
done
echo "users=$USERS seconds=$SECONDS_RUN rounds=$ROUNDS load=$(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "${locust_rates[*]}" "${ps_rates[*]}" <<'PY'
import statistics, sys
locust = statistics.median(map(float, sys.argv[1].split()))
ps = statistics.median(map(float, sys.argv[2].split()))
print(f"median locust (FastHttpUser)  {locust:10.1f} req/s")
print(f"median paystorm               {ps:10.1f} req/s")
print(f"ratio paystorm/locust = {ps / locust:.1f} (target >= 10)")
PY
