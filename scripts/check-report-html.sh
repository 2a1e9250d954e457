#!/usr/bin/env bash
# Opens an output folder's report.html in headless Chromium and checks that the
# graph explorer ran and drew nodes (reading the DOM after its script ran),
# then saves a screenshot of the explorer to look at.
# Usage: scripts/check-report-html.sh OUT_DIR [FRAGMENT]
#   FRAGMENT: what to open: `explore` (default: the explorer over the whole
#   window, on its overview) or `explore=NODE` (on an operation or schema, by
#   id or name: `explore=op:getBook`, `explore=Book`).
# Environment: PNG (default OUT_DIR/report-graph.png), WIDTH x HEIGHT of the
# window (default 1500x1000), BROWSER (default: chromium on the PATH).
# The DOM after the script ran is kept next to the PNG (report-graph.dom.html).
# Exit status: 0 drawn, 1 not drawn, 2 usage, 3 no browser.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 OUT_DIR [explore|explore=NODE]" >&2
  exit 2
fi
out_dir=$1
fragment=${2:-explore}
page="$out_dir/report.html"
if [ ! -f "$page" ]; then
  echo "error: $page not found (run cartograph first, or pass its --out folder)" >&2
  exit 2
fi
browser=${BROWSER:-}
if [ -z "$browser" ]; then
  for candidate in chromium chromium-headless-shell google-chrome; do
    if command -v "$candidate" >/dev/null 2>&1; then
      browser=$candidate
      break
    fi
  done
fi
if [ -z "$browser" ]; then
  echo "error: no headless browser found (tried chromium, chromium-headless-shell, google-chrome);" >&2
  echo "       install one, e.g. apt-get install -y chromium" >&2
  exit 3
fi
abs() { (cd "$(dirname "$1")" && printf '%s/%s\n' "$(pwd -P)" "$(basename "$1")"); }
page_abs=$(abs "$page")
png=${PNG:-$out_dir/report-graph.png}
mkdir -p "$(dirname "$png")"
png_abs=$(abs "$png")
dom="${png_abs%.png}.dom.html"
url="file://$page_abs#$fragment"

# A throwaway profile, and nothing that talks to the network: the page must
# not need it, and a check must not phone home.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --no-default-browser-check --disable-background-networking
  --disable-component-update --disable-sync --hide-scrollbars
  --user-data-dir="$profile" --window-size="${WIDTH:-1500},${HEIGHT:-1000}")

started=$(date +%s%N)
if ! "$browser" "${flags[@]}" --dump-dom "$url" >"$dom" 2>/dev/null; then
  echo "error: $browser failed to load $page" >&2
  exit 1
fi
ended=$(date +%s%N)
root=$(grep -o '<div id="gx"[^>]*>' "$dom" | head -n 1 || true)
attr() { printf '%s' "$root" | sed -n "s/.* $1=\"\\([^\"]*\\)\".*/\\1/p"; }
state=$(attr data-state)
nodes=$(grep -o 'class="gx-node [^"]*"' "$dom" | wc -l | tr -d ' ')
if [ "$state" != "ready" ] || [ "$nodes" -eq 0 ]; then
  echo "error: the explorer did not draw the graph (state '${state:-none}', $nodes nodes); DOM in $dom" >&2
  exit 1
fi
"$browser" "${flags[@]}" --screenshot="$png_abs" "$url" >/dev/null 2>&1 || {
  echo "error: $browser failed to take the screenshot" >&2
  exit 1
}
echo "ok: $nodes nodes and $(attr data-edges) edges drawn, laid out in $(attr data-layout-ms) ms, drawn in $(attr data-render-ms) ms; page loaded and dumped in $(( (ended - started) / 1000000 )) ms; screenshot $png_abs"
