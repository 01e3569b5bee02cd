#!/usr/bin/python3
"""chaos/chaos.py: randomized fault injection against a snowid cluster.

    chaos.py --seed N --duration SECONDS [--out DIR]

Brings up the cluster of chaos/cluster.py (3 etcd, 2 Patroni members holding
the coordinator, 3 snowid nodes in remote mode), then for DURATION seconds:

* the load: two clients per node, each calling snowid_nextval() and
  snowid_generate(n) in a loop over its own connection, recording every id
  the server acknowledged (history.txt: "<node> <client> <id>") and every
  call (calls.log: "<start ms> <end ms> <node> <client> <op> <n> <status>
  <min id> <max id>", status "ok" or the SQLSTATE, or "conn");
* the lease sampler: every 100 ms, the coordinator's leases rows, its fence
  and its new events, as the current primary shows them (leases.log), so
  that the checker knows each lease's window without asking the nodes;
* the nemesis: faults drawn from random.Random(seed), one at a time, each
  logged when healed in faults.log as "<unix ms> <kind> <target>
  heal=<unix ms> key=value...".

Then it heals everything, lets the nodes recover, stops the load, tears the
cluster down (also on an error or a signal: iptables chain, processes), and
runs the checker (chaos/check.py) on the output directory.  Must run as
root: it installs iptables rules and starts the servers as postgres.
"""

import argparse
import glob
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from array import array

import psycopg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster as C				# noqa: E402
from cluster import now_ms		# noqa: E402

CLIENTS_PER_NODE = int(os.environ.get('CHAOS_CLIENTS', 2))
# Most calls are snowid_generate(n) with n from BATCH / 2 to BATCH; the
# rest snowid_nextval() (15 %) and snowid_generate(n) with n from 1 to 32
# (15 %).  PAUSE_S between a client's calls.
BATCH = int(os.environ.get('CHAOS_BATCH', 1000))
PAUSE_S = 0.002
# The load's target, in acknowledged ids per second over all clients: each
# client waits before a call that would take it past its share.  Without it
# the clients take about 600,000 ids/s here, and the CPU that Patroni, etcd
# and the keepers need with it (2 cores for everything).
RATE = int(os.environ.get('CHAOS_RATE', 60000))
NEXTVAL_SQL = 'SELECT int8send(snowid_nextval()::bigint)'
GENERATE_SQL = ("SELECT string_agg(int8send(g::bigint), ''::bytea ORDER BY o) "
				"FROM snowid_generate(%d) WITH ORDINALITY AS t(g, o)")
# A run up to this long keeps its history as history.txt; a longer one in
# the compact form (history/: one file of 8-byte ids per client).
TEXT_HISTORY_S = int(os.environ.get('CHAOS_TEXT_HISTORY_S', 600))

# kind -> weight.  Every kind is drawn; weights favour the cheap ones.
FAULTS = {
	'kill-node': 2,
	'kill-keeper': 2,
	'pause-keeper': 1,
	'pause-node': 1,
	'partition-node': 2,
	'partition-coord': 1,
	'clock-bump': 4,
	'clock-strobe': 2,
	'failover': 1,
	'switchover': 1,
	'restore': 2,
}


class Run:
	def __init__(self, args):
		self.seed = args.seed
		self.duration = args.duration
		self.rng = random.Random(args.seed)
		self.out = os.path.abspath(args.out)
		self.kinds = [k for k in FAULTS if k in args.kinds.split(',')] if args.kinds else list(FAULTS)
		self.stop_load = threading.Event()
		self.stop_sampler = threading.Event()
		self.threads = []
		self.fault_lines = []
		self.dumps = []
		self.dump_due = None
		self.lock = threading.Lock()
		os.makedirs(self.out, exist_ok=True)
		for f in glob.glob(os.path.join(self.out, '*')):
			if os.path.isfile(f):
				os.unlink(f)
		self.parts = os.path.join(self.out, 'parts')
		shutil.rmtree(self.parts, ignore_errors=True)
		shutil.rmtree(os.path.join(self.out, 'history'), ignore_errors=True)
		os.makedirs(self.parts)
		self.runlog = open(os.path.join(self.out, 'run.log'), 'a', buffering=1)
		self.workdir = tempfile.mkdtemp(prefix='snowid-chaos.')
		os.chmod(self.workdir, 0o755)
		self.cluster = C.Cluster(self.workdir, self.log)

	def log(self, msg):
		line = '%s %s' % (time.strftime('%H:%M:%S'), msg)
		print(line, flush=True)
		self.runlog.write('%d %s\n' % (now_ms(), msg))

	def fault(self, start, kind, target, heal, **kw):
		extra = ' '.join('%s=%s' % (k, v) for k, v in kw.items())
		line = '%d %s %s heal=%d %s' % (start, kind, target, heal, extra)
		with self.lock:
			self.fault_lines.append(line.rstrip())
		self.log('fault: ' + line)

	# ---- the load ----

	def client(self, node, c):
		"""One client: calls in a loop over its own connection.  Each call
		returns its ids as one bytea of 8-byte big-endian integers
		(int8send), in the order the server generated them, so that the
		client does no work per id: the bytes go to its history file as
		they came (parts/<node>.<client>.bin)."""
		name = node['name']
		rng = random.Random('%d/%s/%d' % (self.seed, name, c))
		hist = open(os.path.join(self.parts, '%s.%d.bin' % (name, c)), 'wb', buffering=1 << 20)
		calls = open(os.path.join(self.parts, 'calls.%s.%d' % (name, c)), 'w', buffering=1 << 20)
		conn = None
		share = RATE / (CLIENTS_PER_NODE * len(self.cluster.nodes))
		began = time.time()
		got = 0
		while not self.stop_load.is_set():
			ahead = got / share - (time.time() - began)
			if ahead < -1:
				began += -1 - ahead			# no burst to catch up after an outage
			elif ahead > 0:
				time.sleep(min(ahead, 0.5))
				continue
			if conn is None:
				try:
					conn = psycopg.connect(host=node['sock'], port=node['port'], dbname='postgres',
										   user='postgres', autocommit=True, connect_timeout=3,
										   application_name='chaos_%s_%d' % (name, c))
				except Exception:
					conn = None
					t = now_ms()
					calls.write('%d %d %s %d connect 0 conn - -\n' % (t, t, name, c))
					time.sleep(0.2)
					continue
			r = rng.random()
			if r < 0.15:
				op, n, sql = 'nextval', 1, NEXTVAL_SQL
			else:
				n = rng.randint(1, 32) if r < 0.3 else rng.randint(BATCH // 2, BATCH)
				op, sql = 'generate', GENERATE_SQL % n
			start = now_ms()
			try:
				data = conn.execute(sql, binary=True).fetchone()[0]
				end = now_ms()
				hist.write(data)
				got += len(data) // 8
				ids = array('q', data)
				if sys.byteorder == 'little':
					ids.byteswap()
				calls.write('%d %d %s %d %s %d ok %d %d\n' % (start, end, name, c, op, len(ids), min(ids),
															   max(ids)))
			except psycopg.Error as e:
				end = now_ms()
				state = getattr(e, 'sqlstate', None) or 'conn'
				calls.write('%d %d %s %d %s %d %s - -\n' % (start, end, name, c, op, n, state))
				if conn.closed or conn.broken:
					try:
						conn.close()
					except Exception:
						pass
					conn = None
				time.sleep(0.05)
			time.sleep(PAUSE_S)
		hist.close()
		calls.close()
		if conn is not None:
			conn.close()

	# ---- the lease sampler ----
	#
	# One whitespace-separated line per change: node names (rows below,
	# events in SQL) are written with their blanks as '_'.

	def sampler(self):
		out = open(os.path.join(self.out, 'leases.log'), 'w', buffering=1)
		conninfo = self.cluster.coord_conninfo(10, 'postgres')
		last_rows = {}
		last_fence = None
		seen_events = set()
		conn = None
		while not self.stop_sampler.is_set():
			time.sleep(0.1)
			try:
				if conn is None:
					conn = psycopg.connect(conninfo, autocommit=True)
					conn.execute("SET statement_timeout = '1s'")
				t = now_ms()
				rows = conn.execute("""
SELECT worker_id, coalesce(left(md5(owner::text), 12), '-'), node_name, high_water_ms,
	   (extract(epoch FROM expires_at) * 1000)::bigint,
	   (extract(epoch FROM acquired_at) * 1000)::bigint,
	   coalesce((to_jsonb(l) ->> 'floor_ms')::bigint, -1)	-- recorded since 1.1
  FROM snowid_coordinator.leases l""").fetchall()
				fence = conn.execute("""
SELECT fence_floor_ms, coalesce((extract(epoch FROM fenced_until) * 1000)::bigint, 0)
  FROM snowid_coordinator.settings""").fetchone()
				events = conn.execute("""
SELECT event_id, (extract(epoch FROM at) * 1000)::bigint, coalesce(worker_id::text, '-'),
	   coalesce(translate(node_name, E' \t', '__'), '-'), event, coalesce(detail, '')
  FROM snowid_coordinator.events WHERE at > now() - interval '30 seconds'
 ORDER BY event_id""").fetchall()
			except Exception:
				if conn is not None:
					try:
						conn.close()
					except Exception:
						pass
				conn = None
				continue
			for r in rows:
				# one word per field: a node name may hold spaces (1.1 writes
				# "(restored by its node)" for a row a renewal restored)
				r = (r[0], r[1], '_'.join(r[2].split()) or '-') + tuple(r[3:])
				key = r[0]
				val = tuple(r[1:4])
				if last_rows.get(key) != val:
					last_rows[key] = val
					out.write('%d lease %d %s %s %d %d %d %d\n' % ((t,) + tuple(r)))
			if fence and tuple(fence) != last_fence:
				last_fence = tuple(fence)
				out.write('%d fence %d %d\n' % (t, fence[0], fence[1]))
			for e in events:
				if tuple(e[:5]) not in seen_events:
					seen_events.add(tuple(e[:5]))
					out.write('%d event %d %d %s %s %s %s\n' % ((t,) + tuple(e[:5]) + (e[5].replace('\n', ' '),)))
		out.close()

	# ---- the nemesis ----

	def pick_node(self):
		return self.rng.choice(self.cluster.nodes)

	def settle_node(self, node):
		"""After a (re)start: the keeper restart libfaketime needs."""
		ok = self.cluster.restart_keeper_for_faketime(node, timeout=C.LEASE_S + C.SAFETY_S + 40)
		if not ok:
			self.log('%s: not active again in time; keeper left as it is' % node['name'])

	def settle_coordinator(self, timeout=120):
		deadline = time.time() + timeout
		while time.time() < deadline:
			st = self.cluster.patroni_state()
			if st['leader'] and st['sync'] and st['streaming'] >= 1:
				return True
			time.sleep(1)
		self.log('coordinator: no leader with a synchronous standby after %d s: %s'
				 % (timeout, self.cluster.patroni_state()))
		return False

	def kill_node(self, node):
		pids = self.cluster.node_pids(node)
		if not pids:
			return
		start = now_ms()
		os.kill(pids[0], signal.SIGKILL)
		# Its children exit on their own once they notice the postmaster died
		# (they may still hand out ids until then); the next postmaster
		# cannot start while they hold the shared memory.
		deadline = time.time() + 20
		while time.time() < deadline and any(alive(p) for p in pids):
			time.sleep(0.1)
		left = [p for p in pids if alive(p)]
		for p in left:
			os.kill(p, signal.SIGKILL)
		time.sleep(self.rng.uniform(0.5, 2))
		self.cluster.start_node(node)
		self.fault(start, 'kill-node', node['name'], now_ms(), pid=pids[0], orphans_killed=len(left))
		self.settle_node(node)

	def kill_keeper(self, node):
		pid = self.cluster.node_psql(node, 'SELECT keeper_pid FROM snowid_status()')
		if not pid:
			return
		start = now_ms()
		os.kill(int(pid), signal.SIGKILL)
		# The postmaster treats it as a crash: every backend restarts.
		time.sleep(1)
		deadline = time.time() + 60
		while time.time() < deadline and self.cluster.node_psql(node, 'SELECT 1', timeout=3) != '1':
			time.sleep(0.2)
		self.fault(start, 'kill-keeper', node['name'], now_ms(), pid=pid)
		self.settle_node(node)

	def pause_keeper(self, node):
		pid = self.cluster.node_psql(node, 'SELECT keeper_pid FROM snowid_status()')
		if not pid:
			return
		hold = C.LEASE_S + self.rng.uniform(1, 3)
		start = now_ms()
		os.kill(int(pid), signal.SIGSTOP)
		time.sleep(hold)
		os.kill(int(pid), signal.SIGCONT)
		self.fault(start, 'pause-keeper', node['name'], now_ms(), pid=pid, hold_s='%.1f' % hold)

	def pause_node(self, node):
		pids = self.cluster.node_pids(node)
		if not pids:
			return
		hold = C.LEASE_S + self.rng.uniform(1, 3)
		start = now_ms()
		os.kill(pids[0], signal.SIGSTOP)			# first: it forks nothing more
		pids = self.cluster.node_pids(node)
		for p in pids[1:]:
			kill_quiet(p, signal.SIGSTOP)
		time.sleep(hold)
		for p in reversed(self.cluster.node_pids(node)):
			kill_quiet(p, signal.SIGCONT)
		self.fault(start, 'pause-node', node['name'], now_ms(), processes=len(pids),
				   hold_s='%.1f' % hold)

	def partition_node(self, node):
		hold = self.rng.uniform(3, C.LEASE_S + 5)
		start = now_ms()
		for m in self.cluster.members:
			self.cluster.drop_address(self.cluster.addr(m['m'], 10 + node['k']))
		time.sleep(hold)
		self.cluster.heal_all()
		self.fault(start, 'partition-node', node['name'], now_ms(), hold_s='%.1f' % hold)

	def partition_coord(self):
		st = self.cluster.patroni_state()
		hold = self.rng.uniform(3, 10)
		start = now_ms()
		for m in self.cluster.members:
			self.cluster.drop_address(self.cluster.addr(m['m'], 1))
		time.sleep(hold)
		self.cluster.heal_all()
		self.fault(start, 'partition-coord', '%s/%s' % (st['leader'], st['sync']), now_ms(),
				   hold_s='%.1f' % hold)
		self.settle_coordinator()

	def clock_bump(self, node):
		offset = self.rng.choice(['-0.003', '+0.003', '-0.050', '-0.500', '+0.500', '-2.5', '+2.5'])
		hold = self.rng.uniform(1.5, 4)
		start = now_ms()
		self.cluster.set_clock(node, offset)
		time.sleep(hold)
		self.cluster.set_clock(node, '+0')
		self.fault(start, 'clock-bump', node['name'], now_ms(), offset_s=offset, hold_s='%.1f' % hold)

	def clock_strobe(self, node):
		delta = self.rng.choice([0.004, 0.02, 0.2])
		period = self.rng.uniform(0.05, 0.2)
		hold = self.rng.uniform(2, 4)
		start = now_ms()
		flips = 0
		while time.time() * 1000 < start + hold * 1000:
			self.cluster.set_clock(node, '-%.3f' % delta if flips % 2 == 0 else '+0')
			flips += 1
			time.sleep(period)
		self.cluster.set_clock(node, '+0')
		self.fault(start, 'clock-strobe', node['name'], now_ms(), delta_s='%.3f' % delta,
				   period_s='%.3f' % period, flips=flips)

	def failover(self):
		leader = self.cluster.leader()
		if not leader:
			return
		mem = self.cluster.member(leader)
		p = self.cluster.procs.get('patroni.' + leader)
		start = now_ms()
		if p is not None and p.poll() is None:
			os.kill(p.pid, signal.SIGKILL)
			p.wait()
		pm = pidfile_pid(os.path.join(mem['data'], 'postmaster.pid'))
		if pm:
			kill_quiet(pm, signal.SIGKILL)
		# The standby takes over once the leader key expires (ttl); only then
		# does the old member come back, as a standby (pg_rewind).
		deadline = time.time() + C.PATRONI_TTL + C.PATRONI_LOOP_WAIT + 30
		new_leader = None
		while time.time() < deadline:
			new_leader = self.cluster.leader()
			if new_leader and new_leader != leader:
				break
			time.sleep(0.2)
		promoted_ms = now_ms() - start
		time.sleep(self.rng.uniform(0, 3))
		self.cluster.start_patroni(mem)
		heal = now_ms()
		ok = self.settle_coordinator()
		self.fault(start, 'failover', leader, heal, new_leader=new_leader, promoted_after_ms=promoted_ms,
				   settled=ok, settled_after_ms=now_ms() - start)
		self.later_dump()

	def switchover(self):
		st = self.cluster.patroni_state()
		if not (st['leader'] and st['sync']):
			return
		start = now_ms()
		r = self.cluster.as_pg(['/usr/bin/patronictl', '-c',
								os.path.join(self.cluster.dir, st['leader'] + '.yml'),
								'switchover', '--leader', st['leader'], '--candidate', st['sync'],
								'--force'], capture_output=True, text=True, timeout=120)
		ok = self.settle_coordinator()
		self.fault(start, 'switchover', '%s->%s' % (st['leader'], st['sync']), now_ms(),
				   rc=r.returncode, new_leader=self.cluster.leader(), settled=ok)
		self.later_dump()

	def dump(self):
		leader = self.cluster.leader()
		if not leader:
			return
		mem = self.cluster.member(leader)
		path = os.path.join(self.cluster.dir, 'coord.%d.dump' % len(self.dumps))
		r = self.cluster.as_pg([C.PG_BIN + '/pg_dump', '-Fc', '-h', mem['sock'], '-p', str(mem['port']),
								'-f', path, 'snowid_coord'], capture_output=True, text=True, timeout=60)
		if r.returncode == 0:
			tli = self.timeline(mem)
			self.dumps.append((now_ms(), path, tli))
			self.log('dump %s of the coordinator (on %s, timeline %s)' % (path, leader, tli))
		else:
			self.log('pg_dump failed: %s' % r.stderr.strip())

	def timeline(self, mem):
		try:
			return int(self.cluster.member_psql(
				mem, "SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int"))
		except Exception:
			return None

	def restore(self):
		leader = self.cluster.leader()
		if not leader or not self.dumps:
			return
		mem = self.cluster.member(leader)
		# The hard case first: a dump of this timeline, so that the restored
		# coordinator has the same system identifier and timeline as the one
		# it replaces (issue 10, item 3); else any earlier dump.
		tli = self.timeline(mem)
		same = [d for d in self.dumps if d[2] == tli and d[0] < now_ms() - 20000]
		dumped_at, path, dump_tli = same[0] if same else self.rng.choice(self.dumps)
		start = now_ms()
		r = self.cluster.as_pg([C.PG_BIN + '/pg_restore', '--clean', '--if-exists', '--single-transaction',
								'-h', mem['sock'], '-p', str(mem['port']), '-d', 'snowid_coord', path],
							   capture_output=True, text=True, timeout=120)
		if r.returncode != 0:
			self.log('pg_restore: %s' % r.stderr.strip()[:500])
		self.fault(start, 'restore', leader, now_ms(), dump_at=dumped_at,
				   age_s='%.0f' % ((start - dumped_at) / 1000), dump_timeline=dump_tli, timeline=tli,
				   rc=r.returncode)

	def later_dump(self):
		"""Half the time, a dump on the new timeline a little later, so that a
		later restore may find one of its own timeline."""
		if self.rng.random() < 0.5:
			self.dump_due = time.time() + self.rng.uniform(5, 30)

	def nemesis(self, deadline):
		weights = [FAULTS[k] for k in self.kinds]
		# Longest fault: a pause past the lease, or a partition, plus settling.
		longest = C.LEASE_S + 15
		while time.time() + longest < deadline:
			time.sleep(self.rng.uniform(0.3, 1.5))
			if self.rng.random() < 0.05 or (self.dump_due and time.time() > self.dump_due):
				self.dump_due = None
				self.dump()
				continue
			kind = self.rng.choices(self.kinds, weights)[0]
			try:
				if kind == 'kill-node':
					self.kill_node(self.pick_node())
				elif kind == 'kill-keeper':
					self.kill_keeper(self.pick_node())
				elif kind == 'pause-keeper':
					self.pause_keeper(self.pick_node())
				elif kind == 'pause-node':
					self.pause_node(self.pick_node())
				elif kind == 'partition-node':
					self.partition_node(self.pick_node())
				elif kind == 'partition-coord':
					self.partition_coord()
				elif kind == 'clock-bump':
					self.clock_bump(self.pick_node())
				elif kind == 'clock-strobe':
					self.clock_strobe(self.pick_node())
				elif kind == 'failover':
					self.failover()
				elif kind == 'switchover':
					self.switchover()
				elif kind == 'restore':
					self.restore()
			except Exception as e:
				self.log('nemesis: %s failed: %r' % (kind, e))
				self.cluster.heal_all()
				for node in self.cluster.nodes:
					self.cluster.set_clock(node, '+0')
					for p in self.cluster.node_pids(node):
						kill_quiet(p, signal.SIGCONT)

	# ---- the run ----

	def run(self):
		cl = self.cluster
		t0 = time.time()
		self.log('seed %d, duration %d s, fault kinds %s' % (self.seed, self.duration, ','.join(self.kinds)))
		cl.iptables_setup()
		cl.start_etcd()
		cl.start_members()
		cl.init_coordinator()
		cl.create_nodes()
		threading.Thread(target=self.sampler, daemon=True).start()
		# A new coordinator grants nothing for a lease plus the safety
		# period.  The first dump holds the leases of all nodes but the
		# last, as in issue 10 (item 3).
		for node in cl.nodes:
			if node is cl.nodes[-1]:
				self.dump()
			cl.start_node(node)
			cl.node_psql(node, 'CREATE EXTENSION snowid')
			if not cl.wait_active(node, C.LEASE_S + C.SAFETY_S + 60):
				raise RuntimeError('%s got no lease' % node['name'])
		for node in cl.nodes:
			self.settle_node(node)
		self.log('cluster up in %.0f s' % (time.time() - t0))
		self.load_start = now_ms()
		for node in cl.nodes:
			for c in range(CLIENTS_PER_NODE):
				t = threading.Thread(target=self.client, args=(node, c), daemon=True)
				t.start()
				self.threads.append(t)
		deadline = time.time() + self.duration
		self.nemesis(deadline)
		cl.heal_all()
		for node in cl.nodes:
			cl.set_clock(node, '+0')
		# Every node should generate again within lease + safety period.
		self.heal_end = now_ms()
		rest = max(deadline - time.time(), C.LEASE_S + C.SAFETY_S + 5)
		self.log('nemesis done; load goes on for %.0f s' % rest)
		time.sleep(rest)
		self.stop_load.set()
		for t in self.threads:
			t.join(timeout=30)
		self.load_end = now_ms()
		time.sleep(0.5)
		self.stop_sampler.set()
		time.sleep(0.5)

	def finish(self):
		"""Merge the parts into history.txt, calls.log, faults.log, meta.json."""
		bins = sorted(glob.glob(os.path.join(self.parts, '*.bin')))
		if self.duration <= TEXT_HISTORY_S:
			with open(os.path.join(self.out, 'history.txt'), 'w', buffering=1 << 20) as h:
				for f in bins:
					node, c = os.path.basename(f)[:-4].rsplit('.', 1)
					with open(f, 'rb') as src:
						while True:
							chunk = src.read(8 << 16)
							if not chunk:
								break
							ids = array('q', chunk)
							if sys.byteorder == 'little':
								ids.byteswap()
							prefix = '%s %s ' % (node, c)
							h.write(''.join('%s%d\n' % (prefix, i) for i in ids))
		else:
			hdir = os.path.join(self.out, 'history')
			shutil.rmtree(hdir, ignore_errors=True)
			os.makedirs(hdir)
			for f in bins:
				os.rename(f, os.path.join(hdir, os.path.basename(f)))
		calls = []
		for f in glob.glob(os.path.join(self.parts, 'calls.*')):
			with open(f) as src:
				calls.extend(src.readlines())
		calls.sort(key=lambda x: int(x.split(' ', 1)[0]))
		with open(os.path.join(self.out, 'calls.log'), 'w') as f:
			f.writelines(calls)
		shutil.rmtree(self.parts, ignore_errors=True)
		with open(os.path.join(self.out, 'faults.log'), 'w') as f:
			for line in sorted(self.fault_lines, key=lambda x: int(x.split(' ', 1)[0])):
				f.write(line + '\n')
		commit = subprocess.run(['git', '-C', os.path.dirname(os.path.abspath(__file__)), 'rev-parse',
								 'HEAD'], capture_output=True, text=True).stdout.strip()
		meta = {
			'seed': self.seed, 'duration_s': self.duration, 'commit': commit,
			'load_start_ms': getattr(self, 'load_start', None), 'load_end_ms': getattr(self, 'load_end', None),
			'heal_end_ms': getattr(self, 'heal_end', None),
			'nodes': [n['name'] for n in self.cluster.nodes], 'clients_per_node': CLIENTS_PER_NODE,
			'lease_ms': C.LEASE_S * 1000, 'safety_ms': C.SAFETY_S * 1000, 'margin_ms': C.MARGIN_S * 1000,
			'patroni': {'ttl': C.PATRONI_TTL, 'loop_wait': C.PATRONI_LOOP_WAIT,
						'retry_timeout': C.PATRONI_RETRY_TIMEOUT, 'members': C.MEMBERS,
						'synchronous_mode': True, 'synchronous_mode_strict': True},
			'etcd_members': C.ETCD_MEMBERS, 'worker_bits': 2, 'max_clock_wait_ms': 5,
			'fault_kinds': self.kinds,
		}
		with open(os.path.join(self.out, 'meta.json'), 'w') as f:
			json.dump(meta, f, indent=2)


def alive(pid):
	try:
		os.kill(pid, 0)
		return True
	except OSError:
		return False


def kill_quiet(pid, sig):
	try:
		os.kill(pid, sig)
	except OSError:
		pass


def pidfile_pid(path):
	try:
		with open(path) as f:
			return int(f.readline())
	except (OSError, ValueError):
		return None


def main():
	ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
	ap.add_argument('--seed', type=int, default=None)
	ap.add_argument('--duration', type=int, default=180)
	ap.add_argument('--out', default=os.path.join(os.path.dirname(os.path.abspath(__file__)), 'out'))
	ap.add_argument('--kinds', default=os.environ.get('CHAOS_KINDS', ''),
					help='comma-separated fault kinds (default: all)')
	ap.add_argument('--keep', action='store_true', help='keep the scratch directory')
	args = ap.parse_args()
	if args.seed is None:
		args.seed = int(time.time() * 1000) % 1000000007
	if os.geteuid() != 0:
		sys.exit('chaos.py must run as root (iptables rules, servers started as postgres)')
	run = Run(args)
	print('chaos: seed %d (rerun with SEED=%d)' % (args.seed, args.seed), flush=True)

	def on_signal(signum, frame):
		raise KeyboardInterrupt('signal %d' % signum)
	signal.signal(signal.SIGTERM, on_signal)
	signal.signal(signal.SIGHUP, on_signal)
	rc = 0
	try:
		run.run()
	except BaseException as e:
		run.log('run failed: %r' % e)
		rc = 2
	finally:
		run.stop_load.set()
		run.stop_sampler.set()
		for t in run.threads:
			t.join(timeout=10)
		run.cluster.teardown()
		run.log('cluster torn down')
		run.finish()
		# the servers' logs, for a post-mortem
		logs = os.path.join(run.out, 'logs')
		os.makedirs(logs, exist_ok=True)
		for f in glob.glob(os.path.join(run.workdir, '*.log')):
			shutil.copy(f, logs)
		if not args.keep:
			shutil.rmtree(run.workdir, ignore_errors=True)
	if rc:
		return rc
	hist = os.path.join(run.out, 'history')
	if not os.path.isdir(hist):
		hist += '.txt'
	check = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
														 'check.py'), hist])
	return check.returncode


if __name__ == '__main__':
	sys.exit(main())
