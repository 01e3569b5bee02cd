#!/usr/bin/env bash
# Check the include graph of src/*.[ch] against the declared layers.
#
#   scripts/check_includes.sh [SRC_DIR]      (default: the tree's src/)
#
# The graph has an arrow A -> B for every line #include "B" in file A
# where B is a file of SRC_DIR (PostgreSQL's and the system's headers are
# not part of it).  It fails, naming the file and line, when
#   * an arrow goes from a lower layer to a higher one (below),
#   * the graph has a cycle (found by tsort),
#   * a file of SRC_DIR belongs to no layer, or a layer names a file that
#     does not exist, so the list below stays the whole truth,
#   * a file of SRC_DIR has the name of a header some file includes with
#     <...> (src/time.h would shadow <time.h>: -I src comes first).
# Arrows within one layer are allowed (keyring.h uses base32.h); cycles
# are not.  The last line says what it checked.  test/t/003_includes.pl
# runs it on the tree and on copies with violations in them.
#
# docs/design.md ("The parts") says what each layer is for.
set -euo pipefail

# The layers, lowest first: a file may include files of its own layer and
# of the layers above it in this list, never of a layer further down.
LAYERS='
plain      layout.h layout.c base32.h base32.c feistel.h feistel.c feistel_hmac.c keyring.h keyring.c
base       compat.h clock.h clock.c settings.h settings.c
common     snowid.h compat.c
shared     shmem.h shmem.c node_state.h node_state.c
transport  lease_transport.h transport_spi.c transport_libpq.c
protocol   lease_client.h lease_client.c
sql        snowid_type.c decode.c formats.c public_id.c uuidv7.c generator.c status.c
keeper     keeper.h keeper.c
entry      snowid.c
'

src=${1:-$(cd "$(dirname "$0")/.." && pwd)/src}
[ -d "$src" ] || { echo "check_includes: no directory $src" >&2; exit 2; }

# file -> layer rank and name
declare -A rank layer_of
n=0
while read -r name files; do
	[ -n "$name" ] || continue
	n=$((n + 1))
	for f in $files; do
		if [ -n "${rank[$f]:-}" ]; then
			echo "check_includes: $f is listed in two layers (${layer_of[$f]}, $name)" >&2
			exit 2
		fi
		rank[$f]=$n
		layer_of[$f]=$name
	done
done <<<"$LAYERS"

violations=0
violation() {
	echo "$*"
	violations=$((violations + 1))
}

shopt -s nullglob
files=()
for path in "$src"/*.c "$src"/*.h; do
	files+=("$(basename "$path")")
done
declare -A present
for f in "${files[@]}"; do
	present[$f]=1
	[ -n "${rank[$f]:-}" ] ||
		violation "$src/$f: belongs to no layer: add it to LAYERS in scripts/check_includes.sh"
done
for f in "${!rank[@]}"; do
	[ -n "${present[$f]:-}" ] ||
		violation "scripts/check_includes.sh: layer ${layer_of[$f]} names $f, which is not in $src"
done

# One line per #include: file, line number, quote or bracket, name.
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
arrows=0
for f in "${files[@]}"; do
	while IFS=$'\t' read -r line kind target; do
		if [ "$kind" = '<' ]; then
			[ -z "${present[$target]:-}" ] ||
				violation "$src/$f:$line: includes <$target>, which $src/$target shadows (-I src comes first): rename $target"
			continue
		fi
		[ -n "${present[$target]:-}" ] || continue	# PostgreSQL's or the system's
		arrows=$((arrows + 1))
		echo "$f $target" >>"$edges"
		[ -n "${rank[$f]:-}" ] && [ -n "${rank[$target]:-}" ] || continue
		if [ "${rank[$target]}" -gt "${rank[$f]}" ]; then
			violation "$src/$f:$line: includes \"$target\": layer ${layer_of[$f]} may not include layer ${layer_of[$target]}, which lies above it"
		fi
	done < <(awk '
		match($0, /^[ \t]*#[ \t]*include[ \t]*"[^"]+"/) {
			s = substr($0, RSTART, RLENGTH); sub(/^[^"]*"/, "", s); sub(/"$/, "", s)
			printf "%d\t\"\t%s\n", NR, s; next
		}
		match($0, /^[ \t]*#[ \t]*include[ \t]*<[^>]+>/) {
			s = substr($0, RSTART, RLENGTH); sub(/^[^<]*</, "", s); sub(/>$/, "", s)
			printf "%d\t<\t%s\n", NR, s
		}' "$src/$f")
done

# A file that includes itself is a cycle tsort would not report.
while read -r a b; do
	[ "$a" != "$b" ] || violation "$src/$a: includes itself"
done <"$edges"
if ! cycle=$(tsort <"$edges" 2>&1 >/dev/null) || [ -n "$cycle" ]; then
	violation "include cycle: $(echo "$cycle" | sed 's/^tsort: -: //' | tr '\n' ' ')"
fi

if [ "$violations" -gt 0 ]; then
	echo "check_includes: $violations violation(s) in the include graph of $src"
	exit 1
fi
echo "check_includes: ${#files[@]} files, $arrows arrows, $n layers: no cycle, no arrow from a lower layer to a higher one"
