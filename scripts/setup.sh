#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs what libmyrio needs on Debian 12 and reserves hugepages. Idempotent; needs root.
set -euo pipefail

PACKAGES=(build-essential cmake ninja-build pkg-config clang
  libpciaccess-dev libhugetlbfs-dev libcmocka-dev libpcap-dev
  iproute2 tcpdump socat netcat-openbsd iperf3 sockperf nuttcp curl python3 valgrind
  qemu-system-x86 busybox-static cpio kmod zlib1g-dev tshark groff-base man-db
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
  meson libglib2.0-dev libpixman-1-dev libfdt-dev dpkg-dev ethtool nftables)

# QEMU's source package (tests/qemu/build-qemu.sh builds the Myri-10G model device into it)
# needs a deb-src line beside Debian's deb lines.
DEB_SRC=/etc/apt/sources.list.d/myrio-deb-src.sources
if [[ ! -f $DEB_SRC ]] && ! grep -rqs '^\(Types: .*\)\?deb-src' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  cat >"$DEB_SRC" <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  apt-get update -qq || true
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # tshark asks whether non-root users may capture: no (nothing here needs it)
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Hugepages: 2 MiB pages for rings and packet buffers, mounted where libhugetlbfs looks.
want=${MYRIO_HUGEPAGES:-1024}
have=$(cat /proc/sys/vm/nr_hugepages)
if ((have < want)); then
  echo "$want" >/proc/sys/vm/nr_hugepages || true
  have=$(cat /proc/sys/vm/nr_hugepages)
  ((have >= want)) || echo "setup: warning: only $have of $want hugepages could be reserved"
fi
if ! grep -q ' hugetlbfs ' /proc/mounts; then
  mkdir -p /dev/hugepages
  mount -t hugetlbfs nodev /dev/hugepages
fi
