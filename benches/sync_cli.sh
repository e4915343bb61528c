#!/usr/bin/env bash
# Times `syncline sync` against the awk parse floor on the 1,000,000-row
# ApproximateTime input of ../shared/perf, side by side in one run
# (1 warm-up, then 5 interleaved runs of each; medians and their ratio).
# Usage: benches/sync_cli.sh [SCRATCH_DIR]   (after cargo build --release)
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${SYNCLINE_SHARED:-$(cd .. && pwd)/shared}
DIR=${1:-$(mktemp -d)}
F="$DIR/perf_sync.csv"
[ -s "$F" ] || python3 "$SHARED/perf/gen_perf.py" sync --format csv > "$F"
BIN=$(pwd)/target/release/syncline
SYNC="$BIN sync --policy approximate --topics t0,t1,t2 --queue-size 10 --age-penalty 0.1 -"
AWK="awk -F, '{s+=\$2} END{print s}'"
echo "sets: $($SYNC < "$F" | wc -l) (expected 71430)"
echo "sha256: $($SYNC < "$F" | sha256sum | cut -d' ' -f1)"
echo "expected 1614ac9f4ae4c11db9ab17b6066eec14a4eaa4c9cf0af398d009557a18195652"
t() { local s e; s=$(date +%s%N); sh -c "exec $1 < $F > /dev/null"; e=$(date +%s%N); echo $(((e - s) / 1000)); }
t "$SYNC" > /dev/null; t "$AWK" > /dev/null
sync=(); awk=()
for _ in 1 2 3 4 5; do sync+=("$(t "$SYNC")"); awk+=("$(t "$AWK")"); done
med() { printf '%s\n' "$@" | sort -n | sed -n 3p; }
ms=$(med "${sync[@]}"); ma=$(med "${awk[@]}")
echo "syncline sync: median ${ms} us (runs: ${sync[*]})"
echo "awk floor:     median ${ma} us (runs: ${awk[*]})"
echo "ratio: $(python3 -c "print(round($ms / $ma, 2))") x the awk floor (target <= 2.25)"
