#!/usr/bin/env bash
# Pure send rate: PayStorm vs wrk on one core each, against loopback nginx `return 200`,
# same connection count, same ~3 KB POST body. PayStorm runs closed loop (--users N, no think
# time), which is wrk's model, so both measure the fastest request loop.
# Usage: Benchmarks/load/vs-wrk.sh [CONNECTIONS=32] [SECONDS=10]
source "$(dirname "$0")/common.sh"
CONNECTIONS="${1:-32}"
SECONDS_RUN="${2:-10}"
ensure_paystorm
make_body
start_nginx 0
URL="http://127.0.0.1:$NGINX_PORT/"
cat >"$WORK/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = io.open("$WORK/body.json", "rb"); wrk.body = f:read("*a"); f:close()
LUA
wrk_out="$(taskset -c 1 wrk -t1 -c"$CONNECTIONS" -d"${SECONDS_RUN}s" -s "$WORK/post.lua" "$URL")"
wrk_rate="$(awk '/Requests\/sec/ {print $2}' <<<"$wrk_out")"
taskset -c 1 "$PAYSTORM" load --url "$URL" --users "$CONNECTIONS" --duration "${SECONDS_RUN}s" \
    --connections "$CONNECTIONS" --body-file "$WORK/body.json" --header 'Content-Type: application/json' \
    --out "$WORK/ps" --quiet
ps_rate="$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["achievedRate"])' "$WORK/ps/summary.json")"
ps_ok="$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["totals"]["ok"], "ok of", s["totals"]["sent"])' "$WORK/ps/summary.json")"
echo "connections=$CONNECTIONS seconds=$SECONDS_RUN body=$(stat -c %s "$WORK/body.json")B"
echo "wrk       ${wrk_rate} req/s"
echo "paystorm  ${ps_rate} req/s ($ps_ok)"
python3 -c "import sys; print(f'ratio paystorm/wrk = {float(sys.argv[1])/float(sys.argv[2]):.2f} (target >= 0.8)')" "$ps_rate" "$wrk_rate"
