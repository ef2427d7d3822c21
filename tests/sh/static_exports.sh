#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The static archive exports only the public API (myrio_*), as the shared library does: an
# application that defines its own tcp_input or log_err links against libmyrio.a and
# keeps both its own and the library's.
set -euo pipefail
build=${1:?build directory}
lib=$build/libmyrio.a
[ -f "$lib" ] || { echo "FAIL: $lib not built"; exit 1; }
defined=$(nm -g --defined-only "$lib" | awk 'NF == 3 { print $3 }')
others=$(grep -v '^myrio_' <<<"$defined" || true)
n=$(grep -c '^myrio_' <<<"$defined" || true)
echo "$n myrio_* symbols exported"
if [ -n "$others" ]; then
	echo "FAIL: libmyrio.a exports internal symbols:"
	sed 's/^/  /' <<<"$others" | head -20
	exit 1
fi
[ "$n" -ge 20 ] || { echo "FAIL: the public API is missing from $lib"; exit 1; }
if grep -q '^MYRIO_SANITIZE:BOOL=ON' "$build/CMakeCache.txt"; then
	echo "sanitizer build: the link check needs the sanitizer runtime; done in the plain build"
	exit 0
fi

# A program with names the library uses inside: it must link, and run its own.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/clash.c" <<'C'
#include <myrio/myrio.h>
#include <stdio.h>
int tcp_input(void) { return 7; }
int log_err(void) { return 35; }
int main(void)
{
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	struct myrio_sim *sim;
	if (myrio_sim_create(&sim, &sc))
		return 1;
	myrio_sim_destroy(sim);
	return tcp_input() + log_err() == 42 ? 0 : 2;
}
C
src=$(cd "$(dirname "$0")/../.." && pwd)
deps=$(pkg-config --libs pciaccess libpcap)
cc -std=c11 -I"$src/include" "$tmp/clash.c" "$lib" $deps -lhugetlbfs -lpthread -o "$tmp/clash"
"$tmp/clash"
echo "ok: a program defining tcp_input and log_err links the archive and runs"
