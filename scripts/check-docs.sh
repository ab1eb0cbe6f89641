#!/usr/bin/env bash
# Builds the DocC documentation of every Swift library module and fails on any DocC warning (a broken
# ``symbol`` link, a documented parameter that does not exist, ...). Modules with a Docs.docc catalog
# are converted with it, the others from their symbol graphs alone. Uses only the toolchain's `docc`.
# Usage: scripts/check-docs.sh [swift package options]
#   The options (for example `-Xswiftc -warnings-as-errors`) must match the last build's, so that
#   `swift package dump-symbol-graph` reuses it instead of building again.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
graphs="$(swift package "$@" dump-symbol-graph | sed -n 's/^Files written to //p')"
[[ -d "$graphs" ]] || { echo "check-docs.sh: swift package dump-symbol-graph wrote no symbol graphs" >&2; exit 70; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failed=()
for source in Sources/*; do
    module="$(basename "$source")"
    # Library modules only: the C targets and the executable have no symbol graph of their own here.
    [[ -f "$graphs/$module.symbols.json" ]] || continue
    compgen -G "$source/*.swift" >/dev/null || continue
    mkdir -p "$work/$module/graphs"
    # One module per conversion: its own graph and its extensions of other modules' types.
    cp "$graphs/$module.symbols.json" "$work/$module/graphs/"
    cp "$graphs/$module"@*.symbols.json "$work/$module/graphs/" 2>/dev/null || true
    catalog=()
    [[ -d "$source/Docs.docc" ]] && catalog=("$root/$source/Docs.docc")
    echo "-- $module${catalog:+ (Docs.docc)}"
    # From the scratch directory: without a catalog argument docc looks for one in the working directory.
    if ! (cd "$work/$module" && docc convert "${catalog[@]}" --additional-symbol-graph-dir graphs \
        --output-dir out --fallback-display-name "$module" --fallback-bundle-identifier "paystorm.$module" \
        --warnings-as-errors 2>&1 | sed '/^$/d'); then
        failed+=("$module")
    fi
done
if (( ${#failed[@]} )); then
    echo "DocC warnings in: ${failed[*]}" >&2
    exit 1
fi
