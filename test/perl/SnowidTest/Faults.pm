# Faults for snowid's TAP suites: signals to a server's processes, a TCP
# proxy to cut a node off its coordinator, and clock steps with
# libfaketime.  Every fault is bounded: a proxy lives until the test kills
# it (or the test ends), and waits follow SnowidTest::Node's rules.
#
# SnowidTest re-exports everything here; tests say "use SnowidTest;".
package SnowidTest::Faults;

use strict;
use warnings;

use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

use SnowidTest::Node qw(poll_until wait_seconds);

use Exporter 'import';
our @EXPORT = qw(server_pids signal_server wait_for_pids_gone
  start_tcp_proxy stop_tcp_proxy
  faketime_lib set_clock_offset start_with_faketime
  restart_keeper_for_faketime);

# ---- signals ----

# The postmaster's pid (from postmaster.pid) and the pids of its
# children, postmaster first.  Empty if the server is not running.
sub server_pids
{
	my ($node) = @_;
	open my $fh, '<', $node->data_dir . '/postmaster.pid' or return ();
	chomp(my $pm = <$fh>);
	close $fh;
	return () unless $pm =~ /^\d+$/ && kill(0, $pm);
	my $children = `pgrep -P $pm`;
	return ($pm, grep { /^\d+$/ } split /\s+/, $children);
}

# Send $signal (e.g. 'STOP', 'CONT') to the postmaster and every one of
# its children.  For STOP the postmaster goes first, so it forks nothing
# after its children were listed; for CONT it goes last.  Returns the
# pids signalled.
sub signal_server
{
	my ($node, $signal) = @_;
	my @pids;
	if ($signal eq 'CONT')
	{
		@pids = server_pids($node);
		kill($signal, reverse @pids);
	}
	else
	{
		my ($pm) = server_pids($node);
		return () unless $pm;
		kill($signal, $pm);
		@pids = server_pids($node);
		kill($signal, @pids[ 1 .. $#pids ]);
	}
	return @pids;
}

# Wait until none of @$pids exists; the optional $timeout is in seconds
# (see SnowidTest::Node::wait_seconds).
sub wait_for_pids_gone
{
	my ($pids, $timeout) = @_;
	my $deadline = Time::HiRes::time() + wait_seconds($timeout);
	while (Time::HiRes::time() < $deadline)
	{
		return 1 unless grep { kill(0, $_) } @$pids;
		usleep(50_000);
	}
	note('still running: ' . join(' ', grep { kill(0, $_) } @$pids));
	return 0;
}

# ---- a TCP proxy (socat) between a node and its coordinator ----

# A TCP proxy on loopback: socat listening on 127.0.0.1:$listen_port,
# forwarding each connection (one forked socat each) to
# 127.0.0.1:$target_port.  Returns once it accepts connections (or, with
# a note, once the wait is over).
sub start_tcp_proxy
{
	my ($listen_port, $target_port, $log) = @_;
	$log //= '/dev/null';
	my $pid = fork();
	die "fork: $!" unless defined $pid;
	if ($pid == 0)
	{
		open STDIN, '<', '/dev/null';
		open STDOUT, '>>', $log;
		open STDERR, '>>', $log;
		exec('socat', "TCP-LISTEN:$listen_port,bind=127.0.0.1,reuseaddr,fork",
			"TCP:127.0.0.1:$target_port")
		  or die "exec socat: $!";
	}
	require IO::Socket::INET;
	my $deadline = Time::HiRes::time() + wait_seconds();
	my $up = 0;
	while (!$up && Time::HiRes::time() < $deadline)
	{
		my $s = IO::Socket::INET->new(PeerAddr => '127.0.0.1',
			PeerPort => $listen_port, Proto => 'tcp', Timeout => 1);
		if ($s) { close $s; $up = 1; last; }
		usleep(50_000);
	}
	note("proxy on port $listen_port does not accept connections") unless $up;
	return { pid => $pid, listen_port => $listen_port };
}

# Kill a proxy with SIGKILL: first the listening socat (so it forks no
# more), then every per-connection child, so that established connections
# through it break too.  Returns the pids killed.
sub stop_tcp_proxy
{
	my ($proxy) = @_;
	my $pid = $proxy->{pid};
	my @children = grep { /^\d+$/ } split /\s+/, `pgrep -P $pid`;
	kill 'KILL', $pid;
	kill 'KILL', @children if @children;
	waitpid($pid, 0);
	return ($pid, @children);
}

# ---- clock steps (libfaketime) ----

# The libfaketime preload library (Debian package libfaketime), or undef.
sub faketime_lib
{
	for my $lib ('/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1',
		'/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1',
		'/usr/lib/faketime/libfaketimeMT.so.1')
	{
		return $lib if -e $lib;
	}
	return undef;
}

# Write a libfaketime offset (e.g. '+0', '-0.020', '-3': seconds, with
# a '.' fraction) to $file.  libfaketime rereads the file at every clock
# read and falls back to '+0' while it is missing or empty, so the new
# content is written aside and renamed into place.
sub set_clock_offset
{
	my ($file, $offset) = @_;
	open my $fh, '>', "$file.new" or die "could not write $file.new: $!";
	print $fh "$offset\n";
	close $fh or die "could not write $file.new: $!";
	rename("$file.new", $file) or die "could not rename $file.new: $!";
	return;
}

# Start $node with libfaketime preloaded into the postmaster (and so into
# every server process), its CLOCK_REALTIME offset read from $file at
# every clock read, CLOCK_MONOTONIC left alone.  Only pg_ctl and the
# server see the preload; the test's own psql runs do not.
sub start_with_faketime
{
	my ($node, $file) = @_;
	my $lib = faketime_lib() or die "libfaketime is not installed";
	set_clock_offset($file, '+0') unless -e $file;
	local $ENV{LD_PRELOAD} = $lib;
	local $ENV{FAKETIME_TIMESTAMP_FILE} = $file;
	local $ENV{FAKETIME_NO_CACHE} = '1';
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
	local $ENV{DONT_FAKE_MONOTONIC} = '1';    # older spelling
	return $node->start;
}

# libfaketime does not reach a process that the postmaster forks from a
# signal handler: PostgreSQL 15's postmaster runs its handlers while it
# waits in select(), which libfaketime wraps with faking turned off (a
# per-thread flag), and a child forked then keeps the flag for good.  The
# lease keeper is such a child at start-up (the postmaster starts
# background workers from its SIGCHLD handler once recovery ends).  Cancel
# it (it exits without releasing its lease) so that the postmaster starts a
# new one from its main loop, where libfaketime works; the new keeper
# resumes the lease from shared memory.  Call with the node's clock offset
# at +0.  Returns true once a new keeper has the node active again.
sub restart_keeper_for_faketime
{
	my ($node, $timeout) = @_;
	my $old = $node->safe_psql('postgres', 'SELECT keeper_pid FROM snowid_status()');
	$node->safe_psql('postgres', "SELECT pg_cancel_backend($old)");
	return poll_until($node,
		"SELECT keeper_pid <> $old AND state = 'active' FROM snowid_status()",
		't', $timeout);
}

1;
