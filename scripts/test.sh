#!/usr/bin/env bash
# Run every test suite (pg_regress, isolation, TAP, fuzzing, and on 15 the
# Debian package) against every PostgreSQL major found, and sum up.
#
#   PG_MAJORS="15 18"   the majors to test (default: 15, Debian's binary
#                       package, plus every complete build of
#                       scripts/build_pg.sh in /opt/snowid-pg/MAJOR); a
#                       major asked for but not found counts as a failure
#   PG_CONFIG_<major>   where that major is (default: Debian's package, or
#                       a complete /opt/snowid-pg/MAJOR: common.sh's
#                       major_pg_config)
#   PG_CONFIG=...       without PG_MAJORS: test that one installation only
#   SUITES, PROVE_TESTS pick suites and TAP files (see the end)
#
# For each major: installs what is missing, builds the extension in a copy
# of the tree (so majors never share objects), installs it into that major
# and runs each suite against its own temporary servers as an OS user
# PostgreSQL accepts (postgres, when run as root).  One failing suite never
# hides the others.  Each major ends with "PostgreSQL M: N passed, N
# failed"; the last line is "N passed, N failed" for all of them.  Exits
# non-zero on any failure.
set -uo pipefail
explicit_pg_config=${PG_CONFIG:-}
source "$(dirname "$0")/common.sh"

if [ -z "${SNOWID_TEST_ONE_MAJOR:-}" ]; then
	set -e
	ensure_packages
	ensure_tool_packages
	set +e
	if [ -n "${PG_MAJORS:-}" ]; then
		majors=$PG_MAJORS
	elif [ -n "$explicit_pg_config" ]; then
		majors=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
	else
		majors=15
		for stamp in /opt/snowid-pg/*/.snowid-build-complete; do
			[ -f "$stamp" ] || continue
			m=$(basename "$(dirname "$stamp")")
			case " $majors " in *" $m "*) ;; *) majors="$majors $m" ;; esac
		done
	fi
	all_passed=0
	all_failed=0
	summary=""
	for major in $majors; do
		if [ -z "${PG_MAJORS:-}" ] && [ -n "$explicit_pg_config" ]; then
			config=$PG_CONFIG
		else
			config=$(major_pg_config "$major")
		fi
		if [ -z "$config" ]; then
			echo "PostgreSQL $major: not found (Debian's postgresql-server-dev-$major, or scripts/build_pg.sh $major): 0 passed, 1 failed"
			summary="$summary
PostgreSQL $major: not found"
			all_failed=$((all_failed + 1))
			continue
		fi
		log "PostgreSQL $major ($config)"
		export SNOWID_FIRST_MAJOR=${SNOWID_FIRST_MAJOR:-$major}
		out=$(mktemp "${TMPDIR:-/tmp}/snowid-test-$major.XXXXXX")
		SNOWID_TEST_ONE_MAJOR=1 PG_CONFIG=$config bash "$0" "$@" | tee "$out"
		last=$(tail -n 1 "$out")
		rm -f "$out"
		if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
			all_passed=$((all_passed + BASH_REMATCH[1]))
			all_failed=$((all_failed + BASH_REMATCH[2]))
			summary="$summary
PostgreSQL $major: $last"
		else
			all_failed=$((all_failed + 1))
			summary="$summary
PostgreSQL $major: the run broke off (last line: $last)"
		fi
	done
	echo "${summary#?}"
	echo "$all_passed passed, $all_failed failed"
	[ "$all_failed" -eq 0 ] && [ "$all_passed" -gt 0 ]
	exit
fi

# From here on: one major, the one PG_CONFIG names.
major=$("$PG_CONFIG" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')

# One run at a time per PostgreSQL installation: a run installs the
# extension there, and a second run's install would change the library
# under the first one's servers.  Runs against different majors do not
# wait for each other.
if [ -z "${SNOWID_TEST_LOCKED:-}" ] && command -v flock >/dev/null; then
	lock=${TMPDIR:-/tmp}/snowid-test.$(echo "$PG_CONFIG" | cksum | cut -d' ' -f1).lock
	export SNOWID_TEST_LOCKED=1
	exec flock -o "$lock" bash "$0" "$@"
fi

# The node-postgres example's dependencies (test/t/060_node_client.pl),
# from examples/node/package-lock.json.  Skipped when they are installed
# already (no network needed then); the copy below takes them along.
node_example=$SNOWID_ROOT/examples/node
if [ ! "$node_example/node_modules/.package-lock.json" -nt "$node_example/package-lock.json" ]; then
	log "installing the node example's dependencies (npm ci)"
	(cd "$node_example" && npm ci --no-audit --no-fund --prefer-offline >/dev/null) ||
		log "npm ci failed in examples/node: its TAP test will fail"
fi

# The suites write results, objects and temporary instances into the tree,
# so they run in a copy of their own (owned by the server user): runs for
# different majors never share objects.
work=$(server_user_tmpdir "test-pg$major")
tar -C "$SNOWID_ROOT" --exclude=.git --exclude='tmp_check*' --exclude='*.o' --exclude='*.so' \
	--exclude='*.bc' --exclude=results --exclude=output_iso --exclude=test/fuzz/build -cf - . |
	tar -C "$work" -xf -
set -e
build_and_install "$work"
set +e

# test/t/091_pg_upgrade_major.pl upgrades servers of Debian's PostgreSQL 15 to
# this major.  They must run this tree's snowid, but the system 15 holds
# whichever build was installed last: so the test gets a private copy of
# 15 (PostgreSQL finds its files relative to its binaries) with this
# tree's snowid installed into it.
old15=/usr/lib/postgresql/15
if [ "$major" -gt 15 ] && [ -z "${SNOWID_UPGRADE_FROM:-}" ] && [ -x "$old15/bin/pg_config" ] &&
	[[ " ${SUITES:-tap} " == *" tap "* ]]; then
	log "a private PostgreSQL 15 with this tree's snowid, for the pg_upgrade test"
	private=$work/upgrade-from
	mkdir -p "$private/usr/lib/postgresql" "$private/usr/share/postgresql" "$private/build"
	cp -a "$old15" "$private/usr/lib/postgresql/" &&
		cp -a /usr/share/postgresql/15 "$private/usr/share/postgresql/" &&
		tar -C "$work" --exclude=./upgrade-from --exclude='*.o' --exclude='*.so' -cf - . |
		tar -C "$private/build" -xf - &&
		make -C "$private/build" -s PG_CONFIG="$old15/bin/pg_config" >/dev/null &&
		make -C "$private/build" -s PG_CONFIG="$old15/bin/pg_config" DESTDIR="$private" install >/dev/null &&
		export SNOWID_UPGRADE_FROM=$private$old15 ||
		log "could not prepare the private PostgreSQL 15: the pg_upgrade test uses the system one"
fi
if [ "$(id -u)" -eq 0 ]; then chown -R postgres: "$work"; fi
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
	log "suite $name (PostgreSQL $major)"
	as_server_user make -C "$work" -s PG_CONFIG="$PG_CONFIG" ${PROVE_TESTS:+PROVE_TESTS="$PROVE_TESTS"} "$target" >"$log" 2>&1
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

# The Debian package suite (scripts/deb_test.sh): builds the package,
# installs it, creates the extensions from its files, removes it.  It runs
# as root, in the tree itself, while this run holds the lock, and puts the
# tree's build back in place when it ends.  Skipped (0 tests) when not root.
run_deb_suite() {
	local log=$logdir/deb.log rc passed failed
	if [ "$major" != 15 ] || [ "$PG_CONFIG" != /usr/lib/postgresql/15/bin/pg_config ]; then
		echo "deb: skipped (the package is built for Debian's PostgreSQL 15 only)"
		return
	fi
	log "suite deb"
	bash "$SNOWID_ROOT/scripts/deb_test.sh" >"$log" 2>&1
	rc=$?
	read -r passed failed < <(count_results "$log")
	if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
		failed=1
	fi
	if [ "$rc" -ne 0 ]; then
		echo "---- deb failed; its output:"
		cat "$log"
	fi
	grep -q '^1\.\.0 # SKIP' "$log" && echo "deb: skipped ($(sed -n 's/^1\.\.0 # SKIP //p' "$log"))"
	echo "deb: $passed passed, $failed failed"
	total_passed=$((total_passed + passed))
	total_failed=$((total_failed + failed))
}

# The chaos suite (chaos/, scripts/chaos.sh test): the checker's own test,
# then a seeded run of a Patroni-backed cluster under random faults.  It
# runs as root (iptables rules; it starts its servers as postgres), in the
# tree itself, with the extension this run installed, once per run and on
# PostgreSQL 15 (Debian's patroni 3.0 runs the coordinator's 15).
run_chaos_suite() {
	local log=$logdir/chaos.log rc passed failed
	if [ "$major" != 15 ]; then
		echo "chaos: skipped on PostgreSQL $major (run on 15)"
		return
	fi
	log "suite chaos (PostgreSQL $major)"
	SNOWID_CHAOS_INSTALLED=1 make -C "$SNOWID_ROOT" -s PG_CONFIG="$PG_CONFIG" SEED="${SEED:-}" \
		chaos-test >"$log" 2>&1
	rc=$?
	read -r passed failed < <(count_results "$log")
	if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
		failed=1
	fi
	if [ "$rc" -ne 0 ]; then
		echo "---- chaos failed; its output:"
		cat "$log"
	fi
	echo "chaos: $passed passed, $failed failed"
	total_passed=$((total_passed + passed))
	total_failed=$((total_failed + failed))
}

# SUITES picks suites (default: all); PROVE_TESTS picks TAP files, e.g.
#   make test SUITES=tap PROVE_TESTS=test/t/061_upgrade.pl
# The chaos suite (chaos/) is a seeded run of about 3 minutes (a new seed
# each time unless SEED=<n>) and the checker's own test.
for suite in ${SUITES:-regress isolation tap fuzz deb chaos}; do
	case $suite in
		regress) run_suite regress regresscheck ;;
		isolation) run_suite isolation isolationcheck ;;
		tap) run_suite tap tapcheck ;;
		fuzz)
			# The fuzzers test the server-independent C (the plain layer,
			# built with clang, not against any server): once per run.
			if [ "$major" = "${SNOWID_FIRST_MAJOR:-$major}" ]; then
				run_suite fuzz fuzzcheck
			else
				echo "fuzz: skipped on PostgreSQL $major (run on $SNOWID_FIRST_MAJOR; it does not depend on the server)"
			fi ;;
		deb) run_deb_suite ;;
		chaos) run_chaos_suite ;;
		*) die "unknown suite \"$suite\" in SUITES (regress, isolation, tap, fuzz, deb, chaos)" ;;
	esac
done

echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ] && [ "$total_passed" -gt 0 ]
