#!/usr/bin/env bash
# Run every test suite (pg_regress, isolation, TAP, fuzzing) and sum up.
#
# Installs what is missing, builds and installs the extension, then runs
# each suite against its own temporary server as an OS user PostgreSQL
# accepts (postgres, when run as root).  One failing suite never hides the
# others; the last line is "N passed, N failed".  Exits non-zero on any
# failure.
set -uo pipefail
source "$(dirname "$0")/common.sh"

# One run at a time per PostgreSQL installation: a run installs the
# extension there, and a second run's install would change the library
# under the first one's servers.
if [ -z "${SNOWID_TEST_LOCKED:-}" ] && command -v flock >/dev/null; then
	lock=${TMPDIR:-/tmp}/snowid-test.$(echo "$PG_CONFIG" | cksum | cut -d' ' -f1).lock
	export SNOWID_TEST_LOCKED=1
	exec flock "$lock" bash "$0" "$@"
fi
set -e
ensure_packages
build_and_install
set +e

# The node-postgres example's dependencies (test/t/060_node_client.pl),
# from examples/node/package-lock.json.  Skipped when they are installed
# already (no network needed then); the copy below takes them along.
node_example=$SNOWID_ROOT/examples/node
if [ ! "$node_example/node_modules/.package-lock.json" -nt "$node_example/package-lock.json" ]; then
	log "installing the node example's dependencies (npm ci)"
	(cd "$node_example" && npm ci --no-audit --no-fund --prefer-offline >/dev/null) ||
		log "npm ci failed in examples/node: its TAP test will fail"
fi

# The suites write results and temporary instances into the tree, so as
# root they run in a copy the server user owns.
if [ "$(id -u)" -eq 0 ]; then
	work=$(server_user_tmpdir test)
	tar -C "$SNOWID_ROOT" --exclude=.git --exclude='tmp_check*' -cf - . | tar -C "$work" -xf -
	chown -R postgres: "$work"
else
	work=$SNOWID_ROOT
fi
logdir=$work/test-logs
as_server_user mkdir -p "$logdir"

total_passed=0
total_failed=0

# Count "ok"/"failed" lines of one suite's output (pg_regress before and
# after PostgreSQL 16, and prove --verbose).
count_results() {
	local log=$1 passed failed
	passed=$(grep -cE '^(ok [0-9]+|test .*\.\.\. ok| +[^ ].*\.\.\. ok)' "$log")
	# a TAP "not ok ... # TODO" is an expected failure, as prove counts it
	failed=$(grep -E '^(not ok [0-9]+|test .*\.\.\. FAILED| +[^ ].*\.\.\. FAILED|.*\.\.\. failed)' "$log" |
		grep -cvE '^not ok [0-9]+.*# TODO')
	echo "$passed $failed"
}

run_suite() {
	local name=$1 target=$2 log rc passed failed
	log=$logdir/$name.log
	log "suite $name"
	if [ "$name" = chaos ]; then
		# as root, in the tree itself (iptables rules; it starts its servers
		# as postgres); the extension is installed already
		SNOWID_CHAOS_INSTALLED=1 make -C "$SNOWID_ROOT" -s PG_CONFIG="$PG_CONFIG" SEED="${SEED:-}" \
			"$target" >"$log" 2>&1
	else
		as_server_user make -C "$work" -s PG_CONFIG="$PG_CONFIG" ${PROVE_TESTS:+PROVE_TESTS="$PROVE_TESTS"} "$target" >"$log" 2>&1
	fi
	rc=$?
	read -r passed failed < <(count_results "$log")
	if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
		# The suite broke before it could report a failing test.
		failed=1
	fi
	if [ "$rc" -ne 0 ]; then
		echo "---- $name failed; its output:"
		cat "$log"
		find "$work" -name regression.diffs | while read -r diffs; do
			echo "---- $diffs"
			cat "$diffs"
		done
		for f in "$work"/tmp_check/log/*; do
			[ -f "$f" ] && { echo "---- $f (last lines)"; tail -n 60 "$f"; }
		done
	fi
	echo "$name: $passed passed, $failed failed"
	total_passed=$((total_passed + passed))
	total_failed=$((total_failed + failed))
}

# SUITES picks suites (default: all); PROVE_TESTS picks TAP files, e.g.
#   make test SUITES=tap PROVE_TESTS=test/t/061_upgrade.pl
# The chaos suite (chaos/) is a seeded run of about 3 minutes (a new seed
# each time unless SEED=<n>) and the checker's own test.
for suite in ${SUITES:-regress isolation tap fuzz chaos}; do
	case $suite in
		regress) run_suite regress regresscheck ;;
		isolation) run_suite isolation isolationcheck ;;
		tap) run_suite tap tapcheck ;;
		fuzz) run_suite fuzz fuzzcheck ;;
		chaos) run_suite chaos chaos-test ;;
		*) die "unknown suite \"$suite\" in SUITES (regress, isolation, tap, fuzz, chaos)" ;;
	esac
done

echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ] && [ "$total_passed" -gt 0 ]
