#!/usr/bin/env bash
# The nightly chaos job, shared by github-actions-nightly.yml and gitlab-ci-nightly.yml so that both judge
# PayStorm's exit codes the same way. Unpacks the test PKI, runs the profile against the staging URL, moves the
# report folder to $PAYSTORM_REPORT and its junit.xml beside it, then turns PayStorm's exit code into the job's.
#
# Environment (secrets first):
#   PAYSTORM_STAGING_URL   base URL of the staging backend, e.g. https://staging.example.com (required)
#   PAYSTORM_PKI_TAR_B64   base64 of a tar of a `paystorm pki init` directory, or the path of a file holding it
#                          (GitLab "File" variables); make it with: tar -C pki -cz . | base64 -w0   (required)
#   PAYSTORM_PROFILE       default Profiles/examples/staging-nightly.json5
#   PAYSTORM_UNKNOWN       fail (default) or warn: what the unknown verdict (exit 2) does to the job
#   PAYSTORM_RATE_SCALE    optional --rate-scale factor
#   PAYSTORM_SET           optional extra NAME=VALUE profile variables, separated by spaces
#   PAYSTORM               the paystorm binary (default .build/release/paystorm)
#   PAYSTORM_REPORT        where the report folder goes (default paystorm-report); junit.xml is inside it
#   PAYSTORM_PKI_DIR       where the PKI is unpacked for the run (default paystorm-pki, beside the report); it must
#                          not exist yet, and is removed at the end (the keys stay out of the artifacts). The
#                          replay lines of the report name it, so they replay once the same PKI is unpacked there.
#
# Job exit codes: 0 for a pass, and for unknown with PAYSTORM_UNKNOWN=warn (the job then prints a warning, and
# exits $PAYSTORM_WARN_EXIT instead when that is set: GitLab's allow_failure:exit_codes shows it as a warning).
# Every other PayStorm code fails the job with that same code: 1 violation, 2 unknown, 3 threshold breached,
# 64-73 a usage, input, target or internal error, 130 interrupted. A missing secret or setting exits 64.
set -uo pipefail

fail_setup() {
    echo "nightly.sh: $1" >&2
    exit 64
}

[[ -n "${PAYSTORM_STAGING_URL:-}" ]] || fail_setup "set PAYSTORM_STAGING_URL (a secret) to the staging base URL"
[[ -n "${PAYSTORM_PKI_TAR_B64:-}" ]] || fail_setup "set PAYSTORM_PKI_TAR_B64 (a secret) to the base64 of a PKI tar"
profile="${PAYSTORM_PROFILE:-Profiles/examples/staging-nightly.json5}"
unknown="${PAYSTORM_UNKNOWN:-fail}"
paystorm="${PAYSTORM:-.build/release/paystorm}"
report="${PAYSTORM_REPORT:-paystorm-report}"
case "$unknown" in
    fail | warn) ;;
    *) fail_setup "PAYSTORM_UNKNOWN must be fail or warn, got '$unknown'" ;;
esac

# The host alone, for the profile's allowedHosts: the URL without scheme, path, port and user.
url="${PAYSTORM_STAGING_URL%/}"
host="${url#*://}"
host="${host%%/*}"
host="${host##*@}"
host="${host%:*}"
[[ "$url" == http://* || "$url" == https://* ]] && [[ -n "$host" ]] ||
    fail_setup "PAYSTORM_STAGING_URL must be an http:// or https:// URL with a host"

# The PKI goes to a stable path, not the temporary folder: the report's replay lines name it, and a folder deleted
# on exit would make every one of them fail.
pki="${PAYSTORM_PKI_DIR:-paystorm-pki}"
[[ ! -e "$pki" ]] || fail_setup "$pki already exists; remove it or set PAYSTORM_PKI_DIR to a path that does not"
work="$(mktemp -d)"
trap 'rm -rf "$work" "$pki"' EXIT
mkdir -p "$pki" || fail_setup "cannot create $pki for the PKI"
if [[ -f "$PAYSTORM_PKI_TAR_B64" ]]; then
    base64 -d <"$PAYSTORM_PKI_TAR_B64" >"$work/pki.tar" 2>/dev/null
else
    printf '%s' "$PAYSTORM_PKI_TAR_B64" | base64 -d >"$work/pki.tar" 2>/dev/null
fi || fail_setup "PAYSTORM_PKI_TAR_B64 is not base64"
tar -xf "$work/pki.tar" -C "$pki" || fail_setup "PAYSTORM_PKI_TAR_B64 does not hold a tar archive"

arguments=(run "$profile" --pki "$pki" --reports "$work/reports" --plain
    --set "STAGING_URL=$url" --set "STAGING_HOST=$host")
[[ -n "${PAYSTORM_RATE_SCALE:-}" ]] && arguments+=(--rate-scale "$PAYSTORM_RATE_SCALE")
read -r -a extra <<<"${PAYSTORM_SET:-}"
for assignment in "${extra[@]}"; do arguments+=(--set "$assignment"); done

echo "nightly.sh: paystorm ${arguments[*]}"
"$paystorm" "${arguments[@]}"
code=$?
echo "nightly.sh: replay lines name --pki $pki, removed now; to replay, unpack the same PKI there first:" \
    "mkdir -p $pki && printf %s \"\$PAYSTORM_PKI_TAR_B64\" | base64 -d | tar -xz -C $pki"

rm -rf "$report"
if [[ -d "$work/reports/latest" ]]; then
    mv "$(readlink -f "$work/reports/latest")" "$report"
else
    # A run that stopped before sending (unreachable target, bad profile) writes no report: a junit.xml that
    # says so keeps the CI's test view from reading "no tests" as success.
    mkdir -p "$report"
    cat >"$report/junit.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="paystorm" tests="1" failures="1">
  <testsuite name="paystorm" tests="1" failures="1">
    <testcase classname="paystorm" name="run completed">
      <failure message="paystorm exited $code before writing a report; see the job log"/>
    </testcase>
  </testsuite>
</testsuites>
EOF
fi

case "$code" in
    0) echo "nightly.sh: pass" ;;
    2)
        if [[ "$unknown" == warn ]]; then
            # A GitHub Actions annotation, so the warning shows on the run's page.
            [[ -n "${GITHUB_ACTIONS:-}" ]] && echo "::warning::PayStorm's verdict is unknown (exit 2); see the report"
            echo "nightly.sh: unknown verdict, a warning because PAYSTORM_UNKNOWN=warn"
            exit "${PAYSTORM_WARN_EXIT:-0}"
        fi
        echo "nightly.sh: unknown verdict (exit 2) fails the job (PAYSTORM_UNKNOWN=warn makes it a warning)" >&2
        ;;
    *) echo "nightly.sh: paystorm exited $code (README, Exit codes); the job fails" >&2 ;;
esac
exit "$code"
