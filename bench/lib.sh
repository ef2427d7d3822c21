#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Helpers shared by the benchmark scripts: a veth pair between two network namespaces for
# the kernel's side, pinning, JSON fields, and the one-line summaries with ratios.
#
# CPU placement on a 2-core machine: the device model's thread (libmyrio's "NIC") runs on
# CPU 0 and the application on CPU 1 (myrio-perf and latency_loopback do this themselves);
# for the kernel, the server side runs on CPU 0 and the client on CPU 1.

B=${B:-build}
T=${T:-5}
# Names of this run's own: two benchmarks at once must not delete each other's namespaces
RUN_ID=${RUN_ID:-$$}
NS1=myrio-bench-a$RUN_ID
NS2=myrio-bench-b$RUN_ID
IP1=10.77.0.1
IP2=10.77.0.2
export MYRIO_LOG=${MYRIO_LOG:-1}
LAST_CPU=$(($(nproc) - 1))

need() { command -v "$1" >/dev/null || { echo "missing $1: run bench/deps.sh" >&2; exit 1; }; }

# veth between two namespaces with the given MTU; offloads stay on (the kernel at its best)
netns_up() {
	local mtu=$1
	netns_down
	ip netns add $NS1
	ip netns add $NS2
	ip link add veth-mb-a netns $NS1 type veth peer name veth-mb-b netns $NS2
	ip -n $NS1 addr add $IP1/24 dev veth-mb-a
	ip -n $NS2 addr add $IP2/24 dev veth-mb-b
	ip -n $NS1 link set veth-mb-a mtu "$mtu" up
	ip -n $NS2 link set veth-mb-b mtu "$mtu" up
	ip -n $NS1 link set lo up
	ip -n $NS2 link set lo up
}

netns_down() {
	ip netns del $NS1 2>/dev/null || true
	ip netns del $NS2 2>/dev/null || true
}

# wait_listen NS PORT: until a socket listens (TCP) or is bound (UDP) on PORT in NS, 10 s
# at most: a client that starts first finds nobody, and on a loaded machine a server can
# take seconds to get there
wait_listen() {
	local end=$((SECONDS + 10))
	while ((SECONDS < end)); do
		ip netns exec "$1" ss -Hlnut "sport = :$2" | grep -q . && return 0
		sleep 0.1
	done
}

# busy_poll_begin / busy_poll_end: net.core.busy_read and busy_poll (global, not per
# namespace) at 50 us while any run needs them. The state file holds the values found
# before the first run, then one line per run holding them; the last to leave restores them
# (a holder that died without leaving no longer counts).
BUSY_POLL_STATE=/run/myrio-bench-busy-poll
busy_poll_begin() {
	(
		flock 9
		if [[ ! -s $BUSY_POLL_STATE ]]; then
			echo "$(sysctl -n net.core.busy_read) $(sysctl -n net.core.busy_poll)" \
				>"$BUSY_POLL_STATE"
		fi
		echo $$ >>"$BUSY_POLL_STATE"
		sysctl -qw net.core.busy_read=50 net.core.busy_poll=50
	) 9>>"$BUSY_POLL_STATE.lock"
}
busy_poll_end() {
	(
		flock 9
		[[ -s $BUSY_POLL_STATE ]] || exit 0
		local saved holders=() h
		{
			read -r saved
			while read -r h; do
				[[ $h != $$ ]] && kill -0 "$h" 2>/dev/null && holders+=("$h")
			done
		} <"$BUSY_POLL_STATE"
		if ((${#holders[@]})); then
			printf '%s\n' "$saved" "${holders[@]}" >"$BUSY_POLL_STATE"
		else
			set -- $saved
			sysctl -qw net.core.busy_read="$1" net.core.busy_poll="$2"
			rm -f "$BUSY_POLL_STATE"
		fi
	) 9>>"$BUSY_POLL_STATE.lock"
}

# json FILE EXPR: a value from a JSON document, e.g. json r.json 'd["end"]["sum"]["seconds"]'
json() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# cpu_of PID: user+system CPU seconds of a process (all its threads) so far
cpu_of() {
	local a
	a=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
	a=${a##*) }
	set -- $a
	echo "scale=3; (${12} + ${13}) / $(getconf CLK_TCK)" | bc
}

# steal_ticks: the machine's steal time so far (/proc/stat), for the steal % of a run
steal_ticks() { awk '/^cpu /{print $9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat; }
