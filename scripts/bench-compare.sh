#!/bin/sh
# bench-compare.sh OLD NEW: runs every benchmark of the repository for two
# commits in the same run and prints, per benchmark and metric, the median
# of each and the ratio NEW/OLD (benchstat's table when benchstat is
# installed, else a small awk summary).
#
# OLD and NEW are resolved to commits once, at the start (a branch that
# moves meanwhile does not change the run). Both are checked out into
# temporary worktrees and their test
# binaries built first (go test -c); the binaries are then run in
# alternation, ROUNDS times (OLD, NEW, OLD, NEW …), so that a machine
# shared with other work loads both alike. Run it as root from anywhere
# inside the repository; e2e benchmarks (real runc, podman) are included
# with E2E=1.
#
# Environment: ROUNDS (default 5), BENCHTIME (default 10x), BENCH (the
# -bench pattern, default .), PKGS (packages, default every one with a
# benchmark), E2E (1: add ./e2e with -tags e2e), OUT (where binaries and
# results go, default a new directory under /tmp, kept), BENCHSTAT (the
# benchstat binary; "none" for the awk summary). benchstat:
#   go install golang.org/x/perf/cmd/benchstat@latest
#
#   scripts/bench-compare.sh main~1 main
#   ROUNDS=8 BENCH='Apply' PKGS=./nvcontainer scripts/bench-compare.sh main apply
set -eu

[ $# -eq 2 ] || { echo "usage: $0 OLD NEW" >&2; exit 2; }
old=$(git rev-parse --verify "$1^{commit}")
new=$(git rev-parse --verify "$2^{commit}")
top=$(git rev-parse --show-toplevel)
ROUNDS=${ROUNDS:-5}
BENCHTIME=${BENCHTIME:-10x}
BENCH=${BENCH:-.}
OUT=${OUT:-$(mktemp -d /tmp/bench-compare.XXXXXX)}
mkdir -p "$OUT"

cd "$top"
trap 'for w in old new; do [ ! -d "$OUT/src-$w" ] || git worktree remove --force "$OUT/src-$w"; done' EXIT
if [ -z "${PKGS:-}" ]; then
	PKGS=$(git grep -l '^func Benchmark' "$new" -- '*_test.go' | sed "s|^$new:||" |
		xargs -n1 dirname | grep -v '^e2e$' | sort -u | sed 's|^|./|' | tr '\n' ' ')
fi
[ "${E2E:-}" = 1 ] && PKGS="$PKGS ./e2e"

# bin PKG: the name of PKG's test binary (./internal/ns: internal_ns.test).
bin() { echo "${1#./}" | tr / _ | sed 's/$/.test/'; }

# build REV NAME: test binaries of REV's packages into $OUT/NAME/.
build() {
	wt="$OUT/src-$2"
	[ -d "$wt" ] || git worktree add -q --detach "$wt" "$1"
	mkdir -p "$OUT/$2"
	for p in $PKGS; do
		[ -d "$wt/$p" ] || continue
		tags=""
		[ "$p" = ./e2e ] && tags="-tags e2e"
		# shellcheck disable=SC2086 # tags is a word list
		(cd "$wt" && go test $tags -c -o "$OUT/$2/$(bin "$p")" "$p") ||
			echo "bench-compare: $p does not build at $2" >&2
	done
}
build "$old" old
build "$new" new

# run NAME PKG: one round of PKG's benchmarks with NAME's binary, run in
# the package's directory of that tree (the tests read testdata there).
run() {
	b="$OUT/$1/$(bin "$2")"
	[ -x "$b" ] || return 0
	(cd "$OUT/src-$1/$2" && "$b" -test.run '^$' -test.bench "$BENCH" \
		-test.benchtime "$BENCHTIME" -test.benchmem 2>&1) |
		grep -E '^(Benchmark|goos|goarch|pkg|cpu)' >>"$OUT/$1.txt" || true
}
: >"$OUT/old.txt"
: >"$OUT/new.txt"
i=1
while [ "$i" -le "$ROUNDS" ]; do
	for p in $PKGS; do
		run old "$p"
		run new "$p"
	done
	echo "bench-compare: round $i of $ROUNDS done" >&2
	i=$((i + 1))
done

echo "old $old, new $new; $ROUNDS rounds, -benchtime $BENCHTIME; results in $OUT"
bs=${BENCHSTAT:-$(command -v benchstat || true)}
[ -n "$bs" ] || [ ! -x "$(go env GOPATH)/bin/benchstat" ] || bs="$(go env GOPATH)/bin/benchstat"
if [ "$bs" != none ] && [ -n "$bs" ]; then
	(cd "$OUT" && "$bs" old=old.txt new=new.txt)
	exit 0
fi
# Fallback: the median of each benchmark's metric in each file, and new/old.
printf "%-60s %-14s %14s %14s %8s\n" benchmark unit old new new/old
awk '
	FNR == 1 { f++ }
	/^Benchmark/ {
		for (i = 3; i < NF; i += 2) {
			k = $1 SUBSEP $(i + 1)
			n[f, k]++
			v[f, k, n[f, k]] = $i
			keys[k] = 1
		}
	}
	function median(f, k,    m, i, j, t, a) {
		m = n[f, k]
		for (i = 1; i <= m; i++) a[i] = v[f, k, i]
		for (i = 2; i <= m; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
	}
	END {
		for (k in keys) {
			if (!n[1, k] || !n[2, k]) continue
			split(k, p, SUBSEP)
			o = median(1, k); w = median(2, k)
			printf "%-60s %-14s %14.4g %14.4g %8s\n", p[1], p[2], o, w, o ? sprintf("%.3f", w / o) : "-"
		}
	}' "$OUT/old.txt" "$OUT/new.txt" | sort
