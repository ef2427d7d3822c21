#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Debian's guest kernel for the QEMU tests, fetched once into the cache and unpacked, not
# installed: the package linux-image-amd64 depends on, its vmlinuz and the modules the test
# guests load (VFIO, e1000e, myri10ge and its dca), flattened into one directory.
#
# usage: fetch-kernel.sh CACHE_DIR   prints that directory (vmlinuz, *.ko) as its last line
#   exit 0, or 77 when the kernel package cannot be fetched
set -euo pipefail
cache=$1
mkdir -p "$cache"
MODULES=(virt/lib/irqbypass drivers/vfio/vfio drivers/vfio/vfio_virqfd
	drivers/vfio/vfio_iommu_type1 drivers/vfio/pci/vfio-pci-core drivers/vfio/pci/vfio-pci
	drivers/net/ethernet/intel/e1000e/e1000e drivers/dca/dca
	drivers/net/ethernet/myricom/myri10ge/myri10ge)

# The lock keeps two builds sharing the cache (e.g. two build directories tested at once)
# out of each other's way.
exec 9>"$cache/.lock"
flock 9
deb=$(ls "$cache"/linux-image-6.1.*-amd64_*_amd64.deb 2>/dev/null | sort -V | tail -n 1 || true)
if [[ -z $deb ]]; then
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-6\.1/ {print $2; exit}')
	if [[ -z $pkg ]]; then
		apt-get update -qq >/dev/null 2>&1 || true
		pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-6\.1/ {print $2; exit}')
	fi
	[[ -n $pkg ]] || { echo "fetch-kernel: cannot find the linux-image-6.1 package" >&2; exit 77; }
	echo "fetch-kernel: downloading $pkg into $cache" >&2
	(cd "$cache" && apt-get download "$pkg" >/dev/null 2>&1) ||
		{ echo "fetch-kernel: apt-get download $pkg failed" >&2; exit 77; }
	deb=$(ls "$cache"/linux-image-6.1.*-amd64_*_amd64.deb | sort -V | tail -n 1)
fi
kdir="$cache/$(basename "$deb" .deb)"
want=$(printf '%s\n' "${MODULES[@]}")
if [[ ! -f $kdir/.done || $(cat "$kdir/.done") != "$want" ]]; then
	rm -rf "$kdir" "$kdir.tmp"
	mkdir -p "$kdir.tmp"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$kdir.tmp" --wildcards './boot/vmlinuz-*' \
		$(printf "./lib/modules/*/kernel/%s.ko " "${MODULES[@]}")
	mkdir -p "$kdir.tmp/flat"
	find "$kdir.tmp/lib" -name '*.ko' -exec mv {} "$kdir.tmp/flat/" \;
	mv "$kdir.tmp"/boot/vmlinuz-* "$kdir.tmp/flat/vmlinuz"
	mv "$kdir.tmp/flat" "$kdir"
	rm -rf "$kdir.tmp"
	echo "$want" >"$kdir/.done"
fi
echo "$kdir"
