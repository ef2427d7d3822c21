#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the peers the benchmarks compare against (Debian 12 packages), if missing:
# iperf3 and nuttcp (kernel TCP/UDP streams), sockperf (kernel UDP/TCP ping-pong),
# dpdk, dpdk-dev (dpdk-testpmd) and librte-net-memif23 (its memif ports; raw frame rates),
# iproute2 (network namespaces and veth). Needs root. The test suite needs none of these.
set -euo pipefail
PACKAGES=(iperf3 nuttcp sockperf dpdk dpdk-dev librte-net-memif23 iproute2 python3 util-linux)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "bench/deps.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
