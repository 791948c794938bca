#!/bin/bash
# Runs every fuzz target for a count of executions: `short` (make test's
# fuzz-short, a smoke test of each target, about a second each on a quiet
# 2-core machine) or `long` (make fuzz, about 2 minutes each).
#
# Each package's instrumented test binary is built once (go test -c -fuzz)
# and run for each of its targets, as go test -fuzz would, with the same
# corpus cache ($GOCACHE/fuzz): one list for both runs, and a little less
# CPU than a go test -fuzz per target (35.3 s against 39.7 s for the short
# run, both warm; the fuzzing itself is most of it).
# Budgets are counts of executions, not durations: Go 1.26's fuzzing
# coordinator can fail a duration-bounded run with a bare "context
# deadline exceeded" as the time runs out (go.dev/issue/75804, fixed in Go
# 1.27); a count has no deadline to race.
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
run=${1:-}
case $run in
short | long) ;;
*) echo "usage: $0 short|long" >&2; exit 2 ;;
esac
# package, target, short count, long count
targets='
internal/db       FuzzSplitScript  20000 2000000
internal/db       FuzzInterpolate  20000 2000000
internal/db       FuzzOpenURL      10000 1000000
internal/pgbench  FuzzParse        40000 3000000
internal/cli      FuzzRunFlags       800  100000
internal/agent    FuzzWatchRequest  5000  800000
internal/sysprobe FuzzParsers       8000 1000000
'
# FUZZ_BIN (make's TEST_BIN/fuzz) keeps the binaries: go test -c skips the
# link when the binary there is up to date. Else a directory for this run.
if [ -n "${FUZZ_BIN:-}" ]; then
	dir=$FUZZ_BIN
	mkdir -p "$dir"
else
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
fi
cache=$($GO env GOCACHE)/fuzz/$($GO list -m)
for pkg in $(awk 'NF { print $1 }' <<<"$targets" | uniq); do
	names=$(awk -v p="$pkg" '$1 == p { print $2 }' <<<"$targets" | paste -sd'|')
	echo "go test -c -fuzz '^($names)\$' ./$pkg/"
	$GO test -c -fuzz "^($names)\$" -o "$dir/${pkg//\//_}.test" "./$pkg/"
done
while read -r pkg name short long; do
	[ -n "$pkg" ] || continue
	n=$([ "$run" = short ] && echo "$short" || echo "$long")
	echo "fuzz $name in ./$pkg/ for ${n} executions"
	s=$(date +%s)
	(cd "$pkg" && "$dir/${pkg//\//_}.test" -test.run '^$' -test.fuzz "^$name\$" -test.fuzztime "${n}x" \
		-test.fuzzcachedir "$cache/$pkg")
	echo "ok  	$name $(( $(date +%s) - s ))s"
done <<<"$targets"
