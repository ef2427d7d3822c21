#!/usr/bin/env bash
# --pcap in the examples: latency_loopback captures port A with myrio_port_capture_start;
# the file must be a pcap holding the UDP and TCP ping-pongs in both directions.
set -euo pipefail
build=${1:?build directory}
bin=$build/latency_loopback
[[ -x $bin ]] || { echo "no $bin"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export MYRIO_LOG=1
timeout 60 "$bin" -n 500 -s 64 --pcap "$tmp/cap.pcap" >/dev/null
python3 - "$tmp/cap.pcap" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
magic = struct.unpack("<I", data[:4])[0]
assert magic in (0xa1b2c3d4, 0xa1b23c4d), "not a pcap file"
off, frames, flows = 24, 0, set()
while off + 16 <= len(data):
    incl = struct.unpack("<IIII", data[off:off + 16])[2]
    f = data[off + 16:off + 16 + incl]
    if len(f) >= 34 and f[12:14] == b"\x08\x00":
        flows.add((f[23], bytes(f[26:30])))  # protocol, source address
    off += 16 + incl
    frames += 1
if frames == 0:
    # The capture hooks sit in myrio_rx_burst/myrio_tx_burst: a stack calling the port's
    # back-end directly bypasses them. Reported as skipped, not passed.
    print("capture is empty: the stack does not go through myrio_rx_burst/myrio_tx_burst")
    sys.exit(77)
a, b = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
for proto, name in ((17, "UDP"), (6, "TCP")):
    assert {(proto, a), (proto, b)} <= flows, f"{name} missing a direction: {flows}"
assert frames >= 2 * 550, f"only {frames} frames for 550 UDP and 550 TCP round trips"
print(f"ok: {frames} frames, UDP and TCP both ways")
PY
