#!/usr/bin/env bash
# Runs every PayStorm test: format lint, a build with warnings as errors, a DocC check, Swift tests,
# then the interop suites against Apple's own App Store Server Library and the PyPI hdrhistogram package.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --tests

echo "== swift format lint"
swift format lint --strict --recursive --parallel Sources Tests Package.swift

echo "== build (warnings are errors)"
# Every compiler warning in our code fails CI: -warnings-as-errors for the Swift targets, -Xcc -Werror
# for the C shim. System headers stay exempt (clang silences their warnings). The DocC step reuses this
# build, so it gets the same flags (other flags would rebuild everything).
build_flags=(-Xswiftc -warnings-as-errors -Xcc -Werror)
swift build --build-tests "${build_flags[@]}" 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]' || { echo "build failed"; exit 1; }
export PAYSTORM="$PWD/.build/debug/paystorm"

echo "== docc (warnings are errors)"
scripts/check-docs.sh "${build_flags[@]}" 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]' || { echo "docc check failed"; exit 1; }

echo "== swift test"
swift test --skip-build 2>&1 | tee .build/swift-test.log | grep -vE '^(◇|✔) ' || true
grep -qE '✔ Test run with [0-9]+ tests? .*passed' .build/swift-test.log || { echo "swift test failed"; exit 1; }
grep -E 'Test run with [0-9]+ tests?' .build/swift-test.log | tail -1
# Where the suite's time goes: the ten slowest tests (each from its start to its end; tests run in parallel).
echo "slowest Swift tests (seconds):"
sed -nE '/^✔ Test run with /d; s/^✔ Test (.*) (with [0-9]+ test cases )?passed after ([0-9.]+) seconds\.$/\3 \1/p' \
    .build/swift-test.log |
    sort -rn | awk 'NR <= 10 { print "  " $0 }'  # awk reads to the end: head's early exit would SIGPIPE sort

for suite in Tests/Docs/run.sh Tests/Interop/run.sh Tests/APIInterop/run.sh Tests/LoadTests/Interop/run.sh Tests/Metrics/run.sh Tests/Deploy/run.sh Tests/ExampleBackend/run.sh \
    Tests/Hostile/run.sh; do
    if [[ -x "$suite" ]]; then
        echo "== $suite"
        started=$SECONDS
        "$suite"
        echo "($suite took $((SECONDS - started)) s)"
    fi
done
echo "all suites passed"
