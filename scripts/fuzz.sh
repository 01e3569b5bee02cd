#!/usr/bin/env bash
# Build the libFuzzer harnesses in test/fuzz and run each for a bounded
# time, starting from the committed seed corpus (test/fuzz/corpus/NAME).
#
#   SNOWID_FUZZ_SECONDS   seconds per harness (default 20)
#   SNOWID_FUZZ_BUILD     build directory (default test/fuzz/build), which
#                         also keeps the inputs found (corpus-NAME/) and
#                         any crashing input (artifacts/)
#
# Prints one TAP line per harness ("ok N - fuzz_base32: R runs in S s,
# E exec/s"), then "N passed, N failed".  Exits non-zero on any failure:
# a crash, a leak (LeakSanitizer), undefined behaviour, or an accepted
# input that does not round-trip (the harnesses abort).
set -uo pipefail
source "$(dirname "$0")/common.sh"

seconds=${SNOWID_FUZZ_SECONDS:-20}
fuzzdir=$SNOWID_ROOT/test/fuzz
build=${SNOWID_FUZZ_BUILD:-$fuzzdir/build}
harnesses="decimal base32 public"

clang=$(command -v clang-14 || command -v clang || true)
echo "1..3"
if [ -z "$clang" ]; then
	n=0
	for h in $harnesses; do
		n=$((n + 1))
		echo "not ok $n - fuzz_$h: clang not found (Debian packages clang-14 libclang-rt-14-dev)"
	done
	echo "0 passed, 3 failed"
	exit 1
fi

mkdir -p "$build/artifacts"
if ! make -C "$fuzzdir" -s CLANG="$clang" PG_CONFIG="$PG_CONFIG" BUILD="$build" >"$build/build.log" 2>&1; then
	cat "$build/build.log"
	n=0
	for h in $harnesses; do
		n=$((n + 1))
		echo "not ok $n - fuzz_$h: build failed"
	done
	echo "0 passed, 3 failed"
	exit 1
fi

passed=0
failed=0
n=0
for h in $harnesses; do
	n=$((n + 1))
	log=$build/fuzz_$h.log
	mkdir -p "$build/corpus-$h"
	# New inputs go to the build directory; the seeds stay as committed.
	timeout $((seconds + 120)) "$build/fuzz_$h" \
		-max_total_time="$seconds" -max_len=1024 -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$build/artifacts/fuzz_$h-" \
		"$build/corpus-$h" "$fuzzdir/corpus/$h" >"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	if [ "$rc" -eq 0 ] && [ -n "$runs" ]; then
		echo "ok $n - fuzz_$h: $runs runs in $seconds s, $rate exec/s"
		passed=$((passed + 1))
	else
		echo "not ok $n - fuzz_$h: exit status $rc; from $log:"
		grep -E 'ERROR|SUMMARY|Test unit written|Base64|deadly signal' "$log" |
			head -n 20 | sed 's/^/#   /'
		tail -n 30 "$log" | sed 's/^/#   /'
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
