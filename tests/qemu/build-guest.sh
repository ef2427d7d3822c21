#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds the VFIO test guest: Debian's kernel (downloaded once into the cache, unpacked, not
# installed), and an initramfs with busybox, the VFIO and e1000e modules, and the test
# programs compiled from the project's own sources, with the shared libraries they need.
#
# usage: build-guest.sh SRC_DIR CACHE_DIR OUT_DIR
# Leaves OUT_DIR/vmlinuz and OUT_DIR/initramfs.cpio.
set -euo pipefail
src=$1 cache=$2 out=$3
mkdir -p "$cache" "$out"

# 1. Kernel package: the one linux-image-amd64 depends on, fetched once. The lock keeps two
# builds sharing the cache (e.g. two build directories tested at once) out of each other's way.
exec 9>"$cache/.lock"
flock 9
deb=$(ls "$cache"/linux-image-6.1.*-amd64_*_amd64.deb 2>/dev/null | sort -V | tail -n 1 || true)
if [[ -z $deb ]]; then
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-6\.1/ {print $2; exit}')
	if [[ -z $pkg ]]; then
		apt-get update -qq >/dev/null 2>&1 || true
		pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-6\.1/ {print $2; exit}')
	fi
	[[ -n $pkg ]] || { echo "build-guest: cannot find the linux-image-6.1 package" >&2; exit 1; }
	echo "build-guest: downloading $pkg into $cache"
	(cd "$cache" && apt-get download "$pkg" >/dev/null 2>&1) || { echo "build-guest: apt-get download $pkg failed" >&2; exit 1; }
	deb=$(ls "$cache"/linux-image-6.1.*-amd64_*_amd64.deb | sort -V | tail -n 1)
fi
kdir="$cache/$(basename "$deb" .deb)"
if [[ ! -f $kdir/.done ]]; then
	rm -rf "$kdir" "$kdir.tmp"
	mkdir -p "$kdir.tmp"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$kdir.tmp" --wildcards \
		'./boot/vmlinuz-*' \
		'./lib/modules/*/kernel/virt/lib/irqbypass.ko' \
		'./lib/modules/*/kernel/drivers/vfio/vfio.ko' \
		'./lib/modules/*/kernel/drivers/vfio/vfio_virqfd.ko' \
		'./lib/modules/*/kernel/drivers/vfio/vfio_iommu_type1.ko' \
		'./lib/modules/*/kernel/drivers/vfio/pci/vfio-pci-core.ko' \
		'./lib/modules/*/kernel/drivers/vfio/pci/vfio-pci.ko' \
		'./lib/modules/*/kernel/drivers/net/ethernet/intel/e1000e/e1000e.ko'
	mkdir -p "$kdir.tmp/flat"
	find "$kdir.tmp/lib" -name '*.ko' -exec mv {} "$kdir.tmp/flat/" \;
	mv "$kdir.tmp"/boot/vmlinuz-* "$kdir.tmp/flat/vmlinuz"
	mv "$kdir.tmp/flat" "$kdir"
	rm -rf "$kdir.tmp"
	touch "$kdir/.done"
fi
flock -u 9

# 2. Test programs, linked with the whole library compiled from the project's sources (the
# same src/ as libmyrio), as an archive so that each program takes only what it uses. They
# are linked dynamically against the system's libraries, which the initramfs carries (a
# static libpcap would drag in D-Bus and systemd).
CFLAGS=(-O2 -g0 -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE
	-I"$src/src" -I"$src/include" -I"$src/tests/qemu")
objs="$out/lib"
rm -rf "$objs" "$out/libmyrio_guest.a"
mkdir -p "$objs"
export objs
printf '%s\n' "$src"/src/*/*.c | xargs -P "$(nproc)" -I{} sh -c \
	'gcc "$@" -c -o "$objs/$(basename "$(dirname "{}")")_$(basename "{}" .c).o" "{}"' sh "${CFLAGS[@]}"
ar rcs "$out/libmyrio_guest.a" "$objs"/*.o
LIBS=("$out/libmyrio_guest.a" -lpcap -lpciaccess -lz -lhugetlbfs -lpthread)
# The examples and tools the guest runs on the e1000e port, built as users build them.
progs=(tests/qemu/vfio_e1000e_test examples/raw_frames examples/stream_recv examples/stream_send
	tools/myrio-info)
gcc "${CFLAGS[@]}" -o "$out/vfio_e1000e_test" "$src"/tests/qemu/e1000e.c \
	"$src/tests/qemu/vfio_e1000e_test.c" "${LIBS[@]}"
for p in "${progs[@]:1}"; do
	gcc "${CFLAGS[@]}" -o "$out/$(basename "$p")" "$src/$p.c" "${LIBS[@]}"
done
gcc "${CFLAGS[@]}" -o "$out/myrio-setup" "$src"/tools/myrio-setup/*.c "${LIBS[@]}"
progs+=(tools/myrio-setup)

# 3. Initramfs.
root="$out/initramfs"
rm -rf "$root"
mkdir -p "$root"/{bin,dev,proc,sys,lib/modules}
cp "$(command -v busybox)" "$root/bin/busybox"
cp "$kdir"/*.ko "$root/lib/modules/"
cp "$src/tests/qemu/init.sh" "$root/init"
chmod 755 "$root/init"
for p in "${progs[@]}"; do
	cp "$out/$(basename "$p")" "$root/"
	# the shared libraries it needs, at the same paths
	ldd "$out/$(basename "$p")" | grep -o '/[^ ]*' | while read -r so; do
		cp -L --parents -n "$so" "$root/"
	done
done
cp "$kdir/vmlinuz" "$out/vmlinuz"
(cd "$root" && find . | cpio -o -H newc --quiet) >"$out/initramfs.cpio"
