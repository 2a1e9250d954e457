#!/usr/bin/env bash
# The speed guard: tool CPU per request with every oracle on, against a
# trivial local server, at concurrency 16 and 1 (`cargo bench --bench engine`,
# its first part only), compared with the figures kept in
# benches/baseline.json; fails on a regression of more than 15%.
#   scripts/bench-guard.sh            measure and compare
#   scripts/bench-guard.sh --update   measure and keep the new figures
# Measure on an otherwise quiet machine: the figure is the tool's CPU time,
# which other work on the cores inflates less than wall time, but still
# does. The bench keeps the cores from idling with spinners at nice 19
# (ENGINE_BENCH_IDLE=1 leaves them idle): on idle cores, concurrency 1
# measures the cores' wake-ups more than the tool.
set -euo pipefail
cd "$(dirname "$0")/.."
update=
[ "${1:-}" = "--update" ] && update=1
out=$(ENGINE_BENCH_TRIVIAL_ONLY=1 ENGINE_BENCH_UPDATE=$update cargo bench --locked --bench engine 2>&1 | tee /dev/stderr)
if [ -n "$update" ]; then
  c16=$(sed -n 's/.*trivial server: \([0-9.]*\) µs CPU per request.*concurrency 16$/\1/p' <<<"$out")
  c1=$(sed -n 's/.*trivial server: \([0-9.]*\) µs CPU per request.*concurrency 1$/\1/p' <<<"$out")
  [ -n "$c16" ] && [ -n "$c1" ] || { echo "bench-guard: no figures in the bench's output" >&2; exit 1; }
  python3 - "$c16" "$c1" <<'PY'
import json, sys
path = "benches/baseline.json"
kept = json.load(open(path))
kept["c16_us"], kept["c1_us"] = float(sys.argv[1]), float(sys.argv[2])
json.dump(kept, open(path, "w"), indent=2, ensure_ascii=False)
open(path, "a").write("\n")
PY
  echo "bench-guard: kept c16 ${c16} µs, c1 ${c1} µs in benches/baseline.json"
fi
