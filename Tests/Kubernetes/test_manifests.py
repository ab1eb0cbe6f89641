"""Checks deploy/kubernetes and deploy/container: each manifest valid under Kubernetes' schemas (strict: an unknown
field fails), the shards Job's per-index failure handling, the shard count, ConfigMap, Secret and folders agreeing
across both Jobs and the docs, the merge Job's wait loop and merge command run by sh against a scratch folder, and
the Containerfile's entrypoint and Debian packages against what paystorm links.

Usage: python test_manifests.py ROOT PAYSTORM    (prints one line per check and `N passed, M failed`)
"""

import glob
import os
import re
import subprocess
import sys
import tempfile

import yaml

ROOT, PAYSTORM = sys.argv[1], sys.argv[2]
MANIFEST = os.path.join(ROOT, "deploy/kubernetes/paystorm-job.yaml")
CONTAINERFILE = os.path.join(ROOT, "deploy/container/Containerfile")
VALIDATE = os.path.join(os.path.dirname(sys.executable), "kubernetes-validate")
# The oldest release the manifest supports (backoffLimitPerIndex stable) and the newest the validator bundles.
VERSIONS = ["1.33", "1.37"]
VERDICTS = [1, 2, 3]  # README's exit codes for a run that ended with a verdict: violation, unknown, threshold
results = []


def check(name, condition, detail=""):
    results.append(bool(condition))
    print(("ok   " if condition else "FAIL ") + name + ("" if condition else f": {detail}"))


def validate(path, version):
    process = subprocess.run(
        [VALIDATE, "--strict", "--quiet", "-k", version, path], capture_output=True, text=True
    )
    return process.returncode, (process.stdout + process.stderr).strip()


# Schemas -------------------------------------------------------------------------------------------------------
manifests = sorted(glob.glob(os.path.join(ROOT, "deploy/kubernetes/*.yaml")))
check("a manifest to check", manifests, "deploy/kubernetes holds no .yaml")
for path in manifests:
    for version in VERSIONS:
        code, output = validate(path, version)
        check(f"{os.path.basename(path)} valid for Kubernetes {version}", code == 0, output)
with open(MANIFEST) as f:
    text = f.read()
# The validator must reject what a cluster rejects, or the checks above prove nothing.
with tempfile.TemporaryDirectory() as scratch:
    for name, broken in [
        ("a misspelt field", text.replace("backoffLimitPerIndex:", "backoffLimitPerIndx:")),
        ("a count of the wrong type", text.replace("completions: 3", 'completions: "three"')),
    ]:
        path = os.path.join(scratch, "broken.yaml")
        with open(path, "w") as f:
            f.write(broken)
        code, output = validate(path, VERSIONS[0])
        check(f"the validator rejects {name}", broken != text and code != 0, output)

documents = {doc["metadata"]["name"]: doc for doc in yaml.safe_load_all(text)}
shards, merge = documents["paystorm-shards"]["spec"], documents["paystorm-merge"]["spec"]
pod = shards["template"]["spec"]
(container,) = pod["containers"]
args = container["args"]
volumes = {v["name"]: v for v in pod["volumes"]}
mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}


def option(name):
    return args[args.index(name) + 1] if name in args else None


# The shards Job ------------------------------------------------------------------------------------------------
check("shards: an Indexed Job", shards.get("completionMode") == "Indexed", shards.get("completionMode"))
check("shards: no index retried", shards.get("backoffLimitPerIndex") == 0, shards.get("backoffLimitPerIndex"))
# backoffLimit: 0 beside backoffLimitPerIndex would fail the whole Job, stopping every shard, at the first failure.
check("shards: no Job-wide backoffLimit", "backoffLimit" not in shards, shards.get("backoffLimit"))
check("shards: pods never restarted in place", pod.get("restartPolicy") == "Never", pod.get("restartPolicy"))
rules = shards.get("podFailurePolicy", {}).get("rules", [])
verdict_rules = [r for r in rules if r.get("action") == "FailIndex" and "onExitCodes" in r]
check(
    "shards: a verdict exit fails its own index, never retried",
    len(verdict_rules) == 1
    and verdict_rules[0]["onExitCodes"] == {"containerName": container["name"], "operator": "In", "values": VERDICTS},
    rules,
)
check("shards: no rule reruns a shard", all(r.get("action") != "Ignore" for r in rules), rules)
check("shards: the image's entrypoint runs (no command)", "command" not in container, container.get("command"))
check("shards: args are a paystorm run", args[:1] == ["run"], args[:1])
shard = option("--shard") or ""
match = re.fullmatch(r"\$\(JOB_COMPLETION_INDEX\)/(\d+)", shard)
count = int(match.group(1)) if match else None
check("shards: --shard INDEX/N from JOB_COMPLETION_INDEX", match, shard)
check(
    "shards: completions and parallelism equal N",
    shards.get("completions") == count and shards.get("parallelism") == count,
    (shards.get("completions"), shards.get("parallelism"), count),
)
check("shards: one seed for every shard", re.fullmatch(r"\d+", option("--seed") or ""), option("--seed"))
profile = volumes["profile"]["configMap"]
check("shards: the profile from ConfigMap paystorm-profile", profile.get("name") == "paystorm-profile", profile)
check(
    "shards: the profile argument is the ConfigMap's profile.json5",
    profile.get("items") == [{"key": "profile.json5", "path": "profile.json5"}]
    and args[1] == mounts["profile"] + "/profile.json5",
    (profile.get("items"), args[1]),
)
pki = volumes["pki"]["secret"]
check("shards: the PKI from Secret paystorm-pki", pki.get("secretName") == "paystorm-pki", pki)
check("shards: --pki is the Secret's mount", option("--pki") == mounts["pki"], option("--pki"))
with tempfile.TemporaryDirectory() as scratch:
    folder = os.path.join(scratch, "pki")
    init = subprocess.run([PAYSTORM, "pki", "init", folder], capture_output=True, text=True)
    written = sorted(os.listdir(folder)) if init.returncode == 0 else []
keys = sorted(item["key"] for item in pki.get("items", []))
check("shards: the Secret's keys are the files `paystorm pki init` writes", keys == written, (keys, written, init.stderr))
check("shards: every key mounted under its own name", all(i["key"] == i["path"] for i in pki.get("items", [])), pki)
reports = option("--reports")
check("shards: reports on the shared volume", reports and reports.startswith(mounts["reports"] + "/"), reports)
check(
    "shards and merge: one claim",
    volumes["reports"] == {v["name"]: v for v in merge["template"]["spec"]["volumes"]}["reports"],
    volumes["reports"],
)

# The merge Job -------------------------------------------------------------------------------------------------
merge_pod = merge["template"]["spec"]
(wait,) = merge_pod["initContainers"]
(merger,) = merge_pod["containers"]
for c in (wait, merger):
    env = {e["name"]: e["value"] for e in c.get("env", [])}
    check(f"merge: {c['name']} waits for N shards in the shards' folder",
          env.get("SHARDS") == str(count) and env.get("RUN_DIR") == reports, env)
check("merge: not retried", merge.get("backoffLimit") == 0, merge.get("backoffLimit"))
wait_env = {e["name"]: e["value"] for e in wait["env"]}


def run_shell(container_spec, run_dir, env, fake_bin):
    """Runs a container's `sh -c` script with RUN_DIR pointed at a scratch folder and fake_bin first on PATH."""
    command = container_spec["command"]
    assert command[:2] == ["sh", "-c"], command
    full = {**os.environ, **{e["name"]: e["value"] for e in container_spec["env"]}, "RUN_DIR": run_dir, **env}
    full["PATH"] = fake_bin + os.pathsep + full["PATH"]
    return subprocess.run(["sh", "-c", command[2]], env=full, capture_output=True, text=True, timeout=30)


def fake(fake_bin, name, body):
    path = os.path.join(fake_bin, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, 0o755)


def shard_folder(run_dir, index, total=count):
    folder = os.path.join(run_dir, f"20260101T000000Z-smoke-42-shard{index}of{total}")
    os.makedirs(folder, exist_ok=True)
    return folder


with tempfile.TemporaryDirectory() as scratch:
    run_dir, fake_bin = os.path.join(scratch, "run"), os.path.join(scratch, "bin")
    os.makedirs(fake_bin)
    for index in range(count - 1):
        open(os.path.join(shard_folder(run_dir, index), "summary.json"), "w").close()
    last = shard_folder(run_dir, count - 1)  # its summary.json comes only while the merge waits
    # A folder of another shard count must not stand in for the missing shard.
    open(os.path.join(shard_folder(run_dir, count - 1, total=count + 1), "summary.json"), "w").close()
    fake(fake_bin, "sleep", f'echo slept >>"{scratch}/sleeps"; touch "{last}/summary.json"')
    done = run_shell(wait, run_dir, {}, fake_bin)
    sleeps = open(os.path.join(scratch, "sleeps")).read().count("slept") if os.path.exists(f"{scratch}/sleeps") else 0
    check("merge: waits until the last shard's summary.json, then goes on", done.returncode == 0 and sleeps == 1,
          (done.returncode, sleeps, done.stderr))
    os.remove(os.path.join(last, "summary.json"))
    fake(fake_bin, "sleep", "true")
    gave_up = run_shell(wait, run_dir, {"WAIT_SECONDS": "30"}, fake_bin)
    check(
        "merge: gives up after WAIT_SECONDS, naming the missing shard, and merges the others",
        gave_up.returncode == 0 and f"shard(s) {count - 1} of {count} after 30 s" in gave_up.stderr,
        (gave_up.returncode, gave_up.stderr),
    )
    check("merge: waits 3 hours at most by default", wait_env.get("WAIT_SECONDS") == "10800", wait_env)
    fake(fake_bin, "paystorm", 'printf "%s\\n" "$@"')
    merged = run_shell(merger, run_dir, {}, fake_bin)
    expected = ["merge"] + [f"{run_dir}/20260101T000000Z-smoke-42-shard{i}of{count}" for i in range(count)]
    expected += ["--out", f"{run_dir}/merged"]
    check("merge: paystorm merge of the N shards' folders into merged/", merged.stdout.split() == expected,
          (merged.stdout.split(), expected))

# The image -----------------------------------------------------------------------------------------------------
with open(CONTAINERFILE) as f:
    recipe = f.read()
check("image: the entrypoint is paystorm", re.search(r'^ENTRYPOINT \["paystorm"\]$', recipe, re.M), recipe[-200:])
packages = set(re.search(r'packages="([^"]+)"', recipe).group(1).split())


def needed(path):
    dynamic = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.+)\]", dynamic)


def package_of(path):
    for candidate in (path, os.path.realpath(path)):
        found = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
        if found.returncode == 0:
            return found.stdout.split(":")[0]
    return None


resolved = dict(re.findall(r"^\s*(\S+) => (/\S+)", subprocess.run(["ldd", PAYSTORM], capture_output=True,
                                                                   text=True, check=True).stdout, re.M))
runtime = os.path.dirname(resolved.get("libswiftCore.so", "/nowhere/x"))
swift = {name for name, path in resolved.items() if path.startswith(runtime + "/")}
linked = set(needed(PAYSTORM)).union(*(needed(resolved[name]) for name in swift)) - swift
owners = {name: package_of(resolved[name]) for name in linked if name in resolved}
# libc6 is in every Debian base; every other library paystorm or its Swift runtime links must be installed.
missing = {name: owner for name, owner in owners.items() if owner not in packages | {"libc6"}}
check("image: the Swift runtime comes from the toolchain", len(swift) >= 5, sorted(swift))
check("image: every Debian library paystorm links is installed", owners and not missing, missing or owners)

# The docs ------------------------------------------------------------------------------------------------------
with open(os.path.join(ROOT, "docs/scale-out.md")) as f:
    docs = f.read()
stated = ["paystorm-profile", "profile.json5", "paystorm-pki", "backoffLimitPerIndex", "1.33", *written]
check("docs: the ConfigMap, Secret, files and cluster version stated", all(s in docs for s in stated),
      [s for s in stated if s not in docs])

passed = sum(results)
print(f"{passed} passed, {len(results) - passed} failed")
sys.exit(0 if passed == len(results) else 1)
