#!/usr/bin/python3
"""chaos/tap.py: a chaos run's report.json as TAP lines for scripts/test.sh.

Fails on any violation the checker found, on a run that acknowledged
nothing or injected no fault, on a node that did not generate again
after the last fault was healed, and on a fault after which a node took
longer than the bound (lease + safety period + Patroni's ttl + loop_wait)
to generate again.
"""

import json
import sys

n = 0
failed = 0


def ok(cond, name):
	global n, failed
	n += 1
	failed += 0 if cond else 1
	print('%s %d - chaos run: %s' % ('ok' if cond else 'not ok', n, name), flush=True)


def main():
	try:
		with open(sys.argv[1]) as f:
			r = json.load(f)
	except (OSError, ValueError) as e:
		ok(False, 'no report (%s)' % e)
		return 1
	run = r.get('run', {})
	print('# seed %s, commit %s' % (run.get('seed'), run.get('commit')))
	ok(r['acknowledged'] > 0, '%d ids acknowledged of %d attempted' % (r['acknowledged'], r['attempted']))
	ok(r['duplicated_count'] == 0, '%d duplicated ids %s' % (r['duplicated_count'], r['duplicated'][:3]))
	ok(r['out_of_window_count'] == 0, '%d ids outside their lease\'s window' % r['out_of_window_count'])
	ok(r['order_violations_count'] == 0, '%d order violations within a lease' % r['order_violations_count'])
	ok(r['lease_overlaps_count'] == 0, '%d grants below an earlier owner\'s high-water mark %s'
	   % (r['lease_overlaps_count'], r['lease_overlaps'][:2]))
	ok(r['fault_total'] > 0, '%d faults injected: %s' % (r['fault_total'], r['faults']))
	# After the last heal the load runs for at least a lease plus the safety
	# period: every node must have generated in the last seconds.
	tail = {k: v.get('ids', 0) > 0 and v.get('generating_at_end', True) for k, v in r['availability'].items()}
	ok(all(tail.values()) and len(tail) >= 3, 'every node generates at the end: %s' % tail)
	worst = r['recovery_max_clean_after_heal_ms']
	print('# availability: %s' % ', '.join('%s %.1f %%' % (k, 100 * v['share'])
										   for k, v in sorted(r['availability'].items())))
	print('# slowest recovery after a heal: %.1f s (bound %.0f s: %s); %d over it; '
		  '%d outages prolonged by the next fault' % (worst / 1000, r['recovery_bound_ms'] / 1000,
													  r['recovery_bound'], r['recovery_exceeded'],
													  r['recovery_overlapped']))
	ok(r['recovery_exceeded'] == 0, 'after every fault, every node generated again within %.0f s (%s): '
	   '%d over it' % (r['recovery_bound_ms'] / 1000, r['recovery_bound'], r['recovery_exceeded']))
	ok(r['valid'], 'the checker says valid')
	return 1 if failed else 0


if __name__ == '__main__':
	sys.exit(main())
