#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds qemu-system-x86_64 with the Myri-10G model device (`-device myri10ge-model`) from
# Debian's own QEMU source package, configured small (x86_64 system emulation, TCG, no
# tools, docs or firmware blobs). The unpacked and configured QEMU tree is kept in the cache,
# so only the first build compiles QEMU; the device binary is kept under a key made of the
# QEMU version and the sources that go into the device (the glue in qemu/hw, the model in
# src/sim), so a second run builds nothing and a changed model relinks only.
#
# usage: build-qemu.sh SRC_DIR   prints the binary's path as its last line
#   exit 0 built or cached, 77 QEMU's source cannot be fetched, else failed
# The cache is $MYRIO_QEMU_BUILD_CACHE, default /var/cache/myrio-qemu: outside any clone,
# so fresh clones on the same machine share it.
set -euo pipefail
src=$(cd "${1:?usage: build-qemu.sh SRC_DIR}" && pwd)
cache=${MYRIO_QEMU_BUILD_CACHE:-/var/cache/myrio-qemu}
mkdir -p "$cache"
exec 8>"$cache/.lock"
flock 8
start=$SECONDS
say() { echo "build-qemu: $*" >&2; }

# 1. Debian's source package, once (setup.sh adds the deb-src line).
dsc=$(ls "$cache"/dl/qemu_7.2*.dsc 2>/dev/null | sort -V | tail -n 1 || true)
if [[ -z $dsc ]]; then
	mkdir -p "$cache/dl"
	if ! (cd "$cache/dl" && apt-get source --download-only qemu >/dev/null 2>&1); then
		apt-get update -qq >/dev/null 2>&1 || true
		(cd "$cache/dl" && apt-get source --download-only qemu >/dev/null 2>&1) || {
			say "SKIP: apt-get source qemu failed (no deb-src line? run scripts/setup.sh)"
			exit 77
		}
	fi
	dsc=$(ls "$cache"/dl/qemu_7.2*.dsc 2>/dev/null | sort -V | tail -n 1 || true)
	[[ -n $dsc ]] || { say "SKIP: Debian's qemu source is not 7.2"; exit 77; }
fi
ver=$(basename "$dsc" .dsc)
ver=${ver#qemu_}
tree=$cache/qemu-$ver
qsrc=$tree/src qbuild=$tree/build

# 2. Unpacked (Debian's patches applied) and configured, once. The Debian source lacks the
# edk2 firmware blobs: the build must not try to unpack them.
if [[ ! -f $tree/.configured ]]; then
	rm -rf "$tree"
	mkdir -p "$tree"
	dpkg-source -x "$dsc" "$qsrc" >/dev/null
	sed -i 's/^if unpack_edk2_blobs$/if false # edk2 blobs: not in the Debian source/' \
		"$qsrc/pc-bios/meson.build"
	echo "subdir('myrio')" >>"$qsrc/hw/net/meson.build"
	mkdir -p "$qsrc/hw/net/myrio/include" "$qbuild"
	cp "$src/qemu/hw/meson.build" "$qsrc/hw/net/myrio/"
	: >"$qsrc/hw/net/myrio/myri10ge-model.c"
	: >"$qsrc/hw/net/myrio/myrio-model.o"
	(cd "$qbuild" && "$qsrc/configure" --target-list=x86_64-softmmu \
		--without-default-features --enable-tcg --disable-docs --disable-tools \
		--disable-user --disable-install-blobs) >"$tree/configure.log" 2>&1 ||
		{ say "configure failed: see $tree/configure.log"; exit 1; }
	touch "$tree/.configured"
	say "QEMU $ver unpacked and configured in $((SECONDS - start)) s"
fi

# 3. The device, keyed by what goes into it.
key=$( (echo "$ver"; cat "$src"/qemu/hw/* "$src"/src/sim/*.[ch] "$src"/src/util/*.[ch] \
	"$src"/include/myrio/sim.h "$src"/tests/qemu/build-qemu.sh) | sha256sum | cut -c1-16)
bin=$cache/bin/qemu-system-x86_64-$key
if [[ -x $bin ]]; then
	say "cached: $bin"
	echo "$bin"
	exit 0
fi
dev=$qsrc/hw/net/myrio
obj=$tree/model
rm -rf "$obj"
mkdir -p "$obj" "$dev/include/sim" "$dev/include/myrio"
# The model: src/sim without its in-process bus, and the utilities (each stands alone); one object
# whose other global symbols are made local, so none can collide with QEMU's.
for f in "$src"/src/sim/*.c "$src"/src/util/*.c; do
	[[ $(basename "$f") == sim_bus.c ]] && continue
	echo "$f"
done | xargs -P 2 -I{} sh -c 'gcc -O2 -g -fPIE -std=gnu11 -D_GNU_SOURCE -Wall -Wextra \
	-Werror -Wno-unused-parameter -I"$1/src" -I"$1/include" -c \
	-o "$2/$(basename "$(dirname "{}")")_$(basename "{}" .c).o" "{}"' sh "$src" "$obj"
ld -r -o "$obj/all.o" "$obj"/*_*.o
objcopy --wildcard --keep-global-symbol='sim_*' --keep-global-symbol='myrio_sim_*' \
	"$obj/all.o" "$obj/myrio-model.o"
# Only what changed is copied: a new time on meson.build makes meson reconfigure the whole
# tree (minutes on a loaded machine), one on a header recompiles what includes it.
put() { cmp -s "$1" "$2/$(basename "$1")" || cp "$1" "$2/"; }
put "$obj/myrio-model.o" "$dev"
for h in model.h host.h endpoint.h; do put "$src/src/sim/$h" "$dev/include/sim"; done
put "$src/include/myrio/sim.h" "$dev/include/myrio"
put "$src/qemu/hw/meson.build" "$dev"
put "$src/qemu/hw/myri10ge-model.c" "$dev"
nice ninja -C "$qbuild" -j "$(nproc)" qemu-system-x86_64 >"$tree/ninja.log" 2>&1 ||
	{ tail -n 30 "$tree/ninja.log" >&2; say "build failed: see $tree/ninja.log"; exit 1; }
mkdir -p "$cache/bin"
find "$cache/bin" -name 'qemu-system-x86_64-*' -mtime +7 -delete
cp "$qbuild/qemu-system-x86_64" "$bin.tmp"
mv "$bin.tmp" "$bin"
say "built $bin in $((SECONDS - start)) s"
echo "$bin"
