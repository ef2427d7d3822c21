#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the library into a temporary prefix and builds a program against it four ways:
# with pkg-config as C and as C++17 (shared library), and with CMake's find_package against
# myrio::myrio (shared) and myrio::myrio_static. The program is the README's first example:
# one frame from sim0 to sim1 of an in-process model.
set -euo pipefail
build=${1:?build directory}
if grep -q '^MYRIO_SANITIZE:BOOL=ON' "$build/CMakeCache.txt"; then
  echo "sanitizer build: the installed library needs the sanitizer runtime; checked in the plain build"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
libdir=$(find "$tmp/prefix" -name libmyrio.so -printf '%h\n' | head -n 1)
cat >"$tmp/first.c" <<'C'
#include <myrio/myrio.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
	struct myrio_sim *sim;
	struct myrio_sim_conf sc;
	myrio_sim_conf_init(&sc);
	if (myrio_sim_create(&sim, &sc))
		return 1;
	struct myrio_port_conf pc;
	myrio_port_conf_init(&pc);
	pc.sim = sim;
	struct myrio_port *a, *b;
	if (myrio_port_open(&a, "sim:sim0", &pc) || myrio_port_open(&b, "sim:sim1", &pc))
		return 2;
	struct myrio_pool *pool;
	if (myrio_port_pool_create(a, 64, 2048, &pool))
		return 3;
	struct myrio_pkt *p = myrio_pkt_alloc(pool);
	memset(myrio_pkt_data(p), 0xff, 12); /* broadcast destination, any source */
	memset(myrio_pkt_data(p) + 12, 0x88, 48);
	p->len = 60;
	if (myrio_tx_burst(a, &p, 1) != 1)
		return 4;
	struct myrio_pkt *rx[32];
	uint16_t n = 0;
	for (int i = 0; i < 2000000 && n == 0; i++)
		n = myrio_rx_burst(b, rx, 32);
	int ok = n == 1 && rx[0]->len == 60 && myrio_pkt_data(rx[0])[59] == 0x88;
	printf("received %u frame(s), %s\n", n, ok ? "intact" : "WRONG");
	char built[32];
	snprintf(built, sizeof(built), "%d.%d.%d", MYRIO_VERSION_MAJOR, MYRIO_VERSION_MINOR,
		 MYRIO_VERSION_PATCH);
	if (strcmp(myrio_version(), built) != 0 || MYRIO_VERSION < MYRIO_VERSION_NUM(0, 1, 0)) {
		printf("version %s, built against %s\n", myrio_version(), built);
		ok = 0;
	}
	myrio_pkt_free_bulk(rx, n);
	myrio_port_close(b);
	myrio_port_close(a);
	myrio_pool_destroy(pool);
	myrio_sim_destroy(sim);
	return ok ? 0 : 5;
}
C
export PKG_CONFIG_PATH=$libdir/pkgconfig
cc -o "$tmp/first" "$tmp/first.c" $(pkg-config --cflags --libs myrio) -Wl,-rpath,"$libdir"
"$tmp/first"
cp "$tmp/first.c" "$tmp/first.cpp"
g++ -std=c++17 -Wall -Wextra -Werror -o "$tmp/first_cxx" "$tmp/first.cpp" \
	$(pkg-config --cflags --libs myrio) -Wl,-rpath,"$libdir"
"$tmp/first_cxx"

mkdir -p "$tmp/cm"
cat >"$tmp/cm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(first C)
find_package(myrio REQUIRED)
add_executable(first ../first.c)
target_link_libraries(first PRIVATE myrio::myrio)
add_executable(first_static ../first.c)
target_link_libraries(first_static PRIVATE myrio::myrio_static)
CM
cmake -S "$tmp/cm" -B "$tmp/cm/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/cm/b" >/dev/null
LD_LIBRARY_PATH=$libdir "$tmp/cm/b/first"
# The static one must not need the installed shared library at all.
if ldd "$tmp/cm/b/first_static" | grep -q libmyrio; then
	echo "first_static links libmyrio.so"
	exit 1
fi
"$tmp/cm/b/first_static"

# The examples: installed as myrio-* programs (underscores as dashes), their sources in
# share/doc/myrio/examples, which build against the installed package with the CMake
# file beside them; the installed raw_frames and the one built from the sources both run.
src=$(cd "$(dirname "$0")/../.." && pwd)
docdir=$tmp/prefix/share/doc/myrio/examples
for ex in "$src"/examples/*.c; do
	name=$(basename "$ex" .c)
	inst=myrio-${name//_/-}
	[[ -x $tmp/prefix/bin/$inst ]] || { echo "example $name not installed as bin/$inst"; exit 1; }
	cmp -s "$ex" "$docdir/$name.c" || { echo "$name.c not in share/doc/myrio/examples"; exit 1; }
done
"$tmp/prefix/bin/myrio-raw-frames" -n 1000 -s 256
cmake -S "$docdir" -B "$tmp/ex" -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/ex" >/dev/null
LD_LIBRARY_PATH=$libdir "$tmp/ex/raw_frames" -n 1000 -s 256
