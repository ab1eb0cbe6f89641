#!/usr/bin/env bash
# Pure send rate: PayStorm vs wrk on one core each, against loopback nginx `return 200`,
# same connection count, same ~3 KB POST body. PayStorm runs closed loop (--users N, no think
# time), which is wrk's model, so both measure the fastest request loop. Each round also runs
# PayStorm with --libcurl-transfers (HTTP/1.1 as libcurl transfers instead of PayStorm's framing).
# Usage: Benchmarks/load/vs-wrk.sh [CONNECTIONS=32] [SECONDS=10] [ROUNDS=3]
source "$(dirname "$0")/common.sh"
CONNECTIONS="${1:-32}"
SECONDS_RUN="${2:-10}"
ROUNDS="${3:-3}"
ensure_paystorm
make_body
start_nginx 0
URL="http://127.0.0.1:$NGINX_PORT/"
cat >"$WORK/post.lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = io.open("$WORK/body.json", "rb"); wrk.body = f:read("*a"); f:close()
LUA
# Alternate the two tools ROUNDS times and compare medians: the machine may be shared.
wrk_rates=()
ps_rates=()
curl_rates=()
for round in $(seq "$ROUNDS"); do
    wrk_out="$(taskset -c 1 wrk -t1 -c"$CONNECTIONS" -d"${SECONDS_RUN}s" -s "$WORK/post.lua" "$URL")"
    wrk_rates+=("$(awk '/Requests\/sec/ {print $2}' <<<"$wrk_out")")
    for variant in framed curl; do
        extra=()
        [[ "$variant" == curl ]] && extra=(--libcurl-transfers)
        taskset -c 1 "$PAYSTORM" load --url "$URL" --users "$CONNECTIONS" --duration "${SECONDS_RUN}s" \
            --connections "$CONNECTIONS" --body-file "$WORK/body.json" --header 'Content-Type: application/json' \
            --out "$WORK/ps" --quiet "${extra[@]}"
        rate="$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert s["totals"]["ok"] == s["totals"]["sent"], "non-2xx responses"; print(s["achievedRate"])' "$WORK/ps/summary.json")"
        if [[ "$variant" == curl ]]; then curl_rates+=("$rate"); else ps_rates+=("$rate"); fi
    done
    echo "round $round: wrk ${wrk_rates[-1]} req/s, paystorm ${ps_rates[-1]} req/s, paystorm --libcurl-transfers ${curl_rates[-1]} req/s"
done
echo "connections=$CONNECTIONS seconds=$SECONDS_RUN rounds=$ROUNDS body=$(stat -c %s "$WORK/body.json")B load=$(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "${wrk_rates[*]}" "${ps_rates[*]}" "${curl_rates[*]}" <<'PY'
import statistics, sys
wrk, ps, curl = (statistics.median(map(float, arg.split())) for arg in sys.argv[1:4])
print(f"median wrk                            {wrk:10.1f} req/s")
print(f"median paystorm                       {ps:10.1f} req/s")
print(f"median paystorm --libcurl-transfers   {curl:10.1f} req/s ({curl / wrk:.2f} of wrk)")
print(f"ratio paystorm/wrk = {ps / wrk:.2f} (target >= 0.8)")
PY
