#!/usr/bin/env bash
# Prints the path of the paystorm binary a test suite runs: $PAYSTORM when set (scripts/test.sh sets it), else
# .build/debug/paystorm, built first with CI's flags, so a suite run alone lets no warning pass and leaves a
# build that CI's next build reuses (other flags would rebuild everything). The build's output goes to stderr
# only when it fails.
# Usage: PAYSTORM="$(scripts/paystorm-binary.sh)"   or   scripts/paystorm-binary.sh --flags   (CI's build flags)
set -euo pipefail
cd "$(dirname "$0")/.."
# Every compiler warning in our code fails CI: -warnings-as-errors for the Swift targets, -Xcc -Werror for the C
# shim (system headers stay exempt: clang silences their warnings).
flags=(-Xswiftc -warnings-as-errors -Xcc -Werror)
if [[ "${1:-}" == --flags ]]; then
    echo "${flags[*]}"
    exit 0
fi
if [[ -n "${PAYSTORM:-}" ]]; then
    echo "$PAYSTORM"
    exit 0
fi
if ! output="$(swift build --product paystorm "${flags[@]}" 2>&1)"; then
    echo "$output" | grep -vE '^\[[0-9]+/[0-9]+\]' >&2
    echo "paystorm-binary.sh: the build failed" >&2
    exit 1
fi
echo "$PWD/.build/debug/paystorm"
