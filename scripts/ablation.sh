#!/usr/bin/env bash
# The Morest-style ablation on the demo API: the full tool, --no-feedback and
# --no-graph, each over the same seeds and request budget. Prints, per mode,
# the mean operations answered 2xx and planted faults found.
# Usage: scripts/ablation.sh [REQUESTS] [SEEDS...]   (default 3000, seeds 1-5)
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${1:-3000}
shift || true
seeds=("${@:-1 2 3 4 5}")
read -r -a seeds <<< "${seeds[*]}"
cargo build --release --quiet
bin=target/release/cartograph
out=$(mktemp -d)
for mode in full no-feedback no-graph; do
  flag=()
  [ "$mode" != full ] && flag=("--$mode")
  ops=0; faults=0; n=0; detail=""
  for seed in "${seeds[@]}"; do
    summary=$("$bin" demo --seed "$seed" --max-requests "$requests" --out "$out/$mode-$seed" "${flag[@]}" 2>/dev/null || true)
    o=$(sed -n 's/.*operations answered 2xx: \([0-9]*\) of.*/\1/p' <<< "$summary")
    f=$(sed -n 's/.*planted faults found: \([0-9]*\) of.*/\1/p' <<< "$summary")
    which=$(sed -n 's/.*planted faults found: [0-9]* of [0-9]* (\(.*\))/\1/p' <<< "$summary")
    ops=$((ops + o)); faults=$((faults + f)); n=$((n + 1))
    detail="$detail seed $seed: $o ops, $f faults (${which:-none});"
  done
  printf '%-12s ops 2xx %s  planted faults %s  |%s\n' "$mode" \
    "$(awk "BEGIN { printf \"%.1f\", $ops / $n }")" \
    "$(awk "BEGIN { printf \"%.1f\", $faults / $n }")" "$detail"
done
rm -rf "$out"
