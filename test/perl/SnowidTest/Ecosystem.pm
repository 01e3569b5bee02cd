# Helpers for the suites that run the tools around snowid for real
# (test/t/062_monitoring.pl, 064_alert_rules.pl, 066_python_orm.pl):
# Debian's Python, which has the Debian packages the tests install
# (python3-yaml, python3-django, ...), whatever python3 comes first on
# PATH, and a real YAML parser through it.
package SnowidTest::Ecosystem;

use strict;
use warnings;

use IPC::Run;
use JSON::PP;

use Exporter 'import';
our @EXPORT = qw(debian_python yaml_file);

# The python3 that Debian's python3-* packages are installed for.
sub debian_python
{
	return -x '/usr/bin/python3' ? '/usr/bin/python3' : 'python3';
}

# A YAML file read by python3 yaml (PyYAML, safe_load), as a Perl structure.
sub yaml_file
{
	my ($path) = @_;
	my ($json, $err) = ('', '');
	IPC::Run::run([ debian_python(), '-c',
			'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))', $path ],
		'>', \$json, '2>', \$err)
	  or die "python3 yaml could not read $path: $err";
	return decode_json($json);
}

1;
