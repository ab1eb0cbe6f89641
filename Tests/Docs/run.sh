#!/usr/bin/env bash
# The manual's own checks (scripts/check-docs.sh --links-only): run on small fixture pages in a temporary copy
# of the script's folder layout, each bad page must fail with FILE:LINE naming the problem, and clean pages and
# text inside code must pass. Needs only bash and perl; builds nothing.
# Usage: Tests/Docs/run.sh   Ends with `N passed, M failed`.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

# A fresh fixture tree: the script, a README with an anchor target, a CONTRIBUTING and a docs page.
fixture() {
    rm -rf "$work/repo"
    mkdir -p "$work/repo/scripts" "$work/repo/docs" "$work/repo/Benchmarks"
    cp "$root/scripts/check-docs.sh" "$work/repo/scripts/"
    printf '# Tool\n\n## Exit codes\n\nSee [the page](docs/page.md).\n' > "$work/repo/README.md"
    printf '# Contributing\n\nSee [the README](README.md#exit-codes).\n' > "$work/repo/CONTRIBUTING.md"
    printf '# Benchmarks\n\n| what | measured |\n| --- | --- |\n| x | 2026-01-02, seed 7 |\n' \
        > "$work/repo/Benchmarks/README.md"
    printf '# Page\n\n## A `code` heading (v1)\n\nBack to [the README](../README.md).\n' > "$work/repo/docs/page.md"
}

# expect NAME STATUS PATTERN: the check's exit status, and a line of its stderr matching PATTERN (when given).
expect() {
    local name="$1" status="$2" pattern="${3:-}" got=0
    "$work/repo/scripts/check-docs.sh" --links-only > "$work/out" 2> "$work/err" || got=$?
    if [[ "$got" == "$status" ]] && { [[ -z "$pattern" ]] || grep -qE "$pattern" "$work/err"; }; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAIL $name: exit $got (expected $status), stderr:" >&2
        sed 's/^/    /' "$work/err" >&2
    fi
}

fixture
expect "clean pages pass" 0

fixture
printf '\nSee [nothing](missing.md).\n' >> "$work/repo/docs/page.md"
expect "a link to a missing file" 1 '^docs/page\.md:7: broken link: missing\.md'

fixture
printf '\nSee [nothing](../README.md#no-such-heading).\n' >> "$work/repo/docs/page.md"
expect "a link to a missing heading" 1 '^docs/page\.md:7: broken link: \.\./README\.md#no-such-heading'

fixture
printf '\nSee [this](#a-code-heading-v1) and [that](../README.md#exit-codes).\n' >> "$work/repo/docs/page.md"
expect "links to headings that exist" 0

fixture
printf '\n[ref]: ../nowhere.md\n' >> "$work/repo/docs/page.md"
expect "a reference definition to a missing file" 1 '^docs/page\.md:7: broken link: \.\./nowhere\.md'

fixture
printf '\nSee [it](nothing.md).\n' >> "$work/repo/CONTRIBUTING.md"
expect "CONTRIBUTING.md's links are checked" 1 '^CONTRIBUTING\.md:5: broken link'

fixture
printf '\nMeasured on 2026-12-02.\n' >> "$work/repo/README.md"
expect "an ISO date in the README" 1 '^README\.md:7: ISO date "2026-12-02"'

fixture
printf '\nThe flaw showed with seed 204.\n' >> "$work/repo/docs/page.md"
expect "a past seed in docs/" 1 '^docs/page\.md:7: "seed 204"'

fixture
printf '\nSeeds 44 to 49 passed; so did --seed 9.\n' >> "$work/repo/docs/page.md"
expect "seeds, capitalised, and a command outside code" 1 '^docs/page\.md:7: "Seeds 44"'

fixture
printf '\nReplay with `paystorm replay --seed 7` (`2026-01-01` is a date format).\n\n```sh\npaystorm run --seed 42 # 2026-12-02\n```\n' \
    >> "$work/repo/docs/page.md"
expect "seeds and dates inside code pass" 0

fixture
printf '\nMeasured on 2026-12-02 with seed 7.\n' >> "$work/repo/CONTRIBUTING.md"
expect "history outside README.md and docs/ is not checked" 0

echo "$passed passed, $failed failed"
(( failed == 0 ))
