#!/usr/bin/env bash
# report.html as a browser draws it: a short flawed run (about 8 s) against the embedded ledger, its charts
# rendered to PNG by headless Chromium (Debian's `chromium`) and each checked to hold a drawing by
# Tests/Render/check_charts.py (the Python standard library decodes the PNG). The same page with its charts'
# drawing stripped must then fail the check, so a blank chart cannot pass. Skipped, saying so, where Chromium is
# not installed (scripts/install-deps.sh --tests installs it).
# Usage: Tests/Render/run.sh   (uses $PAYSTORM, else builds .build/debug/paystorm with CI's flags; RENDER_KEEP=DIR
# keeps the screenshot and report.html there)
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v chromium >/dev/null; then
    echo "render suite skipped: chromium is not installed"
    exit 0
fi
PAYSTORM="$(scripts/paystorm-binary.sh)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat >"$work/render.json5" <<'PROFILE'
{
  name: "render",
  seed: 11,
  target: { embeddedLedger: true, bundleId: "com.example.paystorm", environment: "Sandbox" },
  catalog: { products: [{ id: "coins.100", type: "consumable", priceMilli: 990 }] },
  population: { accounts: 40, devicesPerAccount: 1 },
  actionMix: { consumable: 1 },
  schedule: [{ kind: "ramp", from: 5, to: 30, seconds: 5 }],
  faults: { duplicate: { probability: 0.3, maxDelaySeconds: 1 } },
  settleSeconds: 1,
}
PROFILE
# It exits 1 (violations, which the charts mark); the report is what matters.
"$PAYSTORM" run "$work/render.json5" --quiet --no-history --reports "$work/reports" --flaw double-grant \
    >"$work/run.log" 2>&1 || true
report="$work/reports/latest/report.html"
if ! grep -q 'class="marker"' "$report" 2>/dev/null; then
    cat "$work/run.log"
    echo "render suite: the double-granting run left no report.html with a violation marked"
    exit 1
fi
# shoot PAGE PNG: the page's top pixels at one pixel per CSS pixel, tall enough for every chart (240 px apart).
shoot() {
    timeout 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
        --window-size=920,$((charts * 240 + 40)) --screenshot="$2" "file://$1" >"$work/chromium.log" 2>&1 ||
        { cat "$work/chromium.log"; echo "render suite: chromium failed"; exit 1; }
}
charts=$(python3 Tests/Render/check_charts.py page "$report" "$work/charts.html")
# Throughput, latency and the percentile plot at least.
(( charts >= 3 )) || { echo "render suite: report.html has $charts charts, expected 3 or more"; exit 1; }
shoot "$work/charts.html" "$work/charts.png"
python3 Tests/Render/check_charts.py check "$work/charts.png" "$charts"
python3 Tests/Render/check_charts.py page "$report" "$work/blank.html" --blank >/dev/null
shoot "$work/blank.html" "$work/blank.png"
if python3 Tests/Render/check_charts.py check "$work/blank.png" "$charts" >"$work/blank.log"; then
    echo "render suite: the check passed charts stripped of their drawing"
    exit 1
fi
sed 's/^/  stripped page, as it should: /' "$work/blank.log"
[[ -z "${RENDER_KEEP:-}" ]] || cp "$work/charts.png" "$report" "$RENDER_KEEP"/
echo "render suite passed"
