#!/usr/bin/env bash
# Proves the image without a container registry: makes a Debian bookworm root file system with debootstrap
# (the runtime packages included), imports it into podman as the base, builds deploy/container/Containerfile on
# it from the context prepare.sh makes, and runs `paystorm run` (the smoke profile against the embedded ledger)
# inside it with no network but loopback. Exits with the run's exit code (0 when the run passed).
# Needs root, podman, debootstrap and a reachable Debian mirror (runc too on a host with hybrid cgroups); 5 to 15
# minutes the first time (debootstrap, the release build), then the smoke run's minute. Not run by CI. See
# deploy/container/README.md.
# Usage: deploy/container/prove.sh [WORKDIR]   (default .build/container-proof; DEBIAN_MIRROR picks the mirror)
set -euo pipefail
cd "$(dirname "$0")/../.."
work="${1:-.build/container-proof}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
base=localhost/paystorm-debian-base:bookworm
image=localhost/paystorm:proof
for tool in podman debootstrap; do
    command -v "$tool" >/dev/null || { echo "prove.sh: needs $tool (apt-get install $tool)" >&2; exit 69; }
done
(( $(id -u) == 0 )) || { echo "prove.sh: needs root (debootstrap, and podman's rootful storage)" >&2; exit 77; }
mkdir -p "$work"
work="$(cd "$work" && pwd)"
step() { echo "== $* ($(date -u +%H:%M:%S))"; }
# Rootful podman gives containers limits above this shell's hard ones (1048576 open files), which only a process
# with CAP_SYS_RESOURCE may set; pass limits this shell may set instead (PAYSTORM_ULIMITS overrides them).
read -r -a limits <<<"${PAYSTORM_ULIMITS:---ulimit nofile=$(ulimit -Hn):$(ulimit -Hn) --ulimit nproc=4096:4096}"
# crun refuses a host whose cgroup v2 mount holds controllers beside cgroup v1 ("hybrid"); runc runs there.
runtime=()
if [[ -n "${PODMAN_RUNTIME:-}" ]]; then
    runtime=(--runtime "$PODMAN_RUNTIME")
elif [[ -n "$(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null)" ]]; then
    command -v runc >/dev/null || { echo "prove.sh: hybrid cgroups: needs runc (apt-get install runc)" >&2; exit 69; }
    runtime=(--runtime runc)
fi

if ! podman image exists "$base"; then
    step "debootstrap bookworm from $mirror"
    rm -rf "$work/rootfs"
    debootstrap --variant=minbase \
        --include=libcurl4,libssl3,libmicrohttpd12,libsqlite3-0,zlib1g,libdeflate0,libstdc++6,libgcc-s1,ca-certificates \
        bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
        { tail -20 "$work/debootstrap.log" >&2; exit 70; }
    step "import the root file system as $base"
    tar -C "$work/rootfs" -c . | podman import - "$base"
    rm -rf "$work/rootfs"
fi

step "prepare the build context"
context="$(deploy/container/prepare.sh "$work/context")"
step "build $image from $base (no network: the base holds every package)"
podman build "${runtime[@]}" "${limits[@]}" --network none --build-arg BASE="$base" -t "$image" -f "$context/Containerfile" "$context"
echo "entrypoint: $(podman image inspect --format '{{json .Config.Entrypoint}}' "$image")"

step "paystorm run inside the image (smoke profile, embedded ledger, loopback only)"
rm -rf "$work/reports"
mkdir -p "$work/reports"
code=0
podman "${runtime[@]}" run "${limits[@]}" --rm --network none -v "$work/reports:/reports" "$image" run --reports /reports --plain || code=$?
step "the run exited $code; its report:"
ls "$work/reports/latest/"
exit "$code"
