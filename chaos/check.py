#!/usr/bin/python3
"""chaos/check.py: the independent checker of a chaos run.

    check.py HISTORY [--out DIR]

HISTORY is a history.txt ("<node> <client> <id>", one acknowledged id a
line, each client's ids in the order it received them).  Beside it the
checker reads, when present:

    calls.log    "<start ms> <end ms> <node> <client> <op> <n> <status> <min> <max>"
    leases.log   the coordinator's leases rows, fence and events, sampled
    faults.log   "<unix ms> <kind> <target> heal=<unix ms> ..."
    meta.json    layout, lease timing, load start and end

It trusts none of the code under test: ids are decoded here from the
layout, and lease windows are rebuilt from what the coordinator recorded.
It checks

1. unique: no id acknowledged twice (Jepsen's unique-ids: attempted,
   acknowledged, duplicated);
2. windows: every id's timestamp lies inside the window of a lease its
   node held on the id's worker id: above the lease's floor (the highest
   high-water mark the worker id had before the grant, or the coordinator's
   fence floor) and at or below the highest high-water mark recorded for
   that lease;
3. order: within one node and one lease, ids strictly increase: for each
   client in the order it got them, and across clients for every call that
   ended before another one started (calls.log);
4. the coordinator: no lease's floor lies below what an earlier lease of
   the same worker id may have used (its high-water mark, or its last used
   time if it released);

and reports availability per node (share of seconds with at least one
acknowledged call) and, for each fault, how long after its heal every node
generated again.  Writes report.json, summary.md, ids_per_s.dat and
ids_per_s.png (gnuplot) into DIR (default: the history's directory).
Exits 0 when valid, 1 when a check failed, 2 on bad input.
"""

import argparse
import bisect
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

CONTESTED = '(contested)'	# the node name of a lease the coordinator took from two owners
FIRST = 20			# how many examples of each violation the report keeps
CHUNK = 1 << 21		# ids per step of the window check
RANGE = int(os.environ.get('SNOWID_CHECK_RANGE', 1 << 23))	# ids per range of the duplicate merge, roughly
DEFAULTS = {'worker_bits': 2, 'sequence_bits': 12, 'epoch_ms': 1735689600000,
			'lease_ms': 20000, 'safety_ms': 5000,
			'patroni': {'ttl': 10, 'loop_wait': 1}}


class Lease:
	__slots__ = ('worker', 'owner', 'node', 'first_seen', 'floor', 'hw_max', 'released',
				 'idx', 'ids')

	def __init__(self, worker, owner, node, first_seen, floor, hw):
		self.worker = worker
		self.owner = owner
		self.node = node
		self.first_seen = first_seen
		self.floor = floor
		self.hw_max = hw
		self.released = None
		self.ids = 0

	def upper(self):
		"""What this lease's owner may have used, at most."""
		return self.released if self.released is not None else self.hw_max

	def as_dict(self):
		return {'worker': self.worker, 'node': self.node, 'owner': self.owner,
				'first_seen_ms': self.first_seen, 'floor_ms': self.floor,
				'high_water_ms': self.hw_max, 'released_last_used_ms': self.released,
				'ids': self.ids}


def load_meta(d):
	meta = dict(DEFAULTS)
	p = os.path.join(d, 'meta.json')
	if os.path.exists(p):
		with open(p) as f:
			meta.update(json.load(f))
	return meta


def read_leases(path):
	"""Rebuild the leases from the sampled coordinator state.

	Lines of one sample are applied fence first, then events, then rows, as
	the coordinator's grant applies the fence before it takes a row."""
	leases = {}					# (worker, owner) -> Lease
	by_worker = collections.defaultdict(list)
	row_hw = {}					# worker -> hw of the row at the last sample
	row_owner = {}				# worker -> owner of the row at the last sample
	contested = collections.Counter()	# worker -> stretches of '(contested)'
	fence_floor = 0
	fences = 0
	events = collections.Counter()
	if not os.path.exists(path):
		return leases, by_worker, events, fences
	groups = collections.OrderedDict()
	with open(path) as f:
		for line in f:
			p = line.split(' ', 2)
			if len(p) < 3:
				continue
			groups.setdefault(int(p[0]), []).append((p[1], p[2].rstrip('\n')))
	order = {'fence': 0, 'event': 1, 'lease': 2}
	for t, items in groups.items():
		items.sort(key=lambda x: order.get(x[0], 3))
		for kind, rest in items:
			f = rest.split(' ')
			if kind == 'fence':
				if int(f[0]) > fence_floor:
					fence_floor = int(f[0])
			elif kind == 'event':
				# event_id at worker node event detail...
				ev = f[4]
				events[ev] += 1
				if ev == 'fence':
					fences += 1
				if ev == 'release' and f[2] != '-' and len(f) >= 8 and f[5] == 'last' and f[6] == 'used':
					w = int(f[2])
					# the lease this release ends: the worker's current one of that node
					for L in reversed(by_worker[w]):
						if L.node == f[3]:
							L.released = int(f[7])
							break
			elif kind == 'lease':
				w, owner, node, hw = int(f[0]), f[1], f[2], int(f[3])
				if owner == '-':
					# released (or never granted): hw is the last used time
					cur = [L for L in by_worker[w] if L.node == node]
					if cur and cur[-1].released is None and row_hw.get(w) is not None:
						cur[-1].released = hw
				else:
					key = (w, owner)
					if node == CONTESTED:
						# The coordinator's mark on a worker id it took from two
						# owners (1.1): one fixed owner for every such mark, so
						# each stretch of it is a lease of its own, whose
						# high-water mark bounds what the two may have used.
						if row_owner.get(w) != owner:
							contested[w] += 1
						key = (w, owner, contested[w])
					if key not in leases:
						floor = max(row_hw.get(w, 0), fence_floor)
						# the floor the coordinator says it gave (1.1 records it):
						# the node keeps above it, so it can only raise ours
						if len(f) >= 7 and int(f[6]) > floor:
							floor = int(f[6])
						L = Lease(w, owner, node, t, floor, hw)
						L.idx = len(by_worker[w])
						leases[key] = L
						by_worker[w].append(L)
					else:
						L = leases[key]
						if hw > L.hw_max:
							L.hw_max = hw
				row_hw[w] = hw
				row_owner[w] = owner
	return leases, by_worker, events, fences


def read_calls(path):
	calls = []
	if not os.path.exists(path):
		return calls
	with open(path) as f:
		for line in f:
			p = line.split()
			if len(p) < 9:
				continue
			calls.append((int(p[0]), int(p[1]), p[2], p[3], p[4], int(p[5]), p[6],
						  int(p[7]) if p[6] == 'ok' else None, int(p[8]) if p[6] == 'ok' else None))
	return calls


def read_faults(path):
	faults = []
	if not os.path.exists(path):
		return faults
	with open(path) as f:
		for line in f:
			p = line.split()
			if len(p) < 3:
				continue
			kv = dict(x.split('=', 1) for x in p[3:] if '=' in x)
			faults.append({'at_ms': int(p[0]), 'kind': p[1], 'target': p[2],
						   'heal_ms': int(kv.get('heal', p[0])), 'detail': kv})
	return faults


def read_history(path):
	"""The clients of a history, as (node, client, loader of its ids).

	A file is history.txt: "<node> <client> <id>" a line, each client's ids
	in the order it got them.  A directory is the compact form of a long
	run: one file "<node>.<client>.bin" per client, its ids in the order it
	got them as 8-byte big-endian integers (the int8send() form)."""
	if os.path.isdir(path):
		out = []
		for f in sorted(os.listdir(path)):
			if not f.endswith('.bin'):
				continue
			node, client = f[:-4].rsplit('.', 1)
			out.append((node, client,
						lambda p=os.path.join(path, f): np.fromfile(p, dtype='>i8').astype(np.int64)))
		return out
	per = {}
	with open(path) as f:
		for line in f:
			p = line.split()
			if len(p) != 3:
				continue
			per.setdefault((p[0], p[1]), []).append(int(p[2]))
	return [(n, c, lambda x=x: np.array(x, dtype=np.int64)) for (n, c), x in per.items()]


def find_duplicates(runs):
	"""Merge sorted runs (files of native int64) range by range: the values
	found more than once (the first FIRST), how many such values, and how
	many acknowledgements beyond the first they had."""
	maps = [np.memmap(p, dtype=np.int64, mode='r') for ci, p in runs if os.path.getsize(p) > 0]
	total = sum(len(m) for m in maps)
	if total == 0:
		return [], 0, 0
	# range bounds from a sample of every run
	step = max(total // (64 * max(total // RANGE, 1)), 1)
	sample = np.sort(np.concatenate([m[::step] for m in maps]))
	k = max(total // RANGE, 1)
	bounds = [int(sample[len(sample) * i // k]) for i in range(1, k)]
	bounds = sorted(set(bounds)) + [int(max(m[-1] for m in maps)) + 1]
	lo = int(min(m[0] for m in maps))
	values = []
	count = 0
	extra = 0
	for hi in bounds:
		part = np.concatenate([m[np.searchsorted(m, lo, 'left'):np.searchsorted(m, hi, 'left')]
							   for m in maps])
		part.sort()
		eq = part[1:] == part[:-1]
		n = int(eq.sum())
		if n:
			extra += n
			u = np.unique(part[1:][eq])
			count += len(u)
			values.extend(int(x) for x in u[:max(FIRST - len(values), 0)])
		lo = hi
	return values, count, extra


def main():
	ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
	ap.add_argument('history')
	ap.add_argument('--out', default=None)
	ap.add_argument('--no-plot', action='store_true')
	args = ap.parse_args()
	if not os.path.exists(args.history):
		print('check.py: no such history: %s' % args.history, file=sys.stderr)
		return 2
	d = os.path.dirname(os.path.abspath(args.history))
	out = os.path.abspath(args.out or d)
	os.makedirs(out, exist_ok=True)
	meta = load_meta(d)
	seq_bits = meta['sequence_bits']
	wshift = seq_bits
	wmask = (1 << meta['worker_bits']) - 1
	tshift = meta['worker_bits'] + seq_bits
	epoch = meta['epoch_ms']

	def decode(v):
		return ((v >> tshift) + epoch, (v >> wshift) & wmask)

	leases, by_worker, events, fences = read_leases(os.path.join(d, 'leases.log'))
	calls = read_calls(os.path.join(d, 'calls.log'))
	faults = read_faults(os.path.join(d, 'faults.log'))

	# ---- the history, one client at a time ----
	#
	# Each client's ids are checked for windows and order on their own,
	# then sorted and written out as a run; the runs are merged range by
	# range to find duplicates, so that memory stays bounded by one
	# client's ids plus one range, whichever form the history has.
	cand = collections.defaultdict(list)		# node -> [(lease index, Lease)]
	lease_list = list(leases.values())
	for gi, L in enumerate(lease_list):
		cand[L.node].append((gi, L))
	lease_ids = np.zeros(len(lease_list), dtype=np.int64)
	clients = []
	runs = []
	oow = []
	oow_count = 0
	order = []
	order_count = 0
	per_node_ids = collections.Counter()
	scratch = tempfile.mkdtemp(prefix='snowid-check.')
	acknowledged = 0
	try:
		for node, client, load in read_history(args.history):
			v = load()
			ci = len(clients)
			clients.append((node, client))
			acknowledged += len(v)
			per_node_ids[node] += len(v)
			if len(v) == 0:
				continue
			# 2. windows: the first lease of its node on its worker id whose
			# window holds the id's timestamp
			ts = (v >> tshift) + epoch
			w = (v >> wshift) & wmask
			lidx = np.full(len(v), -1, dtype=np.int32)
			for a in range(0, len(v), CHUNK):
				b = min(a + CHUNK, len(v))
				tmin, tmax = int(ts[a:b].min()), int(ts[a:b].max())
				for gi, L in cand.get(node, ()):
					if L.hw_max < tmin or L.floor >= tmax:
						continue
					tt = ts[a:b]
					m = (lidx[a:b] == -1) & (w[a:b] == L.worker) & (tt > L.floor) & (tt <= L.hw_max)
					lidx[a:b][m] = gi
			del ts, w
			bad = np.flatnonzero(lidx == -1)
			oow_count += len(bad)
			for k in bad[:max(FIRST - len(oow), 0)]:
				x = int(v[k])
				t, wk = decode(x)
				near = [L.as_dict() for gi, L in cand.get(node, ()) if L.worker == wk]
				oow.append({'id': x, 'node': node, 'client': client, 'worker': wk, 'ts_ms': t,
							'leases_of_node_on_worker': near[-3:]})
			good = lidx >= 0
			lease_ids += np.bincount(lidx[good], minlength=len(lease_list))
			# 3a. order: each client's ids within one lease, in the order it
			# got them
			pos = np.flatnonzero(good)
			pos = pos[np.argsort(lidx[pos], kind='stable')]
			sv = v[pos]
			sl = lidx[pos]
			back = np.flatnonzero((sv[1:] <= sv[:-1]) & (sl[1:] == sl[:-1]))
			order_count += len(back)
			for k in back[:max(FIRST - len(order), 0)]:
				order.append({'node': node, 'client': client, 'id': int(sv[k + 1]), 'after': int(sv[k]),
							  'how': 'same client'})
			del pos, sv, sl, lidx, good
			# the sorted run for the duplicate check
			path = os.path.join(scratch, 'run.%d' % ci)
			np.sort(v).tofile(path)
			runs.append((ci, path))
			del v
		# 1. unique: merge the sorted runs range by range
		dup_values, dup_count, extra = find_duplicates(runs)
		dup_where = {x: [] for x in dup_values}
		if dup_values:
			want = np.array(dup_values, dtype=np.int64)
			for ci, path in runs:
				r = np.fromfile(path, dtype=np.int64)
				for x in r[np.isin(r, want)]:
					dup_where[int(x)].append('%s/%s' % clients[ci])
	finally:
		shutil.rmtree(scratch, ignore_errors=True)
	for gi, L in enumerate(lease_list):
		L.ids = int(lease_ids[gi])
	nodes = list(dict.fromkeys(n for n, c in clients))

	lease_hit = {}

	def find_lease(node, w, ts):
		L = lease_hit.get((node, w))
		if L is not None and L.floor < ts <= L.hw_max:
			return L
		for gi, L in cand.get(node, ()):
			if L.worker == w and L.floor < ts <= L.hw_max:
				lease_hit[(node, w)] = L
				return L
		return None

	# 3b. order across clients of a node: a call that ended before another
	# started gave lower ids (both in one lease)
	ok_calls = [c for c in calls if c[6] == 'ok']
	by_node_calls = collections.defaultdict(list)
	for c in ok_calls:
		by_node_calls[c[2]].append(c)
	for node, cs in by_node_calls.items():
		tagged = []
		for c in cs:
			ts, w = decode(c[7])
			L = find_lease(node, w, ts)
			if L is not None:
				tagged.append((c[0], c[1], c[7], c[8], id(L), c[3]))
		by_end = sorted(tagged, key=lambda x: x[1])
		by_start = sorted(tagged, key=lambda x: x[0])
		top = {}
		p = 0
		for c in by_start:
			while p < len(by_end) and by_end[p][1] < c[0]:
				e = by_end[p]
				if e[3] > top.get(e[4], -1):
					top[e[4]] = e[3]
				p += 1
			t = top.get(c[4])
			if t is not None and c[2] <= t:
				order_count += 1
				if len(order) < FIRST:
					order.append({'node': node, 'client': c[5], 'id': c[2], 'after': t,
								  'how': 'a call that ended before this one started returned a higher id',
								  'start_ms': c[0]})

	# 4. the coordinator: each floor above what earlier leases may have used
	overlaps = []
	overlap_count = 0
	for w, ls in by_worker.items():
		top = None
		for L in ls:
			# a contested mark is no grant (and a restore may bring an old one
			# back): it only bounds what its two owners may have used
			if top is not None and L.floor < top[0] and L.node != CONTESTED:
				overlap_count += 1
				if len(overlaps) < FIRST:
					overlaps.append({'worker': w, 'lease': L.as_dict(), 'earlier_lease_may_use_up_to_ms': top[0],
									 'earlier_node': top[1]})
			if top is None or L.upper() > top[0]:
				top = (L.upper(), L.node)

	# Violations that follow an in-place restore of the coordinator from a
	# dump of its own timeline (issue 10, item 3: no fence applies there):
	# tagged, so that make test can hold them as a known bug.
	restores = sorted(fl['at_ms'] for fl in faults if fl['kind'] == 'restore'
					  and fl['detail'].get('dump_timeline') is not None
					  and fl['detail'].get('dump_timeline') == fl['detail'].get('timeline'))

	def after_restore(t):
		k = bisect.bisect_right(restores, t) - 1
		return restores[k] if k >= 0 and t - restores[k] <= meta['lease_ms'] + meta['safety_ms'] + 30000 else None

	for o in overlaps:
		o['after_inplace_restore_ms'] = after_restore(o['lease']['first_seen_ms'])
	restore_of_dup = {}
	for dv in dup_values:
		ts, w = decode(dv)
		hits = [L for L in by_worker.get(w, ()) if L.floor < ts <= L.hw_max]
		restore_of_dup[dv] = next((after_restore(L.first_seen) for L in hits if after_restore(L.first_seen)),
								  None)

	# ---- availability ----
	start_ms = meta.get('load_start_ms') or (min(c[0] for c in calls) if calls else 0)
	end_ms = meta.get('load_end_ms') or (max(c[1] for c in calls) if calls else 0)
	attempted = sum(c[5] for c in calls if c[4] != 'connect')
	errors = collections.Counter(c[6] for c in calls if c[6] != 'ok')
	avail = {}
	outages = {}
	for node in sorted(set(nodes) | set(by_node_calls)):
		ends = sorted(c[1] for c in by_node_calls.get(node, []))
		total = max(-(-(end_ms - start_ms) // 1000), 1)
		secs = set((t - start_ms) // 1000 for t in ends if start_ms <= t < end_ms)
		gaps = []
		prev = start_ms
		for t in ends + [end_ms]:
			if t - prev > 1000:
				gaps.append((prev, t))
			prev = max(prev, t)
		outages[node] = gaps
		avail[node] = {'share': round(len(secs) / total, 4), 'seconds': total,
					   'outages': len(gaps),
					   'longest_outage_ms': max((b - a for a, b in gaps), default=0),
					   'ids': per_node_ids.get(node, 0),
					   'generating_at_end': bool(ends) and ends[-1] >= end_ms - 5000}

	ttl = meta['patroni']['ttl'] + meta['patroni'].get('loop_wait', 0)
	bound = meta['lease_ms'] + meta['safety_ms'] + ttl * 1000
	recovery = []
	for fi, fl in enumerate(faults):
		s, h = fl['at_ms'], fl['heal_ms']
		nxt = faults[fi + 1]['at_ms'] if fi + 1 < len(faults) else end_ms
		overlapped = False
		already = False
		worst = 0
		hit = []
		longest = 0
		for node, gaps in outages.items():
			for a, b in gaps:
				# an outage that overlaps the fault, or starts soon after its heal
				if a <= h + 2000 and b >= s:
					hit.append(node)
					worst = max(worst, b - h)
					longest = max(longest, b - max(a, s))
					# still out when the next fault began: that one may have kept it out
					overlapped = overlapped or b > nxt
					# already out for over a second when this fault began: an
					# earlier fault's outage, which this one may have prolonged
					already = already or a < s - 1000
		recovery.append({'at_ms': s, 'kind': fl['kind'], 'target': fl['target'],
						 'held_ms': h - s, 'nodes_out': sorted(set(hit)),
						 'recovered_after_heal_ms': max(worst, 0),
						 'longest_outage_ms': longest,
						 'next_fault_began_during_outage': overlapped,
						 'began_during_earlier_outage': already,
						 'within_bound': max(worst, 0) <= bound or overlapped or already})
	kinds = collections.Counter(fl['kind'] for fl in faults)
	by_kind = {}
	for r in recovery:
		k = by_kind.setdefault(r['kind'], {'count': 0, 'with_outage': 0, 'max_outage_ms': 0,
										   'max_recovered_after_heal_ms': 0})
		k['count'] += 1
		k['with_outage'] += 1 if r['nodes_out'] else 0
		k['max_outage_ms'] = max(k['max_outage_ms'], r['longest_outage_ms'])
		k['max_recovered_after_heal_ms'] = max(k['max_recovered_after_heal_ms'], r['recovered_after_heal_ms'])

	valid = (dup_count == 0 and oow_count == 0 and order_count == 0 and overlap_count == 0
			 and acknowledged > 0)
	report = {
		'valid': valid,
		'attempted': attempted,
		'acknowledged': acknowledged,
		'duplicated_count': dup_count,
		'duplicated_extra_acks': extra,
		'duplicated': [{'id': v, 'acknowledged_by': dup_where[v],
						'after_inplace_restore_ms': restore_of_dup.get(v)} for v in dup_values],
		'out_of_window_count': oow_count,
		'out_of_window': oow,
		'order_violations_count': order_count,
		'order_violations': order,
		'lease_overlaps_count': overlap_count,
		'lease_overlaps': overlaps,
		'leases': len(leases),
		'coordinator_events': dict(events),
		'coordinator_fences': fences,
		'errors_by_sqlstate': dict(errors),
		'faults': dict(kinds),
		'fault_total': sum(kinds.values()),
		'availability': avail,
		'recovery_bound_ms': bound,
		'recovery_bound': 'lease %d ms + safety period %d ms + Patroni ttl + loop_wait %d ms'
						  % (meta['lease_ms'], meta['safety_ms'], ttl * 1000),
		'recovery_exceeded': sum(1 for r in recovery if not r['within_bound']),
		'recovery_overlapped': sum(1 for r in recovery if r['next_fault_began_during_outage']),
		'recovery_began_during_earlier_outage': sum(1 for r in recovery if r['began_during_earlier_outage']
													and not r['next_fault_began_during_outage']),
		'recovery_max_clean_after_heal_ms': max((r['recovered_after_heal_ms'] for r in recovery
												 if not r['next_fault_began_during_outage']
												 and not r['began_during_earlier_outage']), default=0),
		'recovery_max_after_heal_ms': max((r['recovered_after_heal_ms'] for r in recovery), default=0),
		'recovery_by_kind': by_kind,
		'recovery': recovery,
		'run': {k: meta.get(k) for k in ('seed', 'duration_s', 'commit', 'load_start_ms', 'load_end_ms',
										 'lease_ms', 'safety_ms', 'margin_ms', 'patroni', 'etcd_members',
										 'worker_bits', 'nodes') if k in meta},
	}
	with open(os.path.join(out, 'report.json'), 'w') as f:
		json.dump(report, f, indent=1)
	write_summary(out, report)
	if not args.no_plot:
		plot(out, calls, faults, start_ms, end_ms, sorted(set(nodes) | set(by_node_calls)))
	print('chaos check: %s: %d acknowledged of %d attempted, %d duplicated, %d out of window, '
		  '%d order violations, %d lease overlaps; %d faults; report in %s'
		  % ('valid' if valid else 'INVALID', acknowledged, attempted, dup_count, oow_count,
			 order_count, overlap_count, report['fault_total'], os.path.join(out, 'report.json')))
	print('chaos check: recovery: after every fault, every node generated again within %.1f s of the heal '
		  'at worst (bound %.0f s: %s); %d faults over the bound; %d outages the next fault began '
		  'during and %d faults that struck a node already out after an earlier one, counted apart '
		  '(%.1f s at worst, counting them)'
		  % (report['recovery_max_clean_after_heal_ms'] / 1000, bound / 1000, report['recovery_bound'],
			 report['recovery_exceeded'], report['recovery_overlapped'],
			 report['recovery_began_during_earlier_outage'], report['recovery_max_after_heal_ms'] / 1000))
	for k, v in sorted(by_kind.items()):
		print('chaos check:   %-15s %4d faults, %4d with an outage, slowest recovery after the heal %.1f s'
			  % (k, v['count'], v['with_outage'], v['max_recovered_after_heal_ms'] / 1000))
	return 0 if valid else 1


def write_summary(out, r):
	lines = ['# snowid chaos run', '']
	run = r['run']
	if run:
		lines.append('seed %s, %s s of load, commit `%s`; lease %s ms, safety %s ms; Patroni ttl %s s, '
					 '%s etcd members' % (run.get('seed'), run.get('duration_s'), (run.get('commit') or '')[:12],
										  run.get('lease_ms'), run.get('safety_ms'),
										  (run.get('patroni') or {}).get('ttl'), run.get('etcd_members')))
		lines.append('')
	lines += ['**%s**: %d ids acknowledged of %d attempted; %d duplicated; %d out of their lease window; '
			  '%d order violations; %d lease overlaps at the coordinator.'
			  % ('valid' if r['valid'] else 'INVALID', r['acknowledged'], r['attempted'], r['duplicated_count'],
				 r['out_of_window_count'], r['order_violations_count'], r['lease_overlaps_count']), '',
			  '| fault | count | with an outage | longest outage | slowest recovery after the heal |',
			  '|---|---|---|---|---|']
	for k, v in sorted(r['recovery_by_kind'].items()):
		lines.append('| %s | %d | %d | %.1f s | %.1f s |' % (k, v['count'], v['with_outage'],
														  v['max_outage_ms'] / 1000,
														  v['max_recovered_after_heal_ms'] / 1000))
	lines.append('| **all** | %d | | | |' % r['fault_total'])
	lines += ['', '| node | availability | outages | longest outage | ids |', '|---|---|---|---|---|']
	for node, a in sorted(r['availability'].items()):
		lines.append('| %s | %.1f %% | %d | %.1f s | %d |' % (node, 100 * a['share'], a['outages'],
															 a['longest_outage_ms'] / 1000, a['ids']))
	lines += ['', 'After a fault was healed, every node generated again within %.1f s at worst, where its '
			  'outage ended before the next fault began (and had not begun before this one); bound: %s = %.0f s, '
			  'exceeded by %d faults. %d faults had an outage that the next fault began during, %d struck a '
			  'node already out after an earlier fault (%.1f s at worst, counting them).'
			  % (r['recovery_max_clean_after_heal_ms'] / 1000, r['recovery_bound'], r['recovery_bound_ms'] / 1000,
				 r['recovery_exceeded'], r['recovery_overlapped'], r['recovery_began_during_earlier_outage'],
				 r['recovery_max_after_heal_ms'] / 1000), '']
	if r['duplicated']:
		lines.append('First duplicates: ' + ', '.join('%d (%s)' % (d['id'], ' '.join(d['acknowledged_by']))
													  for d in r['duplicated'][:5]))
		lines.append('')
	lines.append('![ids per second](ids_per_s.png)')
	with open(os.path.join(out, 'summary.md'), 'w') as f:
		f.write('\n'.join(lines) + '\n')


def plot(out, calls, faults, start_ms, end_ms, nodes):
	if not calls or not shutil.which('gnuplot'):
		return
	secs = max((end_ms - start_ms) // 1000 + 1, 1)
	rate = {n: [0] * secs for n in nodes}
	for c in calls:
		if c[6] == 'ok':
			s = (c[1] - start_ms) // 1000
			if 0 <= s < secs and c[2] in rate:
				rate[c[2]][s] += c[5]
	with open(os.path.join(out, 'ids_per_s.dat'), 'w') as f:
		f.write('# second ' + ' '.join(nodes) + '\n')
		for s in range(secs):
			f.write('%d %s\n' % (s, ' '.join(str(rate[n][s]) for n in nodes)))
	gp = ['set terminal pngcairo size 1400,600 font "DejaVu Sans,10" noenhanced',
		  "set output 'ids_per_s.png'", 'set xlabel "seconds since the load started"',
		  'set ylabel "acknowledged ids per second"', 'set key outside right top', 'set grid ytics',
		  'set yrange [0:*]', 'set xrange [0:%d]' % secs]
	for i, fl in enumerate(faults):
		a = (fl['at_ms'] - start_ms) / 1000
		b = (fl['heal_ms'] - start_ms) / 1000
		gp.append('set object %d rect from %.1f, graph 0 to %.1f, graph 1 fc rgb "#ffdddd" fs solid 0.5 '
				  'noborder behind' % (i + 1, a, max(b, a + 0.3)))
		gp.append('set label %d "%s %s" at %.1f, graph %.2f rotate by 90 font ",8" front'
				  % (i + 1, fl['kind'], fl['target'], a, 0.02 + 0.0 * i))
	gp.append('plot ' + ', '.join("'ids_per_s.dat' using 1:%d with lines lw 1 title '%s'" % (k + 2, n)
								  for k, n in enumerate(nodes)))
	with open(os.path.join(out, 'ids_per_s.gp'), 'w') as f:
		f.write('\n'.join(gp) + '\n')
	subprocess.run(['gnuplot', 'ids_per_s.gp'], cwd=out)


if __name__ == '__main__':
	sys.exit(main())
