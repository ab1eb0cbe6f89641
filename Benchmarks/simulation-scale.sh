#!/usr/bin/env bash
# Measures the world + chaos + oracle pipeline at scale, without network or signing:
# actions per second and peak memory (VmHWM) for a given number of accounts and actions.
#
#   [PAYSTORM_FOLD_ABOVE=n] [PAYSTORM_ENTRIES_PER_TRANSACTION=n] Benchmarks/simulation-scale.sh [accounts] [target-actions] [--no-checker]
#
# It builds a throwaway release package in a temporary folder that links this repository's
# Profile, AppStoreModel, Simulation, Chaos and Checking sources, so it needs nothing but the toolchain.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
accounts="${1:-1000000}"
actions="${2:-10000000}"
checker="${3:-}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/Sources/bench"
for module in Profile AppStoreModel Simulation Chaos Checking; do ln -s "$repo/Sources/$module" "$work/Sources/$module"; done
cp "$repo/Benchmarks/SimulationScale.swift" "$work/Sources/bench/main.swift"
cat > "$work/Package.swift" <<'PKG'
// swift-tools-version: 6.0
import PackageDescription
let package = Package(
    name: "bench",
    targets: [
        .target(name: "Profile"),
        .target(name: "AppStoreModel"),
        .target(name: "Simulation", dependencies: ["AppStoreModel", "Profile"]),
        .target(name: "Chaos", dependencies: ["Simulation", "Profile", "AppStoreModel"]),
        .target(name: "Checking", dependencies: ["Simulation", "Chaos", "Profile", "AppStoreModel"]),
        .executableTarget(name: "bench", dependencies: ["Profile", "Simulation", "Chaos", "Checking"]),
    ]
)
for target in package.targets {
    target.swiftSettings = [
        .enableUpcomingFeature("InternalImportsByDefault"), .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"), .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
    ]
}
PKG
(cd "$work" && swift build -c release --product bench >/dev/null)
"$work/.build/release/bench" "$accounts" "$actions" $checker
