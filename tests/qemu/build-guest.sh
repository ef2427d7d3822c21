#!/usr/bin/env bash
# Builds the VFIO test guest: Debian's kernel (downloaded once into the cache, unpacked, not
# installed), and an initramfs with busybox, the VFIO and e1000e modules, and the test
# programs compiled statically from the project's own src/pci/ and src/mem/ sources.
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

# 2. Static test programs from the project's sources (the same src/pci/ the library has).
CFLAGS=(-static -O2 -g0 -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE
	-I"$src/src" -I"$src/include" -I"$src/tests/qemu")
LIB_SRCS=("$src"/src/pci/*.c "$src/src/mem/dma.c" "$src/src/util/log.c" "$src/src/util/pci_cap.c")
# libhugetlbfs sets itself up (finds its mounts) in a constructor in init.o, which nothing
# references, so a static link would drop it: extract it and link it explicitly.
hlib=$(gcc -print-file-name=libhugetlbfs.a)
(cd "$out" && ar x "$hlib" init.o && mv -f init.o hugetlbfs_init.o)
LIBS=("$out/hugetlbfs_init.o" -lpciaccess -lz -lhugetlbfs)
gcc "${CFLAGS[@]}" -o "$out/vfio_e1000e_test" "$src"/tests/qemu/e1000e.c \
	"$src/tests/qemu/vfio_e1000e_test.c" "${LIB_SRCS[@]}" "${LIBS[@]}"
setup_srcs=("$src"/tools/myrio-setup/*.c)
gcc "${CFLAGS[@]}" -o "$out/myrio-setup" "${setup_srcs[@]}" "${LIB_SRCS[@]}" "${LIBS[@]}"

# 3. Initramfs.
root="$out/initramfs"
rm -rf "$root"
mkdir -p "$root"/{bin,dev,proc,sys,lib/modules}
cp "$(command -v busybox)" "$root/bin/busybox"
cp "$kdir"/*.ko "$root/lib/modules/"
cp "$src/tests/qemu/init.sh" "$root/init"
chmod 755 "$root/init"
cp "$out/vfio_e1000e_test" "$out/myrio-setup" "$root/"
cp "$kdir/vmlinuz" "$out/vmlinuz"
(cd "$root" && find . | cpio -o -H newc --quiet) >"$out/initramfs.cpio"
