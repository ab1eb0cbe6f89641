# Shared helpers for the load benchmarks (sourced, not run).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PAYSTORM="${PAYSTORM:-$ROOT/.build/release/paystorm}"
WORK="$(mktemp -d)"
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

# The tools the benchmarks drive (command:package), installed with apt-get when missing.
ensure_tools() {
    local tool missing=()
    for tool in "$@"; do
        command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
    done
    (( ${#missing[@]} == 0 )) && return 0
    apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 ||
        { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "${missing[@]}" >/dev/null; }
}
ensure_tools wrk:wrk nginx:nginx-light

ensure_paystorm() {
    if [[ ! -x "$PAYSTORM" ]]; then
        (cd "$ROOT" && swift build -c release --product paystorm >/dev/null)
    fi
}

# Starts nginx (`return 200`) on a free loopback port, one worker pinned to CPU $1; sets NGINX_PORT.
start_nginx() {
    local cpu="$1"
    NGINX_PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
    mkdir -p "$WORK/nginx/logs"
    cat >"$WORK/nginx/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 1000000;
    client_body_buffer_size 16k;
    server {
        listen 127.0.0.1:$NGINX_PORT reuseport backlog=4096;
        location / { return 200 "ok"; }
    }
}
CONF
    taskset -c "$cpu" nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" -e "$WORK/nginx/logs/error.log" &
    PIDS+=($!)
    for _ in $(seq 50); do
        curl -s -o /dev/null "http://127.0.0.1:$NGINX_PORT/" && return 0
        sleep 0.1
    done
    echo "nginx did not start" >&2
    exit 1
}

# A ~3 KB JSON body like a signed notification.
make_body() {
    python3 -c 'import json; print(json.dumps({"signedPayload": "x" * 3000}), end="")' >"$WORK/body.json"
}
