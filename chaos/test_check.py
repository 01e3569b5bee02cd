#!/usr/bin/python3
"""chaos/test_check.py: the checker's own test (TAP output).

Builds small histories by hand, with the lease samples a coordinator would
have recorded, and runs chaos/check.py on each: a clean one must be valid;
one with a planted duplicate, one with an id outside its lease's window,
one with ids going backwards within a lease, and one where the coordinator
granted a worker id with a floor below what its earlier owner may have
used (the in-place restore of issue 10) must each be reported invalid,
with the right count.  Every case runs twice: with the history as
history.txt, and in the compact form of a long run (history/, 8-byte ids
per client), whose duplicates the checker finds by merging sorted runs.
"""

import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EPOCH = 1735689600000
T0 = 1796000000000			# unix ms of the synthetic run
tests = 0
failed = 0


def report(cond, name):
	global tests, failed
	tests += 1
	if not cond:
		failed += 1
	print('%s %d - %s' % ('ok' if cond else 'not ok', tests, name), flush=True)


def make_id(ts, worker, seq):
	return ((ts - EPOCH) << 14) | (worker << 12) | seq


class Synthetic:
	"""A run of two nodes: n1 holds worker 0, then n3 takes worker 0 after n1
	is gone; n2 holds worker 1 all along."""

	def __init__(self):
		self.leases = []
		self.history = []		# (node, client, id)
		self.calls = []
		self.faults = []
		# leases: n1 on worker 0, granted at T0, renewed to T0 + 21000
		self.lease(T0, 0, 'aaaa', 'n1', T0 + 21000)
		self.lease(T0 + 6000, 0, 'aaaa', 'n1', T0 + 27000)
		self.lease(T0, 1, 'bbbb', 'n2', T0 + 21000)
		self.lease(T0 + 6000, 1, 'bbbb', 'n2', T0 + 47000)
		# n1 is killed at T0 + 10000; its lease expires, worker 0 cools down,
		# n3 gets it at T0 + 40000 with floor T0 + 27000 (n1's high-water mark)
		self.lease(T0 + 40000, 0, 'cccc', 'n3', T0 + 61000)
		self.events(T0, 'event 1 %d 0 n1 grant' % T0)
		self.events(T0 + 40000, 'event 2 %d 0 n3 grant' % (T0 + 40000))
		seq = 0
		for t in range(T0 + 100, T0 + 10000, 50):
			self.ack(t, 'n1', 0, make_id(t, 0, seq % 4096))
			self.ack(t, 'n2', 1, make_id(t, 1, seq % 4096))
			seq += 1
		for t in range(T0 + 10000, T0 + 40000, 50):
			self.ack(t, 'n2', 1, make_id(t, 1, seq % 4096))
			seq += 1
		for t in range(T0 + 40100, T0 + 45000, 50):
			self.ack(t, 'n3', 0, make_id(t, 0, seq % 4096))
			self.ack(t, 'n2', 1, make_id(t, 1, seq % 4096))
			seq += 1
		self.faults.append('%d kill-node n1 heal=%d pid=1' % (T0 + 10000, T0 + 40000))

	def lease(self, t, w, owner, node, hw):
		self.leases.append('%d lease %d %s %s %d %d %d' % (t + 50, w, owner, node, hw, t + 20000, t))

	def events(self, t, line):
		self.leases.append('%d %s' % (t + 50, line))

	def ack(self, t, node, client, i):
		self.history.append((node, client, i))
		self.calls.append('%d %d %s %d nextval 1 ok %d %d' % (t, t + 1, node, client, i, i))

	def write(self, d, form):
		"""The run's files; the history as history.txt (form 'text') or in
		the compact form of a long run (form 'binary': history/, one file
		of 8-byte big-endian ids per client)."""
		os.makedirs(d, exist_ok=True)
		with open(os.path.join(d, 'meta.json'), 'w') as f:
			json.dump({'worker_bits': 2, 'sequence_bits': 12, 'epoch_ms': EPOCH, 'lease_ms': 20000,
					   'safety_ms': 5000, 'margin_ms': 1000, 'patroni': {'ttl': 10, 'loop_wait': 1},
					   'load_start_ms': T0, 'load_end_ms': T0 + 45000, 'seed': 0}, f)
		with open(os.path.join(d, 'leases.log'), 'w') as f:
			f.write('\n'.join(sorted(self.leases, key=lambda x: int(x.split()[0]))) + '\n')
		if form == 'binary':
			os.makedirs(os.path.join(d, 'history'))
			per = {}
			for node, client, i in self.history:
				per.setdefault((node, client), []).append(i)
			for (node, client), ids in per.items():
				with open(os.path.join(d, 'history', '%s.%d.bin' % (node, client)), 'wb') as f:
					f.write(b''.join(struct.pack('>q', i) for i in ids))
		else:
			with open(os.path.join(d, 'history.txt'), 'w') as f:
				for node, client, i in self.history:
					f.write('%s %d %d\n' % (node, client, i))
		with open(os.path.join(d, 'calls.log'), 'w') as f:
			f.write('\n'.join(sorted(self.calls, key=lambda x: int(x.split()[0]))) + '\n')
		with open(os.path.join(d, 'faults.log'), 'w') as f:
			f.write('\n'.join(self.faults) + '\n')
		return os.path.join(d, 'history' if form == 'binary' else 'history.txt')


def check(history):
	# small ranges: the duplicate merge crosses many range boundaries
	env = dict(os.environ, SNOWID_CHECK_RANGE='97')
	r = subprocess.run([sys.executable, os.path.join(HERE, 'check.py'), history, '--no-plot'],
					   capture_output=True, text=True, env=env)
	path = os.path.join(os.path.dirname(os.path.abspath(history)), 'report.json')
	rep = json.load(open(path)) if os.path.exists(path) else {}
	return r.returncode, rep, r.stdout + r.stderr


def main():
	top = tempfile.mkdtemp(prefix='snowid-check-test.')
	for form in ('text', 'binary'):
		cases(os.path.join(top, form), form)
	print('1..%d' % tests)
	if failed == 0:
		subprocess.run(['rm', '-rf', top])
	else:
		print('# kept %s' % top)
	return 1 if failed else 0


def cases(top, form):
	"""Every case, on one form of the history."""
	def ok(cond, name):
		report(cond, '%s (%s history)' % (name, form))

	s = Synthetic()
	rc, rep, out = check(s.write(os.path.join(top, 'clean'), form))
	ok(rc == 0 and rep.get('valid') is True, 'clean history: valid (%s)' % out.strip())
	ok(rep.get('acknowledged') == len(s.history) and rep.get('duplicated_count') == 0,
	   'clean history: every id acknowledged once')
	ok(rep.get('faults') == {'kill-node': 1}, 'clean history: the fault is counted')
	a = rep.get('availability', {})
	ok(a.get('n1', {}).get('longest_outage_ms', 0) >= 29000 and a.get('n2', {}).get('outages') == 0,
	   'clean history: n1 was out while killed, n2 never')

	s = Synthetic()
	s.history.append(('n2', 1, s.history[10][2]))		# an id n1 already got
	rc, rep, out = check(s.write(os.path.join(top, 'duplicate'), form))
	ok(rc == 1 and rep.get('valid') is False, 'planted duplicate: invalid')
	ok(rep.get('duplicated_count') == 1 and rep['duplicated'][0]['id'] == s.history[10][2],
	   'planted duplicate: reported with its id')
	ok(sorted(rep['duplicated'][0]['acknowledged_by']) == ['n1/0', 'n2/1'],
	   'planted duplicate: both clients named')

	s = Synthetic()
	t = T0 + 27000 + 5			# after n1's last high-water mark
	s.history.insert(len(s.history) // 3, ('n1', 0, make_id(t, 0, 0)))
	rc, rep, out = check(s.write(os.path.join(top, 'window'), form))
	ok(rc == 1 and rep.get('valid') is False, 'id beyond its lease\'s high-water mark: invalid')
	ok(rep.get('out_of_window_count') == 1 and rep['out_of_window'][0]['ts_ms'] == t,
	   'id beyond its lease\'s high-water mark: reported')
	ok(rep.get('duplicated_count') == 0, 'id beyond its lease\'s high-water mark: not a duplicate')

	s = Synthetic()
	t = T0 + 20000			# n3's id below its floor (n1's high-water mark, T0 + 27000)
	s.history.append(('n3', 0, make_id(t, 0, 1)))
	rc, rep, out = check(s.write(os.path.join(top, 'floor'), form))
	ok(rc == 1 and rep.get('out_of_window_count') == 1, 'id at or below its lease\'s floor: invalid')

	s = Synthetic()
	k = [i for i, h in enumerate(s.history) if h[0] == 'n2'][50]
	s.history[k], s.history[k + 2] = s.history[k + 2], s.history[k]
	rc, rep, out = check(s.write(os.path.join(top, 'order'), form))
	ok(rc == 1 and rep.get('order_violations_count', 0) >= 1, 'ids going backwards within a lease: invalid')

	# The coordinator's contested marks (1.1): one fixed owner for all of
	# them, so each stretch is a lease of its own; a restore may bring an
	# old mark back.  None of it is a grant below a high-water mark.
	s = Synthetic()
	zero = '9f89c84a559f'
	s.leases.append('%d lease 0 %s (contested) %d %d %d' % (T0 + 30050, zero, T0 + 27000, T0 + 50000, T0))
	s.leases.append('%d lease 0 %s (contested) %d %d %d' % (T0 + 44050, zero, T0 + 61000, T0 + 65000, T0))
	s.leases.append('%d lease 0 %s (contested) %d %d %d' % (T0 + 44550, zero, T0 + 5000, T0 + 20000, T0))
	rc, rep, out = check(s.write(os.path.join(top, 'contested'), form))
	ok(rc == 0 and rep.get('lease_overlaps_count') == 0,
	   'contested marks, one brought back by a restore: no lease overlap (%s)' % out.strip()[:200])

	# The restore case: the coordinator forgets n1's renewals (its row is
	# back at an old high-water mark) and grants worker 0 to n3 while n1
	# may still use times up to T0 + 27000.
	s = Synthetic()
	s.leases = [x for x in s.leases if ' cccc ' not in x]
	s.lease(T0 + 12000, 0, 'aaaa', 'n1', T0 + 21000)		# the restored row
	s.leases.append('%d lease 0 dddd n3 %d %d %d' % (T0 + 12050, T0 + 33000, T0 + 32000, T0 + 12000))
	s.history = [h for h in s.history if h[0] != 'n3']
	s.history.append(('n3', 0, make_id(T0 + 22000, 0, 7)))
	s.faults.append('%d restore pg1 heal=%d dump_at=%d dump_timeline=1 timeline=1 rc=0'
					% (T0 + 11900, T0 + 11950, T0 + 100))
	rc, rep, out = check(s.write(os.path.join(top, 'restore'), form))
	ok(rc == 1 and rep.get('lease_overlaps_count') == 1,
	   'a grant with a floor below the earlier owner\'s high-water mark: invalid')
	ok(rep['lease_overlaps'][0].get('after_inplace_restore_ms') == T0 + 11900,
	   'that grant is tied to the in-place restore before it')
	r = subprocess.run([sys.executable, os.path.join(HERE, 'tap.py'), os.path.join(top, 'restore', 'report.json')],
					   capture_output=True, text=True)
	ok(r.returncode == 1 and any('high-water mark' in x for x in r.stdout.splitlines() if x.startswith('not ok')),
	   'the chaos suite fails on it')


if __name__ == '__main__':
	sys.exit(main())
