#!/usr/bin/env bash
# Renders an output folder's report.html in headless Chromium and saves a PNG,
# to look at the page without a desktop (CI artefacts, reviews).
# Usage: scripts/screenshot.sh OUT_DIR [PNG]   (PNG defaults to OUT_DIR/report.png)
# Environment: WIDTH and HEIGHT of the window (default 1280x2400).
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 OUT_DIR [PNG]" >&2
  exit 2
fi
out_dir=$1
page="$out_dir/report.html"
if [ ! -f "$page" ]; then
  echo "error: $page not found (run cartograph first, or pass its --out folder)" >&2
  exit 2
fi
png=${2:-$out_dir/report.png}
browser=""
for candidate in chromium chromium-headless-shell google-chrome; do
  if command -v "$candidate" >/dev/null 2>&1; then
    browser=$candidate
    break
  fi
done
if [ -z "$browser" ]; then
  echo "error: no headless browser found (tried chromium, chromium-headless-shell, google-chrome);" >&2
  echo "       install one, e.g. apt install chromium" >&2
  exit 3
fi
# Chromium wants absolute paths for both the page URL and the PNG.
abs() { (cd "$(dirname "$1")" && printf '%s/%s\n' "$(pwd -P)" "$(basename "$1")"); }
page_abs=$(abs "$page")
mkdir -p "$(dirname "$png")"
png_abs=$(abs "$png")
# A throwaway profile: no state shared with (or locked by) a running browser.
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --disable-quic --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --no-first-run --no-default-browser-check \
  --window-size="${WIDTH:-1280},${HEIGHT:-2400}" \
  --screenshot="$png_abs" "file://$page_abs" >/dev/null 2>&1 || {
  echo "error: $browser failed to render $page" >&2
  exit 1
}
if [ ! -s "$png_abs" ]; then
  echo "error: $browser wrote no screenshot" >&2
  exit 1
fi
echo "$png_abs"
