#!/usr/bin/env bash
# Installs the Debian packages PayStorm builds against, when missing. Needs root (or sudo).
# Usage: scripts/install-deps.sh [--tests]   (--tests adds what the test suite needs)
set -euo pipefail
packages=(pkg-config libssl-dev libcurl4-openssl-dev libmicrohttpd-dev libsqlite3-dev zlib1g-dev libdeflate-dev openssl)
if [[ "${1:-}" == "--tests" ]]; then
    packages+=(python3 python3-venv jq curl)  # jq: the example backend profile's probe transform; curl: the API's HTTPS test
    packages+=(chromium)  # Tests/Render: report.html's charts drawn by headless Chromium
    packages+=(binutils)  # Tests/Kubernetes: readelf, to check the Containerfile's packages against what paystorm links
fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# python3-venv is satisfied by a python3 that already has venv (pyenv builds do).
if [[ " ${missing[*]} " == *" python3-venv "* ]] && command -v python3 >/dev/null && python3 -c 'import venv, ensurepip' 2>/dev/null; then
    missing=("${missing[@]/python3-venv}")
fi
if [[ " ${missing[*]} " == *" python3 "* ]] && command -v python3 >/dev/null; then
    missing=("${missing[@]/python3}")
fi
read -r -a missing <<< "${missing[*]}"
if (( ${#missing[@]} )); then
    echo "installing: ${missing[*]}"
    sudo_cmd=()
    [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi
