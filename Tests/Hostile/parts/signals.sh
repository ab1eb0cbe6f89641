#!/usr/bin/env bash
# Signals at each phase: SIGINT, SIGTERM and SIGHUP stop PayStorm within 2 s with exit 130, 143 or 129, the report
# written and marked interrupted, and nothing PayStorm started left running (no `ledger serve`, no command, no
# ledger.db-wal); a second signal exits at once. Loopback only; about a minute and a half.
#
# Usage: Tests/Hostile/parts/signals.sh [NAME_PATTERN]
# Needs $PAYSTORM (default .build/debug/paystorm) and python3 (standard library). Prints `PASS <name>` or
# `FAIL <name>: <why>` per case.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
PAYSTORM="${PAYSTORM:-$root/.build/debug/paystorm}"
pattern="${1:-*}"
work="$(mktemp -d)"
server_pid=""
cleanup() {
    [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null
    # Whatever a failed case left running of its own (its marker is in the work folder's name).
    for pid in $(pgrep -f -- "$work" || true); do kill -9 "$pid" 2>/dev/null; done
    rm -rf "$work"
}
trap cleanup EXIT

# The target: 200 to deliveries, 429 `Retry-After: 99999` to wallet reads (logged to $work/probed), and /hang
# reads the request and never answers (logged to $work/hung).
cat >"$work/server.py" <<'PY'
import os, sys, threading, time
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
work = sys.argv[1]
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args): pass
    def do_any(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {}
        if self.path.startswith("/hang"):
            open(work + "/hung", "a").write("x\n")
            time.sleep(300)
            return
        if self.path.startswith("/wallet/"):
            open(work + "/probed", "a").write("x\n")
            status, headers = 429, {"Retry-After": "99999"}
        else:
            status = 200
        self.send_response(status)
        for name, value in headers.items(): self.send_header(name, value)
        self.send_header("Content-Length", "0")
        self.end_headers()
    do_GET = do_POST = do_PUT = do_any
server = ThreadingHTTPServer(("127.0.0.1", 0), H)
server.daemon_threads = True
open(work + "/port.tmp", "w").write(str(server.server_address[1]))
os.rename(work + "/port.tmp", work + "/port")
threading.Timer(600, server.shutdown).start()
server.serve_forever()
PY
python3 "$work/server.py" "$work" &
server_pid=$!
for _ in $(seq 100); do [[ -s "$work/port" ]] && break; sleep 0.1; done
url="http://127.0.0.1:$(cat "$work/port")"
"$PAYSTORM" pki init "$work/pki" >/dev/null || { echo "FAIL signals-setup: pki init failed"; exit 1; }

# A command that hangs, with the case's marker in its arguments (so it can be found, and found gone), and
# ARGUMENT after it.
hang() { printf '"python3", "-c", "import time; time.sleep(300)", "%s%s"' "$work/$1-command" "${2:-}"; }
# The same, ignoring SIGTERM.
stubborn() {
    printf '"python3", "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(300)", "%s"' \
        "$work/$1-command"
}

# profile NAME [SETTLE [SECONDS [TARGET_EXTRA [TOP_EXTRA]]]]: a profile against the server (SECONDS, default 2,
# of purchases, final probe only), with the extras spliced into its target and its top level, written to
# $work/NAME.json5.
profile() {
    cat >"$work/$1.json5" <<EOF
{ name: "signals", seed: 5,
  target: {
    webhook: { url: "$url/hooks", body: { payload: "{signedPayload}" } },
    deviceDelivery: { url: "$url/device/{appAccountToken}", body: { jws: "{signedTransaction}" } },
    probe: { kind: "http", url: "$url/wallet/{appAccountToken}", intervalSeconds: 0 },
    requestTimeoutSeconds: 2,
    ${4:-}
  },
  catalog: { products: [{ id: "c", type: "consumable", priceMilli: 990 }] },
  population: { accounts: 10 }, actionMix: { consumable: 1 },
  schedule: [{ kind: "constant", rate: 5, seconds: ${3:-2} }],
  settleSeconds: ${2:-0},
  ${5:-}
}
EOF
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# ready CASE CONDITION: waits (30 s at most) until CONDITION holds while the case's paystorm runs.
#   file:PATH   PATH exists          output:TEXT  its output contains TEXT
#   process:M   a process whose arguments contain M runs
ready() {
    local name="$1" condition="$2" pid="$3"
    for _ in $(seq 300); do
        kill -0 "$pid" 2>/dev/null || return 1
        case "$condition" in
            file:*) [[ -e "${condition#file:}" ]] && return 0 ;;
            output:*) grep -qF -- "${condition#output:}" "$work/$name.out" && return 0 ;;
            process:*) pgrep -f -- "${condition#process:}" >/dev/null && return 0 ;;
        esac
        sleep 0.1
    done
    return 1
}

# Kills what the last case left running of its own (the fixture server aside), so the next starts clean.
sweep() {
    for pid in $(pgrep -f -- "$work/" | grep -vx "$server_pid"); do kill -9 "$pid" 2>/dev/null; done
}

# case NAME SIGNAL CONDITION REPORTS ARGS...: runs `paystorm ARGS` (its cwd and output under $work), waits for
# CONDITION, sends SIGNAL (or `INT+TERM`, two at once), and checks the exit code within 2 s, the report under
# REPORTS (unless -), and that nothing the case started still runs.
case_() {
    local name="$1" signal="$2" condition="$3" reports="$4"
    shift 4
    # shellcheck disable=SC2053
    [[ "$name" == $pattern ]] || return 0
    local expected
    # Two signals sent at once may be handled in either order: the code is the first one's.
    case "$signal" in INT) expected=130 ;; INT+TERM) expected='130|143' ;; TERM) expected=143 ;; HUP) expected=129 ;; esac
    "$PAYSTORM" "$@" >"$work/$name.out" 2>&1 </dev/null &
    local pid=$! why=""
    if ! ready "$name" "$condition" "$pid"; then
        kill -9 "$pid" 2>/dev/null
        echo "FAIL $name: never reached '$condition'; output: $(head -c 300 "$work/$name.out" | tr '\n' ' ')"
        sweep
        return
    fi
    sleep 0.3
    local sent
    sent="$(now_ms)"
    if [[ "$signal" == INT+TERM ]]; then
        kill -INT "$pid"
        kill -TERM "$pid"
    else
        kill "-$signal" "$pid"
    fi
    while kill -0 "$pid" 2>/dev/null && (($(now_ms) - sent < 5000)); do sleep 0.02; done
    local took=$(($(now_ms) - sent))
    if kill -0 "$pid" 2>/dev/null; then
        kill -9 "$pid"
        wait "$pid" 2>/dev/null
        echo "FAIL $name: still running 5 s after SIG$signal"
        sweep
        return
    fi
    local code=0
    wait "$pid" || code=$?
    [[ "$code" =~ ^($expected)$ ]] || why="exit $code, expected $expected"
    expected="$code"
    ((took < 2000)) || why="${why:+$why; }stopped ${took} ms after the signal"
    if [[ "$reports" != - ]]; then
        local summary
        summary="$(ls -d "$reports"/*/summary.json "$reports"/*/steps/*/summary.json 2>/dev/null | tail -1)"
        if [[ -z "$summary" ]]; then
            why="${why:+$why; }no summary.json"
        else
            grep -q '"interrupted" : true' "$summary" || why="${why:+$why; }summary.json not marked interrupted"
            grep -q "\"exitCode\" : $expected" "$summary" || why="${why:+$why; }summary.json exit code is not $expected"
            [[ -e "$(dirname "$summary")/junit.xml" && -e "$(dirname "$summary")/report.html" ]] \
                || why="${why:+$why; }no junit.xml or report.html"
        fi
        if ls "$reports"/*/ledger.db-wal "$reports"/*/steps/*/ledger.db-wal >/dev/null 2>&1; then
            why="${why:+$why; }ledger.db-wal left behind"
        fi
    fi
    # Children stop with PayStorm: give an orphaned ledger its chance to see its standard input end.
    sleep 0.5
    local left
    left="$(pgrep -af -- "$work/" | grep -v "^$server_pid " | head -2 | cut -c1-160 | tr '\n' ' ')"
    [[ -z "$left" ]] || why="${why:+$why; }left running: $left"
    sweep
    if [[ -z "$why" ]]; then
        echo "PASS $name ($took ms)"
    else
        echo "FAIL $name: $why; output: $(tail -c 300 "$work/$name.out" | tr '\n' ' ')"
    fi
}

run_case() {
    local name="$1" signal="$2" condition="$3"
    shift 3
    case_ "$name" "$signal" "$condition" "$work/$name" run "$@" --plain --reports "$work/$name"
}

for signal in INT TERM HUP; do
    lower="$(tr '[:upper:]' '[:lower:]' <<<"$signal")"
    # Setup: the accounts' provisioning command hangs.
    profile "setup-$lower" 0 2 "accounts: { provision: [$(hang "setup-$lower")], timeoutSeconds: 600 },"
    run_case "signal-setup-$lower" "$signal" "process:$work/setup-$lower-command" \
        "$work/setup-$lower.json5" --pki "$work/pki"
    # Settle: two minutes of it.
    profile "settle-$lower" 120
    run_case "signal-settle-$lower" "$signal" "output:settling for" "$work/settle-$lower.json5" --pki "$work/pki"
    # Final probe: the back-off of a probe answered 429 with Retry-After: 99999.
    profile "backoff-$lower"
    run_case "signal-final-probe-backoff-$lower" "$signal" "file:$work/probed" \
        "$work/backoff-$lower.json5" --pki "$work/pki"
    rm -f "$work/probed"
    # Target check against a target that never answers.
    profile "check-$lower"
    sed -i "s|$url/hooks|$url/hang|; s|$url/device|$url/hang|" "$work/check-$lower.json5"
    case_ "signal-target-check-hanging-$lower" "$signal" "file:$work/hung" - \
        target check "$work/check-$lower.json5" --pki "$work/pki"
    rm -f "$work/hung"
    # load against the same.
    case_ "signal-load-hanging-$lower" "$signal" "file:$work/hung" - \
        load --url "$url/hang" --rate 5 --duration 60s --timeout 100s --quiet
    rm -f "$work/hung"
done

# The schedule, on the embedded ledger (its ledger serve stops cleanly, no WAL left).
run_case signal-schedule-embedded-int INT "file:$work/signal-schedule-embedded-int/latest" \
    "$root/Profiles/smoke.json5" --rate 2 --duration 120
run_case signal-schedule-embedded-hup HUP "file:$work/signal-schedule-embedded-hup/latest" \
    "$root/Profiles/smoke.json5" --rate 2 --duration 120
# A command probe that hangs in the final probe.
profile probe-command 0 1
sed -i "s|probe: { kind: \"http\", url: \"$url/wallet/{appAccountToken}\", intervalSeconds: 0 }|probe: { kind: \"command\", command: [$(hang probe-command -{appAccountToken})], timeoutSeconds: 600, intervalSeconds: 0 }|" \
    "$work/probe-command.json5"
run_case signal-final-probe-command-term TERM "process:$work/probe-command-command" \
    "$work/probe-command.json5" --pki "$work/pki"
# The same killed with SIGKILL: PayStorm can do nothing, and the command still dies with it.
if [[ "sigkill-final-probe-command" == $pattern ]]; then
    "$PAYSTORM" run "$work/probe-command.json5" --pki "$work/pki" --reports "$work/sigkill" >/dev/null 2>&1 &
    pid=$!
    if ! ready sigkill-final-probe-command "process:$work/probe-command-command" "$pid"; then
        echo "FAIL sigkill-final-probe-command: the probe command never started"
    else
        kill -9 "$pid"
        sent="$(now_ms)"
        while pgrep -f -- "$work/probe-command-command" >/dev/null && (($(now_ms) - sent < 2000)); do sleep 0.02; done
        if pgrep -f -- "$work/probe-command-command" >/dev/null; then
            echo "FAIL sigkill-final-probe-command: the probe command outlived PayStorm"
        else
            echo "PASS sigkill-final-probe-command ($(($(now_ms) - sent)) ms)"
        fi
    fi
    wait "$pid" 2>/dev/null
    sweep
fi
# A target restart whose start command hangs, ignoring SIGTERM.
profile restart 0 4 "" "faults: { targetRestart: { count: 1, downSeconds: 0, startTimeoutSeconds: 600,
  killCommand: [\"true\"], startCommand: [$(stubborn restart)] } },"
run_case signal-restart-in-progress-int INT "process:$work/restart-command" "$work/restart.json5" --pki "$work/pki"
# A capacity step, and the detect matrix, on embedded ledgers.
case_ signal-capacity-step-term TERM "process:ledger serve --db $work/signal-capacity-step-term" \
    "$work/signal-capacity-step-term" \
    capacity "$root/Profiles/smoke.json5" --slo "p99 < 10s" --step-seconds 30 --reports "$work/signal-capacity-step-term"
summary="$(ls "$work"/signal-capacity-step-term/*/capacity.json 2>/dev/null | head -1)"
if [[ "signal-capacity-outcome" == $pattern ]]; then
    if [[ -n "$summary" ]] && grep -q '"outcome" : "interrupted"' "$summary" \
        && ! grep -q "every step met every SLO" "$work/signal-capacity-step-term.out"; then
        echo "PASS signal-capacity-outcome"
    else
        echo "FAIL signal-capacity-outcome: capacity.json outcome is not 'interrupted' ($summary)"
    fi
fi
case_ signal-detect-matrix-hup HUP "process:ledger serve --db $work/signal-detect-matrix-hup" \
    "$work/signal-detect-matrix-hup" \
    detect "$root/Profiles/detect.json5" --seeds 1 --reports "$work/signal-detect-matrix-hup"
# A second signal right after the first: exits at once, with the first one's code (it need not finish the
# report), its ledger still stopped cleanly.
case_ signal-second-signal INT+TERM "file:$work/signal-second-signal/latest" - \
    run "$root/Profiles/smoke.json5" --rate 2 --duration 120 --reports "$work/signal-second-signal"
if [[ "signal-second-signal-ledger" == $pattern ]]; then
    if ls "$work"/signal-second-signal/*/ledger.db-wal >/dev/null 2>&1; then
        echo "FAIL signal-second-signal-ledger: ledger.db-wal left behind"
    else
        echo "PASS signal-second-signal-ledger"
    fi
fi
exit 0
