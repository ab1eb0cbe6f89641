#!/usr/bin/env bash
# The Kubernetes manifests in deploy/kubernetes and the image recipe in deploy/container: every manifest checked
# against Kubernetes' own schemas (kubernetes-validate, which bundles them, so nothing is fetched), the Job's
# failure handling, names and shard count cross-checked, the merge Job's wait and merge commands run against a
# scratch folder, and the Containerfile's packages checked against what paystorm links. kubernetes-validate goes
# into Tests/Kubernetes/.venv on first use (scripts/python-venv.sh). Sends nothing over the network.
# Usage: Tests/Kubernetes/run.sh   (uses $PAYSTORM, else .build/debug/paystorm). Ends with `N passed, M failed`.
set -euo pipefail
cd "$(dirname "$0")/../.."
PAYSTORM="${PAYSTORM:-$PWD/.build/debug/paystorm}"
if [[ ! -x "$PAYSTORM" ]]; then
    echo "run.sh: no paystorm binary at $PAYSTORM (run 'swift build' or set PAYSTORM)" >&2
    exit 66
fi
python="$(scripts/python-venv.sh Tests/Kubernetes/.venv "kubernetes_validate, yaml" \
    kubernetes-validate==1.37.0 pyyaml==6.0.3)"
"$python" Tests/Kubernetes/test_manifests.py "$PWD" "$PAYSTORM"
