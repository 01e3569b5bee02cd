# snowid: PGXS build.  Point PG_CONFIG at another pg_config to build
# against a different PostgreSQL installation.

MODULE_big = snowid
OBJS = $(patsubst %.c,%.o,$(wildcard src/*.c))

EXTENSION = snowid snowid_coordinator
DATA = $(wildcard snowid--*.sql) $(wildcard snowid_coordinator--*.sql)
PGFILEDESC = "snowid - time-ordered, globally unique 64-bit ids"

PG_CPPFLAGS = -I$(srcdir)/src -I$(libpq_srcdir)
SHLIB_LINK = $(libpq)

# pg_regress suites run against a temporary instance with the library
# preloaded (test/snowid.conf), as pg_cron does.
REGRESS = type operators json decode generator privileges formats convert coordinator_grants coordinator_settings coordinator_renewals
REGRESS_OPTS = --inputdir=test --temp-instance=./tmp_check --temp-config=./test/snowid.conf

# Isolation specs get their own temporary instance.
ISOLATION = $(patsubst test/isolation/specs/%.spec,%,$(wildcard test/isolation/specs/*.spec))
ISOLATION_OPTS = --inputdir=test/isolation --outputdir=output_iso \
	--temp-instance=./tmp_check_iso --temp-config=./test/snowid.conf

# TAP suites start their own servers (PostgreSQL::Test::Cluster).
TAP_TESTS = 1
PROVE_TESTS = $(wildcard test/t/*.pl)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)

# Regress files for what newer majors add, chosen by the major PG_CONFIG
# names: soft input errors (16), the module's version and the built-in
# uuidv7() (18).
PG_MAJOR := $(shell $(PG_CONFIG) --version 2>/dev/null | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
ifeq ($(shell [ "0$(PG_MAJOR)" -ge 16 ] && echo y),y)
REGRESS += soft_input
endif
ifeq ($(shell [ "0$(PG_MAJOR)" -ge 18 ] && echo y),y)
REGRESS += pg18
endif

# "make test" and "make demo" install the build dependencies themselves,
# so they must work before PGXS is there.
ifneq ($(wildcard $(PGXS)),)
include $(PGXS)
else
all install installcheck:
	@echo "PGXS not found: install postgresql-server-dev-15 (or set PG_CONFIG)," \
		"or run 'make test', which installs it" >&2; exit 1
endif

# PGXS tracks no header dependencies: rebuild everything when a header
# changes (shared memory layout, settings), rather than link stale objects.
$(OBJS): $(wildcard src/*.h)

# After PGXS, which resets PROVE_FLAGS.
PROVE_FLAGS = -I ./test/perl --verbose

# The suites one by one, so that one failing suite does not hide the
# others (scripts/test.sh runs them all and sums up).
.PHONY: regresscheck isolationcheck tapcheck fuzzcheck test demo demo-cluster bench \
	bench-coordinator chaos chaos-check chaos-test
regresscheck:
	$(pg_regress_installcheck) $(REGRESS_OPTS) $(REGRESS)

isolationcheck:
	$(pg_isolation_regress_installcheck) $(ISOLATION_OPTS) $(ISOLATION)

tapcheck:
	$(prove_installcheck)

# libFuzzer harnesses (test/fuzz), built with clang, for a bounded time.
fuzzcheck:
	bash scripts/fuzz.sh

test:
	bash scripts/test.sh

demo:
	bash scripts/demo.sh

# Not part of the tests: snowid against the alternatives (bench/run.sh).
bench:
	bash bench/run.sh

# Not part of the tests either: what one coordinator carries, N simulated
# nodes against a coordinator with a synchronous standby
# (bench/coordinator.sh; BENCH_QUICK=1 for a short trial).
bench-coordinator:
	bash bench/coordinator.sh

demo-cluster:
	bash scripts/demo_cluster.sh

# Randomized faults against a Patroni-backed cluster, and the independent
# checker (chaos/, README "Chaos testing").  As root.
#   make chaos SEED=<n> DURATION=<seconds>
#   make chaos-check HISTORY=chaos/out/history.txt
# chaos-test is the chaos suite of make test.
chaos:
	SEED="$(SEED)" DURATION="$(DURATION)" bash scripts/chaos.sh run

chaos-check:
	HISTORY="$(HISTORY)" bash scripts/chaos.sh check

chaos-test:
	SEED="$(SEED)" bash scripts/chaos.sh test

# The Debian package postgresql-15-snowid (scripts/deb.sh; results in dist/).
.PHONY: deb
deb:
	bash scripts/deb.sh
