"""Checks the nightly CI files in deploy/ci: both workflows parsed as YAML (schedule, image, secrets, the
command, artifacts, junit, exit-code handling), deploy/ci/nightly.sh run against a fake paystorm for each exit
code, and the staging profile validated by the real paystorm (`run --check`).

Usage: python test_nightly.py ROOT PAYSTORM    (prints one line per check and `N passed, M failed`)
"""

import base64
import io
import os
import re
import subprocess
import sys
import tarfile
import tempfile

import yaml

ROOT, PAYSTORM = sys.argv[1], sys.argv[2]
PROFILE = "Profiles/examples/staging-nightly.json5"
results = []


def check(name, condition, detail=""):
    results.append(bool(condition))
    print(("ok   " if condition else "FAIL ") + name + ("" if condition else f": {detail}"))


def load(path):
    with open(os.path.join(ROOT, path)) as f:
        return yaml.safe_load(f)


def is_cron(text):
    return isinstance(text, str) and len(text.split()) == 5


# GitHub Actions ------------------------------------------------------------------------------------------------
github = load("deploy/ci/github-actions-nightly.yml")
# YAML 1.1 reads the bare key `on` as true; GitHub reads it as "on". Either spelling is the trigger block.
triggers = github.get("on", github.get(True)) or {}
crons = [entry.get("cron") for entry in triggers.get("schedule", [])]
check("github: a nightly schedule", crons and all(is_cron(c) for c in crons), crons)
job = github["jobs"]["chaos"]
env = job.get("env", {})
check("github: Swift 6.3.1 container", job.get("container") == "swift:6.3.1-bookworm", job.get("container"))
check(
    "github: staging URL and PKI from secrets",
    env.get("PAYSTORM_STAGING_URL") == "${{ secrets.PAYSTORM_STAGING_URL }}"
    and env.get("PAYSTORM_PKI_TAR_B64") == "${{ secrets.PAYSTORM_PKI_TAR_B64 }}",
    env,
)
check("github: the staging profile", env.get("PAYSTORM_PROFILE") == PROFILE, env.get("PAYSTORM_PROFILE"))
check("github: unknown's handling configurable, failing by default", "|| 'fail'" in str(env.get("PAYSTORM_UNKNOWN")))
steps = job["steps"]
runs = [step.get("run", "") for step in steps]
check("github: installs the -dev packages", "scripts/install-deps.sh" in runs, runs)
check("github: builds paystorm", any("swift build -c release --product paystorm" in r for r in runs), runs)
check("github: runs deploy/ci/nightly.sh", "deploy/ci/nightly.sh" in runs, runs)
report = env.get("PAYSTORM_REPORT")
uploads = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
check(
    "github: the report folder uploaded even on failure",
    uploads
    and uploads[0].get("if") == "always()"
    and uploads[0]["with"]["path"].rstrip("/") == report,
    uploads,
)
junits = [s for s in steps if "junit" in str(s.get("uses", ""))]
check(
    "github: junit.xml published even on failure",
    junits and junits[0].get("if") == "always()" and junits[0]["with"]["report_paths"] == f"{report}/junit.xml",
    junits,
)
check("github: may write the junit check", github.get("permissions", {}).get("checks") == "write")

# GitLab CI -----------------------------------------------------------------------------------------------------
gitlab = load("deploy/ci/gitlab-ci-nightly.yml")["paystorm-nightly"]
variables = gitlab.get("variables", {})
with open(os.path.join(ROOT, "deploy/ci/gitlab-ci-nightly.yml")) as f:
    gitlab_text = f.read()
# GitLab keeps the cron in the project's pipeline schedule, not in the file: the file names it and runs there.
check(
    "gitlab: runs in scheduled pipelines, cron named",
    any('$CI_PIPELINE_SOURCE == "schedule"' == rule.get("if") for rule in gitlab.get("rules", []))
    and re.search(r'cron "[^"]+"', gitlab_text)
    and is_cron(re.search(r'cron "([^"]+)"', gitlab_text).group(1)),
    gitlab.get("rules"),
)
check("gitlab: Swift 6.3.1 image", gitlab.get("image") == "swift:6.3.1-bookworm", gitlab.get("image"))
check("gitlab: the staging profile", variables.get("PAYSTORM_PROFILE") == PROFILE, variables)
check(
    "gitlab: secrets stay out of the file",
    "PAYSTORM_STAGING_URL" not in variables and "PAYSTORM_PKI_TAR_B64" not in variables,
    variables,
)
script = gitlab.get("script", [])
check(
    "gitlab: installs, builds, runs deploy/ci/nightly.sh",
    script[:1] == ["scripts/install-deps.sh"]
    and any("swift build -c release --product paystorm" in line for line in script)
    and script[-1:] == ["deploy/ci/nightly.sh"],
    script,
)
artifacts = gitlab.get("artifacts", {})
report = variables.get("PAYSTORM_REPORT")
check(
    "gitlab: report and junit artifacts even on failure",
    artifacts.get("when") == "always"
    and [p.rstrip("/") for p in artifacts.get("paths", [])] == [report]
    and artifacts.get("reports", {}).get("junit") == f"{report}/junit.xml",
    artifacts,
)
check(
    "gitlab: unknown fails by default, warn's exit code allowed to fail",
    variables.get("PAYSTORM_UNKNOWN") == "fail"
    and int(variables.get("PAYSTORM_WARN_EXIT")) in gitlab.get("allow_failure", {}).get("exit_codes", []),
    (variables, gitlab.get("allow_failure")),
)

# deploy/ci/nightly.sh against a fake paystorm ------------------------------------------------------------------
work = tempfile.mkdtemp()
fake = os.path.join(work, "paystorm")
# Records its arguments and the PKI it was given, writes a report folder as paystorm does when the run sent
# anything (codes 0 to 3), and exits with $FAKE_CODE.
with open(fake, "w") as f:
    f.write(
        """#!/usr/bin/env bash
printf '%s\\n' "$@" > "$FAKE_LOG"
while (( $# )); do
    case "$1" in --pki) pki="$2" ;; --reports) reports="$2" ;; esac
    shift
done
ls "$pki" > "$FAKE_LOG.pki"
if (( FAKE_CODE <= 3 )); then
    mkdir -p "$reports/2026-run" && echo '<testsuites/>' > "$reports/2026-run/junit.xml"
    ln -s 2026-run "$reports/latest"
fi
exit "$FAKE_CODE"
"""
    )
os.chmod(fake, 0o755)
buffer = io.BytesIO()
with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
    for name in ["root.der", "root.pem", "leaf.key"]:
        data = b"x"
        info = tarfile.TarInfo("./" + name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
pki_b64 = base64.b64encode(buffer.getvalue()).decode()


def nightly(code, **overrides):
    environment = {
        "PATH": os.environ["PATH"],
        "PAYSTORM": fake,
        "PAYSTORM_STAGING_URL": "https://ci@staging.example.com:8443/",
        "PAYSTORM_PKI_TAR_B64": pki_b64,
        "PAYSTORM_REPORT": os.path.join(work, "report"),
        "FAKE_CODE": str(code),
        "FAKE_LOG": os.path.join(work, "arguments"),
    }
    environment.update(overrides)
    environment = {k: v for k, v in environment.items() if v is not None}
    done = subprocess.run(
        [os.path.join(ROOT, "deploy/ci/nightly.sh")], cwd=ROOT, env=environment, capture_output=True, text=True
    )
    return done.returncode, done.stdout + done.stderr


def arguments():
    with open(os.path.join(work, "arguments")) as f:
        return f.read().split("\n")[:-1]


code, output = nightly(0, PAYSTORM_RATE_SCALE="0.5", PAYSTORM_SET="BUNDLE_ID=com.acme.app WEBHOOK_PATH=/hook")
given = arguments()
check("nightly.sh: a pass exits 0", code == 0, output)
check("nightly.sh: runs the staging profile", given[:2] == ["run", PROFILE], given)
pki = given[given.index("--pki") + 1] if "--pki" in given else ""
with open(os.path.join(work, "arguments.pki")) as f:
    pki_files = f.read().split()
check("nightly.sh: --pki is the unpacked secret", pki and pki_files == ["leaf.key", "root.der", "root.pem"], pki_files)
# Replay lines name --pki: a temporary folder deleted on exit would make every one fail.
check("nightly.sh: --pki is a stable path, not a temporary folder", pki == "paystorm-pki", pki)
check("nightly.sh: says how to unpack the PKI for a replay", "to replay, unpack the same PKI there" in output, output)
check("nightly.sh: the keys do not outlive the job", not os.path.exists(os.path.join(ROOT, "paystorm-pki")))
sets = [given[i + 1] for i, a in enumerate(given) if a == "--set"]
check(
    "nightly.sh: the URL and its bare host as variables, then the extra ones",
    sets
    == [
        "STAGING_URL=https://ci@staging.example.com:8443",
        "STAGING_HOST=staging.example.com",
        "BUNDLE_ID=com.acme.app",
        "WEBHOOK_PATH=/hook",
    ],
    sets,
)
check("nightly.sh: --rate-scale passed on", "--rate-scale" in given and given[given.index("--rate-scale") + 1] == "0.5")
check("nightly.sh: report folder moved out", os.path.isfile(os.path.join(work, "report", "junit.xml")))

for paystorm_code, unknown, warn_exit, expected in [
    (1, None, None, 1),
    (2, None, None, 2),
    (2, "fail", None, 2),
    (2, "warn", None, 0),
    (2, "warn", "42", 42),
    (3, "warn", "42", 3),
    (64, None, None, 64),
    (69, None, None, 69),
    (70, None, None, 70),
    (130, None, None, 130),
]:
    code, output = nightly(paystorm_code, PAYSTORM_UNKNOWN=unknown, PAYSTORM_WARN_EXIT=warn_exit)
    check(f"nightly.sh: paystorm {paystorm_code}, unknown={unknown}, warn exit {warn_exit} -> {expected}",
          code == expected, f"exited {code}: {output}")

taken = os.path.join(work, "taken-pki")
os.makedirs(taken)
code, output = nightly(0, PAYSTORM_PKI_DIR=taken)
check("nightly.sh: never unpacks over an existing folder", code == 64 and "already exists" in output, output)
check("nightly.sh: and leaves that folder alone", os.path.isdir(taken))

code, output = nightly(69)
with open(os.path.join(work, "report", "junit.xml")) as f:
    junit = f.read()
check("nightly.sh: no report still leaves a failing junit.xml", "<failure" in junit and "exited 69" in junit, junit)
for name, overrides in [
    ("no staging URL", {"PAYSTORM_STAGING_URL": None}),
    ("a URL without scheme", {"PAYSTORM_STAGING_URL": "staging.example.com"}),
    ("no PKI", {"PAYSTORM_PKI_TAR_B64": None}),
    ("a PKI that is not base64", {"PAYSTORM_PKI_TAR_B64": "*not base64*"}),
    ("a PKI that is not a tar", {"PAYSTORM_PKI_TAR_B64": base64.b64encode(b"plain text").decode()}),
    ("unknown=maybe", {"PAYSTORM_UNKNOWN": "maybe"}),
]:
    code, output = nightly(0, **overrides)
    check(f"nightly.sh: {name} exits 64 with one line", code == 64 and "nightly.sh: " in output, f"{code}: {output}")
pki_file = os.path.join(work, "pki.b64")
with open(pki_file, "w") as f:
    f.write(pki_b64)
code, output = nightly(0, PAYSTORM_PKI_TAR_B64=pki_file)
check("nightly.sh: the PKI from a file variable", code == 0, output)

# The profile, validated by paystorm itself -------------------------------------------------------------------
def paystorm_check(*sets):
    command = [PAYSTORM, "run", PROFILE, "--check"] + [a for s in sets for a in ("--set", s)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env={"PATH": os.environ["PATH"]})
    return done.returncode, done.stdout + done.stderr


code, output = paystorm_check("STAGING_URL=https://staging.example.com", "STAGING_HOST=staging.example.com")
check("profile: valid with the staging variables", code == 0, output)
code, output = paystorm_check("STAGING_URL=https://staging.example.com", "STAGING_HOST=other.example.com")
check("profile: a host allowedHosts does not list is refused", code == 65 and "allowedHosts" in output, output)
code, output = paystorm_check("STAGING_HOST=staging.example.com")
check("profile: a missing STAGING_URL is named", code == 65 and "STAGING_URL" in output, output)

passed = sum(results)
print(f"{passed} passed, {len(results) - passed} failed")
sys.exit(0 if passed == len(results) else 1)
