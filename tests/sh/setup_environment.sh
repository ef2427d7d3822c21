#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# myrio-setup runs as root and takes nothing from its caller's environment: the fake
# roots MYRIO_SYSFS_ROOT, MYRIO_DEV_ROOT and MYRIO_PROC_ROOT work only in the build made
# for testing it (tests/myrio-setup-testroots), and modprobe is the system's, never one
# found first in PATH. In a mount namespace the system's modprobe is replaced by a
# stand-in that only leaves a mark, so no module is loaded.
# Usage: setup_environment.sh BUILD_DIR
set -u
build=${1:?build dir}
release=$build/myrio-setup
testroots=$build/tests/myrio-setup-testroots
[ -x "$release" ] && [ -x "$testroots" ] || { echo "no $release or $testroots"; exit 1; }
[ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null || { echo "needs root and mount namespaces"; exit 77; }
modprobe=$(readlink -f /usr/sbin/modprobe 2>/dev/null || true)
[ -f "$modprobe" ] || modprobe=$(readlink -f /sbin/modprobe 2>/dev/null || true)
[ -f "$modprobe" ] || { echo "no modprobe on this system to stand in for"; exit 77; }
tmp=$(mktemp -d /tmp/myrio-setup-env.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# Fake roots: a Myri-10G at $addr, no vfio-pci, a /proc that reports 7 hugepages.
addr=0000:7e:00.0
sys=$tmp/sys dev=$tmp/dev proc=$tmp/proc
mkdir -p "$sys/bus/pci/devices/$addr" "$sys/bus/pci/drivers" "$sys/kernel/iommu_groups" \
	"$dev/vfio" "$proc/sys/vm"
echo 0x14c1 >"$sys/bus/pci/devices/$addr/vendor"
echo 0x0008 >"$sys/bus/pci/devices/$addr/device"
: >"$sys/bus/pci/devices/$addr/driver_override"
printf 'HugePages_Total:       7\nHugePages_Free:        7\nHugepagesize:       2048 kB\n' \
	>"$proc/meminfo"
echo "ro quiet" >"$proc/cmdline"
echo "proc /proc proc rw 0 0" >"$proc/mounts"

# A modprobe first in PATH, and the stand-in for the system's.
mkdir "$tmp/bin"
printf '#!/bin/sh\ntouch %s/path-modprobe-ran\nexit 0\n' "$tmp" >"$tmp/bin/modprobe"
printf '#!/bin/sh\ntouch %s/system-modprobe-ran\nexit 1\n' "$tmp" >"$tmp/system-modprobe"
chmod +x "$tmp/bin/modprobe" "$tmp/system-modprobe"

# Runs myrio-setup ARGS with the hostile environment, the system's modprobe stood in for.
run() {
	rm -f "$tmp"/*-modprobe-ran
	unshare -m sh -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' sh \
		"$tmp/system-modprobe" "$modprobe" \
		env PATH="$tmp/bin:$PATH" MYRIO_SYSFS_ROOT="$sys" MYRIO_DEV_ROOT="$dev" \
		MYRIO_PROC_ROOT="$proc" "$@" 2>&1
}

# The test build reads the fake roots (so that the checks below can fail).
out=$(run "$testroots" check "$addr")
echo "$out" | grep -q " 7 hugepages of 2048 kB reserved" || fail "test build ignored MYRIO_PROC_ROOT: $out"
echo "$out" | grep -q "no PCI device $addr" && fail "test build ignored MYRIO_SYSFS_ROOT: $out"

# The installed build reads the system's (only reads: nothing here may change the host).
out=$(run "$release" check "$addr")
echo "$out" | grep -q " 7 hugepages " && fail "myrio-setup took /proc from MYRIO_PROC_ROOT: $out"
echo "$out" | grep -q "no PCI device $addr" || fail "myrio-setup took sysfs from MYRIO_SYSFS_ROOT: $out"

# Both builds run the system's modprobe when vfio-pci is missing, never PATH's.
for tool in "$testroots" "$release"; do
	[ "$tool" = "$release" ] && [ -d /sys/bus/pci/drivers/vfio-pci ] && continue
	out=$(run "$tool" bind "$addr")
	[ -e "$tmp/path-modprobe-ran" ] && fail "$tool ran the modprobe found first in PATH: $out"
	[ -e "$tmp/system-modprobe-ran" ] || fail "$tool did not run $modprobe: $out"
done
echo "setup_environment: roots ignored outside the test build, modprobe by absolute path"
