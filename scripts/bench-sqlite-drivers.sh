#!/usr/bin/env bash
# Compare the two SQLite drivers side by side in one run: the same sledge
# built against modernc.org/sqlite (pure Go) and mattn/go-sqlite3
# (cgo, the default where cgo builds). Alternates the drivers for ROUNDS rounds and
# prints build time, NOPM and TPM per round plus the ratios mattn/modernc.
# Usage: scripts/bench-sqlite-drivers.sh [ROUNDS] [DURATION] [VUS]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}
DURATION=${2:-20s}
VUS=${3:-2}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -tags sqlite_modernc -o "$work/sledge-modernc" ./cmd/sledge
CGO_ENABLED=1 go build -o "$work/sledge-mattn" ./cmd/sledge

json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(d$1)"; }

printf '%-8s %5s %8s %10s %10s\n' driver round build_s nopm tpm
declare -A bsum nsum tsum
for r in $(seq 1 "$ROUNDS"); do
  for drv in modernc mattn; do
    db="$work/$drv-$r.db"
    b=$("$work/sledge-$drv" build --db "sqlite://$db" --json | json "['total_s']")
    out=$("$work/sledge-$drv" run --db "sqlite://$db" --vus "$VUS" --rampup 5s --duration "$DURATION" --seed 1 --json)
    n=$(echo "$out" | json "['nopm']")
    t=$(echo "$out" | json "['tpm']")
    printf '%-8s %5d %8.2f %10.0f %10.0f\n' "$drv" "$r" "$b" "$n" "$t"
    bsum[$drv]=$(python3 -c "print(${bsum[$drv]:-0}+$b)")
    nsum[$drv]=$(python3 -c "print(${nsum[$drv]:-0}+$n)")
    tsum[$drv]=$(python3 -c "print(${tsum[$drv]:-0}+$t)")
    rm -f "$db" "$db-wal" "$db-shm"
  done
done
python3 - "${bsum[modernc]}" "${bsum[mattn]}" "${nsum[modernc]}" "${nsum[mattn]}" "${tsum[modernc]}" "${tsum[mattn]}" <<'PY'
import sys
bm, bt, nm, nt, tm, tt = map(float, sys.argv[1:])
print(f"ratio mattn/modernc: build time {bt/bm:.2f}, NOPM {nt/nm:.2f}, TPM {tt/tm:.2f}")
PY
