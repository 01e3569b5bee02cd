#!/usr/bin/env bash
# The commands behind make chaos, make chaos-check and the chaos suite of
# make test (chaos/: a randomized fault harness and its checker).
#
#   chaos.sh run     SEED=<n> DURATION=<s>: one run, then the checker
#   chaos.sh check   HISTORY=<file or dir>: the checker alone (history.txt,
#                    or history/ of a run longer than 10 minutes)
#   chaos.sh test    the checker's own test, then a short seeded run,
#                    as TAP lines ("ok N - ...") that scripts/test.sh counts
#
# A run needs root (iptables rules on loopback addresses; the servers run
# as postgres).  It installs the Debian packages it needs, builds and
# installs snowid (unless SNOWID_TEST_LOCKED says scripts/test.sh did),
# and holds the same lock as make test for as long as it runs, because
# its servers load the installed library.
set -euo pipefail
source "$(dirname "$0")/common.sh"

CHAOS_PACKAGES="patroni etcd-server etcd-client python3-etcd python3-psycopg python3-numpy iptables gnuplot-nox libfaketime"
PY=/usr/bin/python3
mode=${1:-run}

if [ "$mode" = check ]; then
	[ -n "${HISTORY:-}" ] || die "name the history: make chaos-check HISTORY=chaos/out/history.txt"
	exec "$PY" "$SNOWID_ROOT/chaos/check.py" "$HISTORY"
fi

if [ "$(id -u)" -ne 0 ]; then
	if [ "$mode" = test ]; then
		# the checker's test needs no root; the run does
		"$PY" "$SNOWID_ROOT/chaos/test_check.py" || true
		echo "not ok - the chaos run needs root (iptables rules, servers started as postgres)"
		exit 1
	fi
	die "make chaos needs root: it installs iptables rules and starts the servers as postgres"
fi

if [ -z "${SNOWID_TEST_LOCKED:-}" ] && command -v flock >/dev/null; then
	lock=${TMPDIR:-/tmp}/snowid-test.$(echo "$PG_CONFIG" | cksum | cut -d' ' -f1).lock
	export SNOWID_TEST_LOCKED=1
	exec flock "$lock" bash "$0" "$@"
fi
missing=$(missing_packages $CHAOS_PACKAGES)
if [ -n "$missing" ]; then
	log "installing:$missing"
	apt-get -o DPkg::Lock::Timeout=900 update -qq
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq $missing >/dev/null
fi
if [ -z "${SNOWID_CHAOS_INSTALLED:-}" ]; then
	build_and_install
fi

seed=${SEED:-$(( $(date +%s%N) / 1000 % 1000000007 ))}
out=${CHAOS_OUT:-$SNOWID_ROOT/chaos/out}

case $mode in
	run)
		exec "$PY" "$SNOWID_ROOT/chaos/chaos.py" --seed "$seed" --duration "${DURATION:-180}" --out "$out"
		;;
	test)
		"$PY" "$SNOWID_ROOT/chaos/test_check.py" | grep -v '^1\.\.' || true
		echo "# chaos run: seed $seed (rerun: make chaos SEED=$seed DURATION=${CHAOS_TEST_DURATION:-150})"
		# its exit status is the checker's: tap.py turns the report into
		# TAP lines (and says what failed)
		"$PY" "$SNOWID_ROOT/chaos/chaos.py" --seed "$seed" --duration "${CHAOS_TEST_DURATION:-150}" \
			--out "$out" | sed 's/^/# /' || true
		exec "$PY" "$SNOWID_ROOT/chaos/tap.py" "$out/report.json"
		;;
	*)
		die "unknown mode \"$mode\" (run, check, test)"
		;;
esac
