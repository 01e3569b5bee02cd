# Shared by the project's scripts: find PostgreSQL, install what is
# missing, and run commands as an OS user PostgreSQL accepts.
#
# Sourced, not run.  Callers set -euo pipefail themselves.

SNOWID_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

PG_CONFIG=${PG_CONFIG:-}
if [ -z "$PG_CONFIG" ]; then
	if [ -x /usr/lib/postgresql/15/bin/pg_config ]; then
		PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config
	else
		PG_CONFIG=pg_config
	fi
fi
export PG_CONFIG

# Debian packages the build and the tests need.
# (clang-14 and libclang-rt-14-dev build the fuzzers: scripts/fuzz.sh)
SNOWID_PACKAGES="postgresql-server-dev-15 libipc-run-perl libfaketime socat make gcc clang-14 libclang-rt-14-dev"

# Debian packages of the tools the tests run for real, installed without
# their recommendations: promtool (prometheus: test/t/064_alert_rules.pl),
# the exporter (test/t/062_monitoring.pl), python3-yaml (both read the
# YAML files with it), pg_partman (test/t/065_partman.pl), Django and
# SQLAlchemy over psycopg (examples/python, test/t/066_python_orm.pl).
# Their daemons are not wanted: see ensure_tool_packages.
SNOWID_TOOL_PACKAGES="prometheus prometheus-postgres-exporter python3-yaml postgresql-15-partman python3-django python3-sqlalchemy python3-psycopg python3-psycopg2"

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Which of SNOWID_PACKAGES are not installed.
missing_packages() {
	local pkg missing=""
	for pkg in $SNOWID_PACKAGES "$@"; do
		dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $pkg"
	done
	echo "$missing"
}

# Install missing packages with apt-get when root; otherwise say which.
ensure_packages() {
	local missing
	missing=$(missing_packages "$@")
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" -eq 0 ]; then
		log "installing:$missing"
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
	else
		die "missing Debian packages:$missing
Install them with: sudo apt-get install -y$missing"
	fi
}

# Install the missing packages named (default: SNOWID_TOOL_PACKAGES),
# without their recommendations (root only; otherwise say which).
# prometheus and prometheus-postgres-exporter ship daemons that listen on
# every interface; where systemd runs, the ones installed here are
# stopped and disabled again: the tests start their own, on loopback.
ensure_tool_packages() {
	local missing pkg
	missing=$(for pkg in ${*:-$SNOWID_TOOL_PACKAGES}; do
		dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || echo "$pkg"
	done | tr '\n' ' ')
	[ -z "${missing// /}" ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		die "missing Debian packages: $missing
Install them with: sudo apt-get install -y --no-install-recommends $missing"
	fi
	log "installing: $missing"
	apt-get -o DPkg::Lock::Timeout=900 update -qq
	DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq \
		--no-install-recommends $missing >/dev/null
	if [ -d /run/systemd/system ]; then
		for pkg in $missing; do
			case $pkg in
				prometheus | prometheus-postgres-exporter)
					systemctl disable --now "$pkg" >/dev/null 2>&1 || true ;;
			esac
		done
	fi
}

# Build and install the extension into the PostgreSQL that PG_CONFIG names,
# from the tree given (default: this one).
build_and_install() {
	local tree=${1:-$SNOWID_ROOT} libdir
	log "building against $("$PG_CONFIG" --version)"
	make -C "$tree" -s PG_CONFIG="$PG_CONFIG" >/dev/null
	libdir=$("$PG_CONFIG" --pkglibdir)
	if [ -w "$libdir" ]; then
		make -C "$tree" -s PG_CONFIG="$PG_CONFIG" install >/dev/null
	elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
		sudo make -C "$tree" -s PG_CONFIG="$PG_CONFIG" install >/dev/null
	else
		die "cannot write to $libdir to install the extension.
Run this as root, or run 'sudo make install' first, or set PG_CONFIG to a PostgreSQL you own."
	fi
}

# The pg_config of PostgreSQL major $1: PG_CONFIG_<major> when set, else
# Debian's package, else a complete build of scripts/build_pg.sh; nothing
# when there is none.
major_pg_config() {
	local var="PG_CONFIG_$1"
	if [ -n "${!var:-}" ]; then
		echo "${!var}"
	elif [ -x "/usr/lib/postgresql/$1/bin/pg_config" ]; then
		echo "/usr/lib/postgresql/$1/bin/pg_config"
	elif [ -x "/opt/snowid-pg/$1/bin/pg_config" ] &&
		[ -f "/opt/snowid-pg/$1/.snowid-build-complete" ]; then
		echo "/opt/snowid-pg/$1/bin/pg_config"
	fi
}

# Stop, at once, the throwaway servers whose data directories are
# $1/$2, $1/$3, ... and that are running (for a script's EXIT trap).
stop_servers() {
	local dir=$1 name
	shift
	for name in "$@"; do
		[ -f "$dir/$name/postmaster.pid" ] &&
			as_server_user pg_ctl -D "$dir/$name" -m immediate stop >/dev/null 2>&1
	done
	return 0
}

# The OS user servers run as: the caller, or "postgres" when the caller
# is root (PostgreSQL refuses to run as root).
server_user() {
	if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi
}

# Run a command as the server user, keeping the environment we need.
as_server_user() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- env PATH="$PATH" PG_CONFIG="$PG_CONFIG" "$@"
	else
		"$@"
	fi
}

# A fresh directory the server user can write.
server_user_tmpdir() {
	local dir
	dir=$(mktemp -d "${TMPDIR:-/tmp}/snowid-$1.XXXXXX")
	if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir"; fi
	chmod 755 "$dir"
	echo "$dir"
}

# A TCP port on 127.0.0.1 that nothing listens on.
free_port() {
	perl -MIO::Socket::INET -e \
		'my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => 0, Listen => 1) or die; print $s->sockport, "\n";'
}

PG_BINDIR=$("$PG_CONFIG" --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)
export PATH="$PG_BINDIR:$PATH"
