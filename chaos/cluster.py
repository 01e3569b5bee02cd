"""chaos/cluster.py: the cluster the chaos harness runs on, and its teardown.

Three etcd members (Debian's etcd-server 3.4), two Patroni (Debian's patroni
3.0) PostgreSQL members holding the snowid_coordinator extension, with
synchronous_mode and synchronous_mode_strict, and three snowid nodes in
remote mode (worker_bits = 2: a pool of 4 worker ids for 3 nodes and their
restarts), each started with libfaketime so the nemesis can move its clock.

Everything listens on loopback only.  Each path that a partition may cut
has an address of its own in 127.0.0.0/8, because on Linux every loopback
connection gets the source address 127.0.0.1 whatever its destination: a
rule can only tell paths apart by the server's address.

    127.0.0.1            etcd (clients and peers)
    127.{r}.{m}.1        coordinator member m: replication and REST API (m = 1, 2)
    127.{r}.{m}.10       member m, for the lease sampler
    127.{r}.{m}.1{k}     member m, for snowid node k's lease keeper (k = 1..3)

where r (16 to 245) is drawn per run, so that two runs at once (a soak and
make test) never cut each other's paths; each run has its own iptables
chain, SNOWID_CHAOS_{r}.  The nodes listen on Unix sockets only.

Nodes reach the coordinator with a multi-host conninfo and
target_session_attrs=read-write (README.md, "Chaos testing", says why).
Authentication is trust on loopback: snowid 1.1 refuses a password in
snowid.coordinator, and this cluster never leaves the machine.

Every process is started here and stopped in Cluster.teardown(), which the
harness calls from a finally block and a signal handler.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request

PG_BIN = subprocess.run([os.environ.get('PG_CONFIG', '/usr/lib/postgresql/15/bin/pg_config'),
						 '--bindir'], capture_output=True, text=True).stdout.strip() or \
	'/usr/lib/postgresql/15/bin'

# Lease timing, chosen from Patroni's ttl (README.md, "Chaos testing"):
# a node renews every third of the lease, so a renewal made just before the
# coordinator's primary dies leaves it 2/3 of the lease to find the new
# primary; Patroni needs up to ttl + loop_wait (+ promotion) for that.
PATRONI_TTL = 10
PATRONI_LOOP_WAIT = 1
PATRONI_RETRY_TIMEOUT = 4
LEASE_S = 20
SAFETY_S = 5
MARGIN_S = 1
NODES = 3
MEMBERS = 2
ETCD_MEMBERS = 3
FAKETIME_LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1'


def free_port():
	s = socket.socket()
	s.bind(('127.0.0.1', 0))
	port = s.getsockname()[1]
	s.close()
	return port


def pg_env(env=None):
	"""The environment of a process run as postgres."""
	e = dict(env if env is not None else os.environ)
	e.update(HOME='/var/lib/postgresql', USER='postgres', LOGNAME='postgres')
	e['PATH'] = PG_BIN + ':/usr/sbin:/usr/bin:/sbin:/bin'
	return e


def now_ms():
	return int(time.time() * 1000)


class Cluster:
	"""The servers of one chaos run, under a scratch directory."""

	def __init__(self, workdir, log):
		self.dir = workdir
		self.log = log
		self.procs = {}			# name -> Popen (etcd, patroni)
		self.etcd = []
		self.members = []
		self.nodes = []
		self.iptables_ready = False
		self.net = self.pick_net()
		self.chain = 'SNOWID_CHAOS_%d' % self.net
		os.makedirs(self.dir, exist_ok=True)
		shutil.chown(self.dir, 'postgres', 'postgres')

	# ---- helpers ----

	@staticmethod
	def pick_net():
		"""A second octet no other run's chain uses."""
		taken = subprocess.run(['iptables', '-w', '5', '-S'], capture_output=True, text=True).stdout
		for _ in range(1000):
			r = 16 + (os.getpid() + int(time.time() * 1000)) % 230
			if 'SNOWID_CHAOS_%d' % r not in taken:
				return r
			time.sleep(0.001)
		raise RuntimeError('no free address range for a chaos run')

	def addr(self, m, host):
		"""The loopback address of coordinator member m for one path."""
		return '127.%d.%d.%s' % (self.net, m, host)

	def as_pg(self, args, env=None, **kw):
		"""Run a command as the postgres OS user and wait for it."""
		return subprocess.run(args, env=pg_env(env), user='postgres', group='postgres',
							  extra_groups=[], cwd=self.dir, **kw)

	def spawn_pg(self, name, args, env=None):
		"""Start a long-running process as postgres, output to a log file."""
		logf = open(os.path.join(self.dir, name + '.log'), 'ab')
		p = subprocess.Popen(args, stdout=logf, stderr=subprocess.STDOUT,
							 stdin=subprocess.DEVNULL, env=pg_env(env),
							 user='postgres', group='postgres', extra_groups=[],
							 cwd=self.dir, start_new_session=True)
		self.procs[name] = p
		return p

	def mkdir_pg(self, path):
		os.makedirs(path, exist_ok=True)
		shutil.chown(path, 'postgres', 'postgres')
		os.chmod(path, 0o700)
		return path

	# ---- etcd ----

	def start_etcd(self):
		for i in range(ETCD_MEMBERS):
			self.etcd.append({'name': 'etcd%d' % (i + 1), 'client': free_port(),
							  'peer': free_port()})
		initial = ','.join('%s=http://127.0.0.1:%d' % (e['name'], e['peer'])
						   for e in self.etcd)
		for e in self.etcd:
			data = self.mkdir_pg(os.path.join(self.dir, e['name']))
			self.spawn_pg(e['name'], [
				'/usr/bin/etcd', '--name', e['name'], '--data-dir', data,
				'--listen-client-urls', 'http://127.0.0.1:%d' % e['client'],
				'--advertise-client-urls', 'http://127.0.0.1:%d' % e['client'],
				'--listen-peer-urls', 'http://127.0.0.1:%d' % e['peer'],
				'--initial-advertise-peer-urls', 'http://127.0.0.1:%d' % e['peer'],
				'--initial-cluster', initial,
				'--initial-cluster-state', 'new',
				'--initial-cluster-token', 'snowid-chaos-%d' % os.getpid(),
				# a busy 2-core machine: longer than the defaults (100/1000 ms)
				'--heartbeat-interval', '200', '--election-timeout', '2500'])
		deadline = time.time() + 60
		while time.time() < deadline:
			try:
				with urllib.request.urlopen('http://127.0.0.1:%d/health' % self.etcd[0]['client'],
											timeout=2) as r:
					if json.load(r).get('health') == 'true':
						self.log('etcd: %d members healthy' % ETCD_MEMBERS)
						return
			except Exception:
				pass
			time.sleep(0.5)
		raise RuntimeError('etcd did not become healthy')

	# ---- the coordinator: Patroni members ----

	def member_conf(self, m):
		mem = self.members[m - 1]
		listen = ','.join([self.addr(m, 1), self.addr(m, 10)] +
						  [self.addr(m, 10 + k) for k in range(1, NODES + 1)])
		main = self.addr(m, 1)
		hosts = ','.join('127.0.0.1:%d' % e['client'] for e in self.etcd)
		return f"""scope: snowid-chaos
name: {mem['name']}
log:
  level: INFO
restapi:
  listen: {main}:{mem['rest']}
  connect_address: {main}:{mem['rest']}
etcd3:
  hosts: {hosts}
bootstrap:
  dcs:
    ttl: {PATRONI_TTL}
    loop_wait: {PATRONI_LOOP_WAIT}
    retry_timeout: {PATRONI_RETRY_TIMEOUT}
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    synchronous_mode_strict: true
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        wal_log_hints: 'on'
        max_connections: 60
        max_wal_senders: 5
        max_replication_slots: 5
        wal_keep_size: 256MB
        shared_buffers: 32MB
        log_min_messages: warning
  initdb:
  - encoding: UTF8
  - auth: trust
  pg_hba:
  - local all all trust
  - local replication all trust
  - host all all 127.0.0.0/8 trust
  - host replication all 127.0.0.0/8 trust
postgresql:
  listen: {listen}:{mem['port']}
  connect_address: {main}:{mem['port']}
  use_unix_socket: true
  data_dir: {mem['data']}
  bin_dir: {PG_BIN}
  pgpass: {self.dir}/pgpass.{mem['name']}
  remove_data_directory_on_rewind_failure: true
  remove_data_directory_on_diverged_timelines: true
  authentication:
    superuser:
      username: postgres
    replication:
      username: postgres
    rewind:
      username: postgres
  parameters:
    unix_socket_directories: '{mem['sock']}'
"""

	def start_members(self):
		for m in range(1, MEMBERS + 1):
			name = 'pg%d' % m
			self.members.append({
				'name': name, 'm': m, 'port': free_port(), 'rest': free_port(),
				'data': os.path.join(self.dir, name),
				'sock': self.mkdir_pg(os.path.join(self.dir, 'sock.' + name))})
			conf = os.path.join(self.dir, name + '.yml')
			with open(conf, 'w') as f:
				f.write(self.member_conf(m))
			os.chmod(conf, 0o644)
		for mem in self.members:
			self.start_patroni(mem)
		deadline = time.time() + 120
		while time.time() < deadline:
			st = self.patroni_state()
			if st['leader'] and st['sync'] and st['streaming'] == MEMBERS - 1:
				self.log('patroni: leader %s, sync standby %s' % (st['leader'], st['sync']))
				return
			time.sleep(1)
		raise RuntimeError('patroni did not elect a leader with a synchronous standby: %s'
						   % self.patroni_state())

	def start_patroni(self, mem):
		env = dict(os.environ, PATH=PG_BIN + ':/usr/bin:/bin')
		self.spawn_pg('patroni.' + mem['name'],
					  ['/usr/bin/patroni', os.path.join(self.dir, mem['name'] + '.yml')],
					  env=env)

	def patroni_cluster(self):
		"""Patroni's /cluster view, from any member that answers."""
		for mem in self.members:
			try:
				with urllib.request.urlopen('http://%s:%d/cluster' % (self.addr(mem['m'], 1), mem['rest']),
											timeout=2) as r:
					return json.load(r)
			except Exception:
				continue
		return {'members': []}

	def patroni_state(self):
		c = self.patroni_cluster()
		st = {'leader': None, 'sync': None, 'streaming': 0}
		for mem in c.get('members', []):
			if mem.get('role') == 'leader' and mem.get('state') == 'running':
				st['leader'] = mem['name']
			elif mem.get('role') == 'sync_standby':
				st['sync'] = mem['name']
			if mem.get('state') in ('streaming', 'running') and mem.get('role') != 'leader':
				st['streaming'] += 1
		return st

	def member(self, name):
		return [m for m in self.members if m['name'] == name][0]

	def member_psql(self, mem, sql, db='postgres', timeout=30):
		r = self.as_pg([PG_BIN + '/psql', '-X', '-At', '-v', 'ON_ERROR_STOP=1',
						'-h', mem['sock'], '-p', str(mem['port']), '-d', db, '-c', sql],
					   capture_output=True, text=True, timeout=timeout)
		if r.returncode != 0:
			raise RuntimeError('psql on %s failed: %s' % (mem['name'], r.stderr.strip()))
		return r.stdout.strip()

	def leader(self):
		return self.patroni_state()['leader']

	def init_coordinator(self):
		mem = self.member(self.leader())
		self.member_psql(mem, 'CREATE DATABASE snowid_coord')
		self.member_psql(mem, f"""
CREATE EXTENSION snowid_coordinator;
SELECT snowid_coordinator.initialize(worker_bits => 2, lease_time => '{LEASE_S}s',
	safety_period => '{SAFETY_S}s', lease_margin => '{MARGIN_S}s', single_server => false);
CREATE ROLE snowid_node LOGIN;
GRANT USAGE ON SCHEMA snowid_coordinator TO snowid_node;
-- EXECUTE on every version of the lease protocol this coordinator has
DO $grant$
DECLARE
	f regprocedure;
BEGIN
	FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
			   JOIN pg_namespace n ON n.oid = p.pronamespace
			  WHERE n.nspname = 'snowid_coordinator'
				AND p.proname ~ '^lease_(acquire|renew|release)_v[0-9]+$' LOOP
		EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO snowid_node', f);
	END LOOP;
END
$grant$;
""", db='snowid_coord')
		self.log('coordinator initialised on %s (lease %ss, safety %ss, margin %ss)'
				 % (mem['name'], LEASE_S, SAFETY_S, MARGIN_S))

	def coord_conninfo(self, last_octet, user):
		hosts = ','.join(self.addr(m['m'], last_octet) for m in self.members)
		ports = ','.join(str(m['port']) for m in self.members)
		return ('host=%s port=%s dbname=snowid_coord user=%s '
				'target_session_attrs=read-write connect_timeout=2' % (hosts, ports, user))

	# ---- snowid nodes ----

	def create_nodes(self):
		for k in range(1, NODES + 1):
			name = 'n%d' % k
			node = {'name': name, 'k': k, 'port': free_port(),
					'data': os.path.join(self.dir, name),
					'sock': self.mkdir_pg(os.path.join(self.dir, 'sock.' + name)),
					'clock': os.path.join(self.dir, name + '.faketime')}
			self.nodes.append(node)
			self.set_clock(node, '+0')
			self.as_pg([PG_BIN + '/initdb', '-D', node['data'], '-A', 'trust', '-U', 'postgres'],
					   stdout=subprocess.DEVNULL, check=True)
			with open(os.path.join(node['data'], 'postgresql.conf'), 'a') as f:
				f.write(f"""
listen_addresses = ''
port = {node['port']}
unix_socket_directories = '{node['sock']}'
cluster_name = '{name}'
shared_preload_libraries = 'snowid'
snowid.coordinator = '{self.coord_conninfo(10 + k, 'snowid_node')}'
snowid.worker_bits = 2
snowid.node_name = '{name}'
max_connections = 30
shared_buffers = 16MB
fsync = off
log_min_messages = warning
restart_after_crash = on
""")

	def set_clock(self, node, offset):
		"""libfaketime rereads this file at every clock read (FAKETIME_NO_CACHE)."""
		tmp = node['clock'] + '.new'
		with open(tmp, 'w') as f:
			f.write(offset + '\n')
		os.chmod(tmp, 0o644)
		os.rename(tmp, node['clock'])

	def start_node(self, node):
		env = dict(os.environ, LD_PRELOAD=FAKETIME_LIB,
				   FAKETIME_TIMESTAMP_FILE=node['clock'], FAKETIME_NO_CACHE='1',
				   FAKETIME_DONT_FAKE_MONOTONIC='1', DONT_FAKE_MONOTONIC='1')
		r = self.as_pg([PG_BIN + '/pg_ctl', '-D', node['data'], '-l',
						os.path.join(self.dir, node['name'] + '.log'), '-w', '-t', '60', 'start'],
					   env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
		if r.returncode != 0:
			raise RuntimeError('could not start %s: %s' % (node['name'], r.stderr))

	def node_psql(self, node, sql, timeout=10):
		r = self.as_pg([PG_BIN + '/psql', '-X', '-At', '-h', node['sock'], '-p', str(node['port']),
						'-d', 'postgres', '-c', sql],
					   capture_output=True, text=True, timeout=timeout)
		return r.stdout.strip() if r.returncode == 0 else None

	def node_pids(self, node):
		"""The postmaster's pid and its children's, postmaster first."""
		try:
			with open(os.path.join(node['data'], 'postmaster.pid')) as f:
				pm = int(f.readline())
			os.kill(pm, 0)
		except (OSError, ValueError):
			return []
		kids = subprocess.run(['pgrep', '-P', str(pm)], capture_output=True, text=True).stdout.split()
		return [pm] + [int(x) for x in kids]

	def wait_active(self, node, timeout):
		deadline = time.time() + timeout
		while time.time() < deadline:
			try:
				if self.node_psql(node, 'SELECT state FROM snowid_status()', timeout=5) == 'active':
					return True
			except subprocess.TimeoutExpired:
				pass
			time.sleep(0.3)
		return False

	def restart_keeper_for_faketime(self, node, timeout=90):
		"""libfaketime does not reach a keeper forked from the postmaster's
		signal handler (test/perl/SnowidTest.pm restart_keeper_for_faketime):
		once the node is active, cancel its keeper so the postmaster starts a
		new one from its main loop; it resumes the lease from shared memory."""
		if not self.wait_active(node, timeout):
			return False
		old = self.node_psql(node, 'SELECT keeper_pid FROM snowid_status()')
		if not old:
			return False
		self.node_psql(node, 'SELECT pg_cancel_backend(%s)' % old)
		deadline = time.time() + 20
		while time.time() < deadline:
			if self.node_psql(node, "SELECT keeper_pid <> %s AND state = 'active' FROM snowid_status()"
							  % old) == 't':
				return True
			time.sleep(0.2)
		return False

	# ---- iptables: dropped packets on loopback addresses ----

	def iptables(self, *args, check=True):
		return subprocess.run(['iptables', '-w', '5'] + list(args), check=check,
							  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

	def iptables_setup(self):
		self.iptables_teardown()
		self.iptables('-N', self.chain)
		self.iptables('-I', 'OUTPUT', '1', '-j', self.chain)
		self.iptables_ready = True

	def iptables_teardown(self):
		while self.iptables('-D', 'OUTPUT', '-j', self.chain, check=False).returncode == 0:
			pass
		self.iptables('-F', self.chain, check=False)
		self.iptables('-X', self.chain, check=False)

	def drop_address(self, addr):
		"""Drop every packet to or from one loopback address (both ways)."""
		self.iptables('-A', self.chain, '-d', addr, '-j', 'DROP')
		self.iptables('-A', self.chain, '-s', addr, '-j', 'DROP')

	def heal_all(self):
		self.iptables('-F', self.chain, check=False)

	# ---- teardown ----

	def teardown(self):
		"""Stop everything, whatever state the run left it in."""
		try:
			self.iptables_teardown()
		except Exception as e:
			self.log('iptables teardown: %s' % e)
		for node in self.nodes:
			pids = self.node_pids(node)
			for p in pids:
				try:
					os.kill(p, signal.SIGCONT)
				except OSError:
					pass
			if pids:
				self.as_pg([PG_BIN + '/pg_ctl', '-D', node['data'], '-m', 'immediate', '-w', '-t', '20',
							'stop'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
			for p in self.node_pids(node) or pids:
				try:
					os.kill(p, signal.SIGKILL)
				except OSError:
					pass
		# Patroni first (it would restart its PostgreSQL), then its servers.
		for name, p in list(self.procs.items()):
			if name.startswith('patroni.') and p.poll() is None:
				try:
					os.killpg(p.pid, signal.SIGCONT)
					os.killpg(p.pid, signal.SIGKILL)
				except OSError:
					pass
				p.wait()
		for mem in self.members:
			pidfile = os.path.join(mem['data'], 'postmaster.pid')
			try:
				with open(pidfile) as f:
					pm = int(f.readline())
				os.kill(pm, signal.SIGCONT)
				os.kill(pm, signal.SIGQUIT)		# immediate shutdown
				for _ in range(100):
					os.kill(pm, 0)
					time.sleep(0.1)
				os.kill(pm, signal.SIGKILL)
			except (OSError, ValueError):
				pass
		for name, p in list(self.procs.items()):
			if p.poll() is None:
				try:
					os.killpg(p.pid, signal.SIGKILL)
				except OSError:
					pass
				p.wait()
