#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds the VFIO test guest: Debian's kernel (downloaded once into the cache, unpacked, not
# installed), and an initramfs with busybox, the VFIO and e1000e modules, and the test
# programs compiled from the project's own sources, with the shared libraries they need.
#
# usage: build-guest.sh SRC_DIR CACHE_DIR OUT_DIR [INIT]
# Leaves OUT_DIR/vmlinuz and OUT_DIR/initramfs.cpio, whose init is INIT (default
# tests/qemu/init.sh, the VFIO test's). The guest also has tcp_pattern (a checked TCP
# stream), and the host's ip and ethtool, for the kernel drivers' side.
set -euo pipefail
src=$1 cache=$2 out=$3
init=${4:-$src/tests/qemu/init.sh}
mkdir -p "$cache" "$out"

# 1. Kernel and modules, fetched once.
kdir=$(bash "$(dirname "$0")/fetch-kernel.sh" "$cache" | tail -n 1)

# 2. Test programs, linked with the whole library compiled from the project's sources (the
# same src/ as libmyrio), as an archive so that each program takes only what it uses. They
# are linked dynamically against the system's libraries, which the initramfs carries (a
# static libpcap would drag in D-Bus and systemd). Built once per content of what goes into
# them (as build-qemu.sh keys QEMU's device) and kept in the cache, newest build only: the
# QEMU tests of one run share it, and a run with unchanged sources compiles nothing.
progs=(tests/qemu/vfio_e1000e_test examples/raw_frames examples/stream_recv examples/stream_send
	examples/udp_rpc tools/myrio-info tools/myrio-setup tests/qemu/tcp_pattern)
key=$( (gcc --version | head -n 1; cd "$src" && cat src/*/*.[ch] include/myrio/*.h \
	tests/qemu/*.[ch] tests/lib/*.h examples/*.[ch] tools/myrio-info.c tools/myrio-setup/*.[ch] \
	tests/qemu/build-guest.sh) | sha256sum | cut -c1-16)
built=$cache/guest-$key
exec 7>"$cache/.guest-lock"
flock 7
if [[ ! -f $built/.done ]]; then
	rm -rf "$cache"/guest-*
	CFLAGS=(-O2 -g0 -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE
		-I"$src/src" -I"$src/include" -I"$src/tests/qemu")
	objs="$built/lib"
	mkdir -p "$objs"
	export objs
	printf '%s\n' "$src"/src/*/*.c | xargs -P "$(nproc)" -I{} sh -c \
		'gcc "$@" -c -o "$objs/$(basename "$(dirname "{}")")_$(basename "{}" .c).o" "{}"' sh "${CFLAGS[@]}"
	ar rcs "$built/libmyrio_guest.a" "$objs"/*.o
	rm -rf "$objs"
	LIBS=("$built/libmyrio_guest.a" -lpcap -lpciaccess -lz -lhugetlbfs -lpthread)
	gcc "${CFLAGS[@]}" -o "$built/vfio_e1000e_test" "$src"/tests/qemu/e1000e.c \
		"$src/tests/qemu/vfio_e1000e_test.c" "${LIBS[@]}"
	# The examples and tools the guest runs on the e1000e port, built as users build them.
	for p in examples/raw_frames examples/stream_recv examples/stream_send examples/udp_rpc \
		tools/myrio-info; do
		gcc "${CFLAGS[@]}" -o "$built/$(basename "$p")" "$src/$p.c" "${LIBS[@]}"
	done
	gcc "${CFLAGS[@]}" -o "$built/myrio-setup" "$src"/tools/myrio-setup/*.c "${LIBS[@]}"
	gcc -static -O2 -Wall -Wextra -Werror -Wno-unused-parameter -I"$src/tests/lib" \
		-I"$src/examples" -I"$src/include" -o "$built/tcp_pattern" "$src/tests/qemu/tcp_pattern.c"
	touch "$built/.done"
else
	echo "build-guest: programs cached in $built" >&2
fi
rm -rf "$out/lib" "$out/libmyrio_guest.a"
cp "$built/libmyrio_guest.a" "$out/"
for p in "${progs[@]}"; do
	cp "$built/$(basename "$p")" "$out/"
done
flock -u 7

# 3. Initramfs.
root="$out/initramfs"
rm -rf "$root"
mkdir -p "$root"/{bin,dev,proc,sys,lib/modules}
cp "$(command -v busybox)" "$root/bin/busybox"
cp "$kdir"/*.ko "$root/lib/modules/"
cp "$init" "$root/init"
chmod 755 "$root/init"
# the shared libraries a program needs, at the same paths
libs_of() {
	{ ldd "$1" 2>/dev/null || true; } | { grep -o '/[^ ]*' || true; } | while read -r so; do
		cp -L --parents -n "$so" "$root/"
	done
}
for p in "${progs[@]}"; do
	cp "$out/$(basename "$p")" "$root/"
	libs_of "$out/$(basename "$p")"
done
mkdir -p "$root/sbin"
for t in ip ethtool; do
	if command -v "$t" >/dev/null; then
		cp "$(command -v "$t")" "$root/sbin/$t"
		libs_of "$(command -v "$t")"
	fi
done
cp "$kdir/vmlinuz" "$out/vmlinuz"
(cd "$root" && find . | cpio -o -H newc --quiet) >"$out/initramfs.cpio"
