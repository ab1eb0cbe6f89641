#!/usr/bin/env bash
# Pure send rate: PayStorm vs Locust FastHttpUser, one core each, loopback nginx `return 200`,
# same users/connections, same ~3 KB POST body. Installs locust into a venv on first use
# (LOCUST_VENV, default ~/.cache/paystorm-locust-venv).
# Usage: Benchmarks/load/vs-locust.sh [USERS=32] [SECONDS=10]
source "$(dirname "$0")/common.sh"
USERS="${1:-32}"
SECONDS_RUN="${2:-10}"
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
(cd "$WORK" && taskset -c 1 "$VENV/bin/locust" -f locustfile.py --headless -u "$USERS" -r "$USERS" \
    -t "${SECONDS_RUN}s" --host "$URL" --csv "$WORK/locust" --only-summary >/dev/null 2>&1) || true
locust_rate="$(python3 -c '
import csv, sys
for row in csv.DictReader(open(sys.argv[1])):
    if row["Name"] == "Aggregated":
        print(row["Requests/s"])' "$WORK/locust_stats.csv")"
taskset -c 1 "$PAYSTORM" load --url "$URL/" --users "$USERS" --duration "${SECONDS_RUN}s" \
    --connections "$USERS" --body-file "$WORK/body.json" --header 'Content-Type: application/json' \
    --out "$WORK/ps" --quiet
ps_rate="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["achievedRate"])' "$WORK/ps/summary.json")"
echo "users=$USERS seconds=$SECONDS_RUN"
echo "locust (FastHttpUser)  ${locust_rate} req/s"
echo "paystorm               ${ps_rate} req/s"
python3 -c "import sys; print(f'ratio paystorm/locust = {float(sys.argv[1])/float(sys.argv[2]):.1f} (target >= 10)')" "$ps_rate" "$locust_rate"
