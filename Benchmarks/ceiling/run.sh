#!/usr/bin/env bash
# The run path's ceiling and overload behaviour (issue 11, item 1). Builds paystorm in release mode, starts
# nginx answering `return 200` on loopback (one worker; installed with apt-get when missing), measures the
# minting ceiling of the profile with `paystorm bench ceiling` in the same run, then runs `paystorm run`
# (no probe, no faults, 100,000 accounts, constant schedule, 15 s) at 1x, 2x and 10x that ceiling and prints,
# for each: deliveries intended, sent/s, p99 from the intended time, the harness-limited span, and the ratio
# sent/s / ceiling, then the CPU budget of each run (CPU per sent delivery of paystorm and of nginx beside the
# ceiling's minting CPU per delivery, and the ratio that budget allows), and whether the goals hold: the run's CPU
# per sent delivery at most 1.5x minting's, 1x at 0.6 of the ceiling or more, 2x and 10x at 0.9 of 1x or more.
# Not run in CI.
#
# Usage: [CONNECTIONS=N] Benchmarks/ceiling/run.sh [SECONDS] [FACTORS...]   (defaults: 15 s; factors 1 2 10;
#        CONNECTIONS sets target.connections, default 32). A factor given more than once is judged by the mean of
#        its runs: `run.sh 15 1 2 10 10 2 1` runs each factor before and after the others, so a machine whose speed
#        drifts through the pass does not favour the first.
set -euo pipefail
source "$(dirname "$0")/../load/common.sh"
cd "$ROOT"
RUN_SECONDS="${1:-15}"; shift || true
FACTORS=("${@:-1 2 10}"); read -r -a FACTORS <<<"${FACTORS[*]}"

if ! command -v nginx >/dev/null; then
    apt-get install -y nginx-light >/dev/null
fi
swift build -c release --product paystorm 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]' || true
PAYSTORM="$(swift build -c release --show-bin-path)/paystorm"
[[ -x "$PAYSTORM" ]] || { echo "release build failed" >&2; exit 70; }

source "$(dirname "$0")/setup.sh"

[[ -x /usr/bin/time ]] || apt-get install -y time >/dev/null
# CPU time (user + system, in clock ticks) of nginx's worker, so each run's CPU budget can be split.
nginx_ticks() {
    local worker
    worker=$(pgrep -P "$(pgrep -o -x nginx)" -x nginx | head -1)
    awk '{print $14 + $15}' "/proc/$worker/stat"
}
TICKS=$(getconf CLK_TCK)

printf '\n%-6s %-11s %-10s %-10s %-12s %-8s %-8s %s\n' factor rate-scale intended sent/s "p99 (ms)" ratio bound \
    harness-limited
for factor in "${FACTORS[@]}"; do
    scale=$(python3 -c "print(round($SCALE * $factor, 4))")
    before=$(nginx_ticks)
    /usr/bin/time -f "%U %S" -o "$WORK/cpu-$factor" "$PAYSTORM" run "$PROFILE" "${VARS[@]}" --pki "$WORK/pki" \
        --rate-scale "$scale" --reports "$WORK/reports-$factor" --quiet >"$WORK/run-$factor.txt" 2>&1 || true
    nginx_cpu=$(python3 -c "print(($(nginx_ticks) - $before) / $TICKS)")
    [[ -f "$WORK/reports-$factor/latest/summary.json" ]] || { cat "$WORK/run-$factor.txt" >&2; exit 1; }
    python3 - "$WORK/reports-$factor/latest/summary.json" "$CEILING" "$factor" "$scale" "$RUN_SECONDS" \
        "$(tail -1 "$WORK/cpu-$factor")" "$nginx_cpu" "$(nproc)" "$WORK/budget.txt" "${MINT_CPU:-}" \
        "$WORK/goals.jsonl" <<'PY'
import json, sys
path, ceiling, factor, scale, seconds = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5])
user, system = map(float, sys.argv[6].split())
nginx, cores, budget = float(sys.argv[7]), int(sys.argv[8]), sys.argv[9]
report = json.load(open(path))
requests = report["requests"]
# CPU per sent delivery: the run's, nginx's, and what the ceiling spends minting one: measured by the bench (user +
# system) when it prints it, else its cores / its rate (which a busy machine inflates).
shares = cores / ceiling * 1e6
mint = float(sys.argv[10]) if sys.argv[10] else shares
harness = (user + system) / requests["sent"] * 1e6
target = nginx / requests["sent"] * 1e6
bound = mint / (harness + target)
with open(budget, "a") as out:
    print(f"{factor + 'x':<6} paystorm {harness:6.1f} µs of CPU per sent delivery (minting {mint:.1f}, the rest "
          f"{harness - mint:.1f}; {harness / mint:.2f}x minting), nginx {target:.1f}; bound {bound:.2f}; "
          f"cores / ceiling {shares:.1f}", file=out)
p99 = max((l["micros"].get("p99", 0) for l in report.get("latency", [])
           if l["measure"] == "intended" and l["kind"] == "all"), default=0) / 1000
rate = requests["sent"] / seconds
limit = report.get("harnessLimited")
span = (f"from {limit['fromSeconds']:.0f} s at {limit['deliveriesPerSecond']:,.0f}/s ({limit['reason']})"
        if limit else "no")
with open(sys.argv[11], "a") as out:
    print(json.dumps({"factor": float(factor), "ratio": rate / ceiling, "multiple": harness / mint}), file=out)
print(f"{factor + 'x':<6} {scale:<11} {requests['intended']:<10} {rate:<10.0f} {p99:<12.0f} "
      f"{rate / ceiling:<8.2f} {bound:<8.2f} {span}")
PY
done
# The budget: what the run spent per delivery it sent, beside what the ceiling spends minting one. `bound` is the
# ratio a run whose other work (engine, kernel TCP, oracle, history) and target cost this much could reach with the
# whole machine busy: minting / (paystorm + nginx) per delivery.
echo
cat "$WORK/budget.txt"
python3 - "$WORK/goals.jsonl" <<'PY'
import json, sys
# A factor given more than once (`1 2 10 10 2 1`, so that a machine that drifts through the pass weighs on every
# factor alike) is judged by the mean of its runs.
byFactor = {}
for run in map(json.loads, open(sys.argv[1])):
    byFactor.setdefault(run["factor"], []).append(run)
runs = {factor: {key: sum(run[key] for run in group) / len(group) for key in ("ratio", "multiple")}
        for factor, group in byFactor.items()}
def verdict(held):
    return "met" if held else "NOT met"
worst = max(run["multiple"] for run in runs.values())
print(f"\ngoal: CPU per sent delivery at most 1.5x minting at every factor: {verdict(worst <= 1.5)} "
      f"(worst {worst:.2f}x)")
if 1.0 in runs:
    one = runs[1.0]["ratio"]
    print(f"goal: 1x at 0.6 of the ceiling or more: {verdict(one >= 0.6)} ({one:.2f})")
    for factor in sorted(f for f in runs if f > 1):
        share = runs[factor]["ratio"] / one
        print(f"goal: {factor:g}x at 0.9 of 1x or more: {verdict(share >= 0.9)} ({share:.2f})")
PY
