# Helpers shared by snowid's TAP suites.  Tests say "use SnowidTest;" and
# get every helper; they live by concern in
#
#   SnowidTest::Node     nodes and clusters, and waiting (poll_query_until,
#                        bounded by timeout_default)
#   SnowidTest::Faults   signals, TCP proxies, clock steps (libfaketime)
#   SnowidTest::Ids      generating and storing ids, and checking them
#
# A new helper goes into the module of its concern (or a new
# SnowidTest::<Area>), and its name into that module's @EXPORT; this file
# only re-exports.
package SnowidTest;

use strict;
use warnings;

use SnowidTest::Node;
use SnowidTest::Faults;
use SnowidTest::Ids;

use Exporter 'import';
our @EXPORT = (@SnowidTest::Node::EXPORT, @SnowidTest::Faults::EXPORT,
	@SnowidTest::Ids::EXPORT);

1;
