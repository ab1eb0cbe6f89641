#!/usr/bin/env bash
# Prepares the build context of deploy/container/Containerfile: builds paystorm in release mode and copies the
# binary, the Swift runtime libraries it loads (those ldd resolves inside the toolchain, such as libswiftCore.so
# and libFoundation.so) and Profiles/ into one folder. The image cannot build paystorm itself: that would need a
# Swift image from a container registry, so the toolchain on this machine builds it and the image only runs it.
# Run it on the Debian release the Containerfile's base is (the binary links that release's libcurl and OpenSSL).
# Usage: deploy/container/prepare.sh [CONTEXT]   (default .build/container; prints the context's path)
set -euo pipefail
cd "$(dirname "$0")/../.."
context="${1:-.build/container}"
swift build -c release --product paystorm 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]' >&2 || true
binary="$(swift build -c release --show-bin-path)/paystorm"
[[ -x "$binary" ]] || { echo "prepare.sh: the release build failed (no $binary)" >&2; exit 70; }
# The toolchain's runtime folder, where libswiftCore.so is: every library ldd finds there goes into the image.
runtime="$(dirname "$(ldd "$binary" | awk '$1 == "libswiftCore.so" { print $3 }')")"
[[ "$runtime" == /* ]] || { echo "prepare.sh: ldd finds no libswiftCore.so for $binary" >&2; exit 70; }
rm -rf "$context"
mkdir -p "$context/swift-runtime"
cp deploy/container/Containerfile "$binary" "$context/"
cp -R Profiles "$context/Profiles"
ldd "$binary" | awk -v dir="$runtime/" 'index($3, dir) == 1 { print $3 }' | while read -r library; do
    cp "$library" "$context/swift-runtime/"
done
echo "prepare.sh: $(ls "$context/swift-runtime" | wc -l) Swift runtime libraries from $runtime" >&2
echo "$context"
