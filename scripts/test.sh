#!/usr/bin/env bash
# Runs every PayStorm test: format lint, a build with warnings as errors, a DocC check, Swift tests,
# then the interop suites against Apple's own App Store Server Library and the PyPI hdrhistogram package.
# Usage: scripts/test.sh [--swift-only]   (--swift-only: stop after the Swift tests, before the shell suites)
set -euo pipefail
cd "$(dirname "$0")/.."
swift_only=0
[[ "${1:-}" == --swift-only ]] && swift_only=1
scripts/install-deps.sh --tests

echo "== swift format lint"
swift format lint --strict --recursive --parallel Sources Tests Package.swift

echo "== shape (no file over 400 lines, no function over 60)"
scripts/check-shape.sh

echo "== build (warnings are errors)"
# Every compiler warning in our code fails CI (the flags are scripts/paystorm-binary.sh's, which the suites
# run alone build with). The DocC step reuses this build, so it gets the same flags (other flags would rebuild
# everything).
read -r -a build_flags <<<"$(scripts/paystorm-binary.sh --flags)"
swift build --build-tests "${build_flags[@]}" 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]' || { echo "build failed"; exit 1; }
export PAYSTORM="$PWD/.build/debug/paystorm"

echo "== docc (warnings are errors)"
scripts/check-docs.sh "${build_flags[@]}" 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]' || { echo "docc check failed"; exit 1; }

echo "== swift test"
# Four processes of the test bundle, not one `swift test` (which locks .build, so it cannot run twice): each
# process has its own thread per core for tests that wait on a child process, so the end-to-end tests, which
# mostly wait on their runs' schedules, do not hold back every other test on a two-core machine. Together the
# shards run every test once (checked against the bundle's list): detection, the other end-to-end suites A to L,
# the rest of them, and every other target. A test whose claim is a measurement (three capacity searches finding
# one knee) runs after them, alone: beside three other processes its searches measure the machine's load.
bundle=.build/debug/PayStormPackageTests.xctest
alone="--filter EndToEndTests\.CapacityRecoveryTests"
shards=(
    "--filter EndToEndTests\.DetectionTests"
    "--filter EndToEndTests\.[A-L] --skip EndToEndTests\.DetectionTests --skip EndToEndTests\.CapacityRecoveryTests"
    "--filter EndToEndTests --skip EndToEndTests\.DetectionTests --skip EndToEndTests\.[A-L]"
    "--skip EndToEndTests"
)
pids=()
for i in "${!shards[@]}"; do
    # shellcheck disable=SC2086 # each shard is a list of options
    NO_COLOR=1 "$bundle" --testing-library swift-testing ${shards[$i]} >".build/swift-test-$i.log" 2>&1 &
    pids+=("$!")
done
failed_shards=0
check_shard() { # STATUS LOG LABEL: a failure (a nonzero STATUS, or no passing run in LOG) is shown and counted
    if (( $1 != 0 )) || ! grep -qE '✔ Test run with [0-9]+ tests? .*passed' "$2"; then
        echo "swift test ($3) failed:"
        grep -vE '^(◇|✔|↳) ' "$2" | tail -200 || true
        failed_shards=$((failed_shards + 1))
    fi
    grep -E 'Test run with [0-9]+ tests?' "$2" | tail -1 | sed "s/^/  ($3) /" || true
}
for i in "${!pids[@]}"; do
    status=0
    wait "${pids[$i]}" || status=$?
    check_shard "$status" ".build/swift-test-$i.log" "shard ${shards[$i]}"
done
alone_log=".build/swift-test-${#shards[@]}.log"
status=0
# shellcheck disable=SC2086 # a list of options
NO_COLOR=1 "$bundle" --testing-library swift-testing $alone >"$alone_log" 2>&1 || status=$?
check_shard "$status" "$alone_log" "$alone, alone"
cat .build/swift-test-[0-9].log >.build/swift-test.log
(( failed_shards == 0 )) || { echo "swift test failed"; exit 1; }
ran=$(sed -nE 's/^✔ Test run with ([0-9]+) tests? .*/\1/p' .build/swift-test-[0-9].log | awk '{ n += $1 } END { print n }')
listed=$("$bundle" --testing-library swift-testing --list-tests 2>/dev/null | grep -c /)
(( ran == listed )) || { echo "swift test: the shards ran $ran tests of the $listed the bundle lists"; exit 1; }
echo "  $ran tests in all"
# Where the suite's time goes: the ten slowest tests (each from its start to its end; tests run in parallel).
echo "slowest Swift tests (seconds):"
sed -nE '/^✔ Test run with /d; s/^✔ Test (.*) (with [0-9]+ test cases )?passed after ([0-9.]+) seconds\.$/\3 \1/p' \
    .build/swift-test.log |
    sort -rn | awk 'NR <= 10 { print "  " $0 }'  # awk reads to the end: head's early exit would SIGPIPE sort

if (( swift_only )); then
    echo "Swift tests passed (the shell suites were not run)"
    exit 0
fi
# The shell suites, each timed. Those that only check what PayStorm writes run in two background lanes (Apple's
# signed-data interop, the longest, in one; the docs check's own tests, the App Store Server API, other parsers,
# the deploy files and manifests, report.html in Chromium in the other) beside the hostile-input suite, which waits on
# misbehaving targets more than it computes; each one's output is shown whole once all have ended. The example
# backend (its standalone suite, then its matrix) runs last, beside nothing but its own rows (EXAMPLE_JOBS at once,
# two by default): some of its bugs show only within a second of a restart or a renewal. (Its standalone suite in a
# third lane gained nothing: it computes, and slowed the other lanes as much as it saved.)
mkdir -p .build/suites
suite_log() { echo ".build/suites/${1//\//-}.log"; }
run_suite() { # SUITE: its output into its log, then "EXIT SECONDS" into the log's .result
    local started=$SECONDS code=0
    "$1" >"$(suite_log "$1")" 2>&1 </dev/null || code=$?
    echo "$code $((SECONDS - started))" >"$(suite_log "$1").result"
}
failed_suites=() suite_times=()
show_suite() { # SUITE: prints its log and time, and notes a failure
    local code seconds
    echo "== $1"
    cat "$(suite_log "$1")"
    read -r code seconds <"$(suite_log "$1").result"
    echo "($1 took $seconds s)"
    suite_times+=("$seconds $1")
    (( code == 0 )) || { echo "$1 failed (exit $code)"; failed_suites+=("$1"); }
}
lanes=("Tests/Interop/run.sh"
    "Tests/Docs/run.sh Tests/APIInterop/run.sh Tests/LoadTests/Interop/run.sh Tests/ReceiptInterop/run.sh Tests/Metrics/run.sh Tests/Deploy/run.sh
    Tests/Kubernetes/run.sh Tests/Schema/run.sh Tests/Render/run.sh")
rm -f .build/suites/*.result
lane_pids=()
for lane in "${lanes[@]}"; do
    # shellcheck disable=SC2086 # a lane is a list of suites
    ( for suite in $lane; do run_suite "$suite"; done ) &
    lane_pids+=("$!")
done
run_suite Tests/Hostile/run.sh
for pid in "${lane_pids[@]}"; do wait "$pid"; done
show_suite Tests/Hostile/run.sh
# shellcheck disable=SC2086
for suite in ${lanes[*]}; do show_suite "$suite"; done
matrix=Tests/ExampleBackend/run.sh
echo "== $matrix"
started=$SECONDS code=0
"$matrix" </dev/null || code=$?
echo "($matrix took $((SECONDS - started)) s)"
suite_times+=("$((SECONDS - started)) $matrix")
(( code == 0 )) || { echo "$matrix failed (exit $code)"; failed_suites+=("$matrix"); }
echo "shell suites (seconds; the hostile suite and the two background lanes overlap):"
printf '%s\n' "${suite_times[@]}" | sort -rn | sed 's/^/  /'
(( ${#failed_suites[@]} == 0 )) || { echo "failed: ${failed_suites[*]}"; exit 1; }
echo "all suites passed"
