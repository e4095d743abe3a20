#!/usr/bin/env bash
# perf-ab.sh: A/B one test/perf measurement between two builds of silkworm,
# alternating them in one run on the same machine.
#
# Usage:
#   scripts/perf-ab.sh OLD [NEW] [TEST]
#
#   OLD, NEW  a git revision (commit, tag, branch, HEAD~1, ...) or the path
#             of an already built silkworm binary. NEW defaults to the
#             working tree as it is, uncommitted changes included.
#   TEST      the test/perf test to run (default TestDataPath; also
#             PERF_AB_TEST).
#
# Environment:
#   PERF_AB_ROUNDS=n       rounds (default 3); round 1 runs OLD then NEW,
#                          round 2 NEW then OLD, and so on
#   PERF_AB_TEST=name      the test, when not given as the third argument
#   PERF_AB_COLUMNS=regex  the table columns (by header, awk regex) whose
#                          means are compared (default
#                          'rec/s|broker CPU|p50|p99')
#   PERF_AB_TIMEOUT=d      go test -timeout of one run (default 60m)
#   PERF_AB_KEEP=1         keep the temporary directory (binaries, outputs)
#   SILKWORM_PERF_*        passed to the test as they are: RECORDS, CASES,
#                          SECONDS, RATE, ... (see test/perf/README.md)
#
# Each revision is exported with `git archive` into a temporary directory
# under /tmp and built there with `go build ./cmd/silkworm`; the repository's
# working tree, index, branch and worktree list are never touched. The
# measuring code is the current tree's test/perf, compiled once, so both
# binaries are measured by the same harness. The script prints every run's
# tables, then for every table row and every matching column the mean (and
# with several rounds the range) over the rounds of OLD and NEW, and the
# ratio of the means NEW/OLD.
set -euo pipefail

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//' >&2
	exit 2
}

[ $# -ge 1 ] && [ $# -le 3 ] || usage
case "$1" in -h | --help) usage ;; esac
old_spec=$1
new_spec=${2:-}
test_name=${3:-${PERF_AB_TEST:-TestDataPath}}
rounds=${PERF_AB_ROUNDS:-3}
columns=${PERF_AB_COLUMNS:-'rec/s|broker CPU|p50|p99'}
timeout=${PERF_AB_TIMEOUT:-60m}
case "$rounds" in '' | *[!0-9]* | 0)
	echo "PERF_AB_ROUNDS=$rounds: want a positive integer" >&2
	exit 2
	;;
esac

root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d /tmp/silkworm-perf-ab.XXXXXX)
cleanup() {
	if [ "${PERF_AB_KEEP:-}" = 1 ]; then
		echo "kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT

# build SPEC SIDE: leaves $tmp/SIDE/silkworm and prints a label for SPEC.
build() {
	local spec=$1 side=$2 bin=$tmp/$2/silkworm
	mkdir -p "$tmp/$side"
	if [ -z "$spec" ]; then
		(cd "$root" && go build -o "$bin" ./cmd/silkworm) >&2 || return 1
		echo "working tree ($(git -C "$root" rev-parse --short HEAD) + changes)"
	elif [ -f "$spec" ] && [ -x "$spec" ]; then
		cp "$spec" "$bin" || return 1
		echo "binary $spec"
	else
		local rev
		rev=$(git -C "$root" rev-parse --verify --quiet "$spec^{commit}") || {
			echo "$spec: neither a revision nor an executable file" >&2
			return 1
		}
		mkdir -p "$tmp/$side/src"
		git -C "$root" archive "$rev" | tar -x -C "$tmp/$side/src" || return 1
		(cd "$tmp/$side/src" && go build -o "$bin" ./cmd/silkworm) >&2 || return 1
		rm -rf "$tmp/$side/src"
		echo "$spec ($(git -C "$root" rev-parse --short "$rev"))"
	fi
}

echo "building OLD: ${old_spec}" >&2
old_label=$(build "$old_spec" old)
echo "building NEW: ${new_spec:-working tree}" >&2
new_label=$(build "$new_spec" new)
echo "building the test/perf harness of the working tree" >&2
(cd "$root" && go test -c -o "$tmp/perf.test" ./test/perf)

# run SIDE ROUND: runs the test against SIDE's binary; its stdout goes to
# $tmp/SIDE.ROUND.out, the tables are echoed.
run() {
	local side=$1 round=$2 out=$tmp/$1.$2.out label
	if [ "$side" = old ]; then label=$old_label; else label=$new_label; fi
	echo
	echo "### round $round: $side = $label"
	echo
	if ! (cd "$root/test/perf" && SILKWORM_PERF=1 SILKWORM_PERF_BROKER_BIN="$tmp/$side/silkworm" \
		"$tmp/perf.test" -test.count=1 -test.v -test.timeout "$timeout" \
		-test.run "^${test_name}\$" >"$out" 2>&1); then
		tail -n 60 "$out"
		echo "perf-ab: $test_name failed against $side ($label)" >&2
		exit 1
	fi
	grep -q -- "--- PASS: ${test_name} " "$out" || {
		tail -n 60 "$out"
		echo "perf-ab: $test_name did not run (skipped or no such test)" >&2
		exit 1
	}
	# The tables and their captions, without go test's own lines and logs.
	grep -v -E '^(=== |--- |    |PASS$|FAIL|ok  )' "$out" || true
}

for round in $(seq 1 "$rounds"); do
	if [ $((round % 2)) = 1 ]; then
		run old "$round"
		run new "$round"
	else
		run new "$round"
		run old "$round"
	fi
done

echo
echo "### NEW/OLD over $rounds round(s): $test_name; OLD = $old_label, NEW = $new_label"
echo
# Every Markdown table row is keyed by its first cell; a column counts when
# its header matches $columns and the cell is a number. Means over the
# rounds, then NEW/OLD.
for side in old new; do
	for f in "$tmp/$side".*.out; do
		printf '%s\t%s\n' "$side" "$f"
	done
done | while IFS=$'\t' read -r side f; do
	awk -v side="$side" '
		function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
		/^\|/ {
			if ($0 ~ /^\|[-:| ]+\|?[ \t]*$/) {
				# The separator: the previous line was the header.
				nh = split(last, h, "|")
				for (i = 1; i <= nh; i++) hdr[i] = trim(h[i])
				intable = 1
				next
			}
			last = $0
			if (!intable) next
			n = split($0, c, "|")
			key = trim(c[2])
			for (i = 3; i < n; i++) {
				v = trim(c[i])
				if (v ~ /^-?[0-9]+(\.[0-9]+)?$/) printf "%s\t%s\t%s\t%s\n", side, key, hdr[i], v
			}
			next
		}
		{ intable = 0; last = "" }
	' "$f"
done | awk -F'\t' -v cols="$columns" '
	$3 ~ cols {
		k = $2 SUBSEP $3
		if (!(k in seen)) { seen[k] = 1; order[++n] = k }
		sum[$1, k] += $4; cnt[$1, k]++
		if (!(($1, k) in lo) || $4 < lo[$1, k]) lo[$1, k] = $4
		if (!(($1, k) in hi) || $4 > hi[$1, k]) hi[$1, k] = $4
	}
	function cell(side, k, m) {
		m = num(sum[side, k] / cnt[side, k])
		if (cnt[side, k] > 1) m = m " (" num(lo[side, k]) "–" num(hi[side, k]) ")"
		return m
	}
	function num(v) { return (v >= 1000 || v <= -1000) ? sprintf("%.0f", v) : sprintf("%.4g", v) }
	END {
		print "| row | figure | OLD mean (min–max) | NEW mean (min–max) | NEW/OLD |"
		print "|---|---|---:|---:|---:|"
		for (i = 1; i <= n; i++) {
			k = order[i]
			split(k, parts, SUBSEP)
			if (!cnt["old", k] || !cnt["new", k]) continue
			o = sum["old", k] / cnt["old", k]; w = sum["new", k] / cnt["new", k]
			r = (o == 0) ? "n/a" : sprintf("%.3f", w / o)
			printf "| %s | %s | %s | %s | %s |\n", parts[1], parts[2], cell("old", k), cell("new", k), r
		}
	}
'
