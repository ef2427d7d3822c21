#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the seed corpus of the fuzz targets (fuzz/corpus/<target>/) from well-formed
inputs: a real firmware header and EEPROM block as a Myri-10G NIC carries them (spec
§1.5, §1.6), completion-ring traffic as the device writes it (§4.6, §6.1), and Ethernet
frames a peer sends (ARP, ICMP echo, UDP, TCP handshakes with the usual options, data,
FIN, RST). Run from the repository root: python3 fuzz/gen_corpus.py"""
import os
import struct
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(bytes(data))


# ---- firmware header and EEPROM strings -------------------------------------------------
def fw_header(version=b"1.4.57 -- 2013/04/11 15:44:56 myri10ge firmware", length=192,
              mcp_type=0x45544820, string_specs=0x1DFE00):
    h = bytearray(192)
    struct.pack_into(">II", h, 0, length, mcp_type)
    h[8:8 + len(version)] = version
    struct.pack_into(">IIII", h, 136, 0x1000, 0x1DFF00, string_specs, 256)
    h[152] = 1
    struct.pack_into(">HH", h, 164, 1, 0x3)
    struct.pack_into(">II", h, 184, 0xFFFFFFFF, 0xFFFFFFFF)
    return bytes(h[:max(length, 152)] if length < 192 else h)


EEPROM = (b"MAC=00:60:dd:47:e5:31\0SN=461234\0PC=10G-PCIE-8B-S\0"
          b"PT:10G-PCIE-8B-S\0PV:2013\0\0")
EEPROM_SN2 = b"MAC=00:60:DD:4A:0B:7E\0SN=1\0SN2=470001\0PC=10G-PCIE2-8B2-2S\0\0"


def fw_image(hdr, at=0x100, size=0x400):
    img = bytearray(size)
    struct.pack_into(">I", img, 0x3C, at)
    img[at:at + len(hdr)] = hdr
    return bytes(img)


def sram(ptr, hdr, strings):
    s = strings + bytes(256 - len(strings))
    return bytes([3]) + struct.pack(">I", ptr) + hdr + s


def gen_fw_header():
    t = "fw_header"
    write(t, "image-1.4.57", b"\0" + fw_image(fw_header()))
    write(t, "image-short-header", b"\0" + fw_image(fw_header(length=152)))
    write(t, "image-header-at-end", b"\0" + fw_image(fw_header(), at=0x400 - 192))
    write(t, "header-1.4.57", b"\1" + fw_header())
    write(t, "header-1.4.3-adopted", b"\1" + fw_header(b"1.4.3 -P- 2006/07/11"))
    write(t, "header-wrong-type", b"\1" + fw_header(mcp_type=0x4D582020))
    write(t, "header-1.5.0", b"\1" + fw_header(b"1.5.0"))
    write(t, "eeprom-8b-s", b"\2" + EEPROM + bytes(256 - len(EEPROM)))
    write(t, "eeprom-sn2", b"\2" + EEPROM_SN2 + bytes(256 - len(EEPROM_SN2)))
    write(t, "eeprom-bad-mac", b"\2MAC=00:60:dd:47:e5\0SN=1\0\0")
    write(t, "sram-eth-1.4.57", sram(0x400, fw_header(), EEPROM))
    write(t, "sram-specs-elsewhere", sram(0x400, fw_header(string_specs=0x1C0000), EEPROM_SN2))
    write(t, "sram-ptr-unaligned", sram(0x402, fw_header(), EEPROM))


# ---- receive completions, status blocks, transmit ----------------------------------------
def rx_ops():
    t = "rx_completion"
    frame = lambda n, c=0x1234: bytes([0]) + struct.pack(">HH", n, c)
    burst = lambda n, keep=0: bytes([3, n, keep])
    status = lambda done, link=1, valid=3: (bytes([7, 1]) + struct.pack(">III", done, link, 0)
                                           + bytes([0, valid]))
    tx = lambda n, ln, fl=0: bytes([6, n]) + struct.pack(">H", ln) + bytes([fl])
    write(t, "small-frames", b"".join(frame(60 + i) for i in range(8)) + burst(31))
    write(t, "big-frames", b"".join(frame(1000 + i * 50) for i in range(8)) + burst(31))
    write(t, "mixed-wrap", (b"".join(frame(64) + frame(1514) for _ in range(20)) + burst(63)) * 3)
    write(t, "hold-and-release", (frame(300) * 8 + burst(7, 0xFF)) * 6 + bytes([5]) + frame(60)
          + burst(1))
    write(t, "link-up-status", status(0, 1, 1) + frame(60) + burst(0) + status(0, 0, 1))
    write(t, "tx-and-done", tx(8, 60) + tx(4, 1514, 1) + status(12, 1, 2) + tx(15, 2047, 9)
          + status(27, 1, 2))
    write(t, "mtu-plus-one", frame(1519) + frame(0xFFFF) + burst(4))
    write(t, "entry-no-buffer", bytes([1]) + struct.pack(">HH", 60, 0) + burst(2))
    write(t, "entry-any-index", bytes([2, 17]) + struct.pack(">H", 64) + frame(64) + burst(5))


# ---- Ethernet frames into the stack -----------------------------------------------------
def fnv(name):
    h = 2166136261
    for c in name.encode():
        h = ((h ^ c) * 16777619) & 0xFFFFFFFF
    return h


H = fnv("fz")
STACK_MAC = bytes([2, 0, (H >> 16) & 255, (H >> 8) & 255, H & 255, 1])
PEER_MAC = bytes([2, 0, (H >> 16) & 255, (H >> 8) & 255, H & 255, 2])
STACK_IP = bytes([10, 0, 0, 1])
PEER_IP = bytes([10, 0, 0, 2])


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(">%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ipv4(proto, payload, ident=1, ttl=64, opts=b""):
    ihl = 5 + len(opts) // 4
    h = struct.pack(">BBHHHBBH4s4s", 0x40 | ihl, 0, ihl * 4 + len(payload), ident, 0x4000,
                    ttl, proto, 0, PEER_IP, STACK_IP) + opts
    h = h[:10] + struct.pack(">H", csum(h)) + h[12:]
    return h + payload


def eth(ethertype, payload, dst=STACK_MAC):
    f = dst + PEER_MAC + struct.pack(">H", ethertype) + payload
    return f + bytes(max(0, 60 - len(f)))


def l4sum(proto, seg):
    ph = PEER_IP + STACK_IP + struct.pack(">BBH", 0, proto, len(seg))
    return csum(ph + seg)


def tcp(sport, dport, seq, ack, flags, win=65535, opts=b"", data=b""):
    hl = 20 + len(opts)
    seg = struct.pack(">HHIIBBHHH", sport, dport, seq, ack, (hl // 4) << 4, flags, win, 0,
                      0) + opts + data
    seg = seg[:16] + struct.pack(">H", l4sum(6, seg)) + seg[18:]
    return eth(0x0800, ipv4(6, seg))


def udp(sport, dport, data):
    seg = struct.pack(">HHHH", sport, dport, 8 + len(data), 0) + data
    seg = seg[:6] + struct.pack(">H", l4sum(17, seg) or 0xFFFF) + seg[8:]
    return eth(0x0800, ipv4(17, seg))


def raw(frame, fix=False):
    return bytes([0x10 if fix else 0]) + struct.pack(">H", len(frame)) + frame


SYN_OPTS = (b"\x02\x04\x05\xb4" + b"\x04\x02" + b"\x08\x0a" + struct.pack(">II", 1000, 0)
            + b"\x01\x03\x03\x07")


def op_tcp(sel, flags, mode=0, dseq=0, dack=0, win=65535, opts=b"", paylen=0, fill=0x61,
           stack_port=None):
    b = bytes([2, sel, flags, mode])
    if sel & 8:
        b += struct.pack(">H", stack_port)
    b += struct.pack(">hhH", dseq, dack, win) + bytes([len(opts)]) + opts
    b += struct.pack(">H", paylen) + bytes([fill])
    return b


def op_time(ms):
    return bytes([8]) + struct.pack(">H", ms)


def gen_net():
    t = "net_input"
    arp_req = eth(0x0806, struct.pack(">HHBBH", 1, 0x0800, 6, 4, 1) + PEER_MAC + PEER_IP
                  + bytes(6) + STACK_IP, dst=b"\xff" * 6)
    arp_rep = eth(0x0806, struct.pack(">HHBBH", 1, 0x0800, 6, 4, 2) + PEER_MAC + PEER_IP
                  + STACK_MAC + STACK_IP)
    icmp = b"\x08\x00\x00\x00\x12\x34\x00\x01" + bytes(range(56))
    icmp = icmp[:2] + struct.pack(">H", csum(icmp)) + icmp[4:]
    echo = eth(0x0800, ipv4(1, icmp))
    dns = udp(5353, 53, b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com"
              b"\x00\x00\x01\x00\x01")
    syn = tcp(40000, 80, 1000, 0, 0x02, opts=SYN_OPTS)
    ip_opts = eth(0x0800, ipv4(1, icmp, opts=b"\x94\x04\x00\x00"))  # router alert
    frag = bytearray(echo)
    frag[20] = 0x20  # more fragments
    write(t, "arp-request", b"\x80" + raw(arp_req))
    write(t, "arp-reply-resolves", b"\x00" + raw(arp_rep) + op_time(10))
    write(t, "icmp-echo", b"\x80" + raw(echo) + raw(ip_opts) + raw(bytes(frag), fix=True))
    write(t, "udp-dns", b"\x80" + raw(dns) + raw(udp(1, 9, b"x" * 1000)))
    # A UDP datagram of 2000 bytes in two IPv4 fragments, the second first.
    big = udp(5353, 53, bytes(range(256)) * 7 + bytes(200))[14:]  # IP header + datagram
    hdr, dgram = bytearray(big[:20]), big[20:]
    frags = []
    for off, n, more in ((1480, len(dgram) - 1480, 0), (0, 1480, 1)):
        h = bytearray(hdr)
        struct.pack_into(">HH", h, 2, 20 + n, 1)
        struct.pack_into(">H", h, 6, (0x2000 if more else 0) | off // 8)
        struct.pack_into(">H", h, 10, 0)
        struct.pack_into(">H", h, 10, csum(bytes(h)))
        frags.append(raw(eth(0x0800, bytes(h) + dgram[off:off + n])))
    write(t, "udp-fragments", b"\x80" + b"".join(frags))
    write(t, "tcp-raw-syn", b"\x80" + raw(syn) + raw(tcp(40000, 81, 5, 0, 0x02)))
    # Passive open on port 80 with every option, data both ways, orderly close.
    hs = (op_tcp(5, 0x02, opts=SYN_OPTS) + op_tcp(5, 0x10) + op_tcp(5, 0x18, paylen=100)
          + op_time(50) + op_tcp(5, 0x18, paylen=1460) + op_tcp(5, 0x11) + op_time(100))
    write(t, "tcp-passive-data-fin", b"\xc0" + hs)
    write(t, "tcp-passive-nocsum-noopts", b"\x8f" + hs)
    # Out-of-order data and SACK, duplicate ACKs, a retransmission timeout.
    ooo = (op_tcp(6, 0x02, opts=SYN_OPTS) + op_tcp(6, 0x10) + op_tcp(6, 0x18, dseq=1000,
           paylen=500) + op_tcp(6, 0x18, dseq=0, paylen=1000) + op_tcp(6, 0x10) * 3
           + op_time(3000) + op_tcp(6, 0x14))
    write(t, "tcp-ooo-sack-rst", b"\xc0" + ooo)
    # The stack's own connection to port 1234: SYN-ACK, data from it (echo), close.
    act = (op_tcp(0, 0x12, opts=b"\x02\x04\x05\xb4\x04\x02") + op_tcp(0, 0x18, paylen=200)
           + bytes([9, 0]) + struct.pack(">H", 3000) + op_tcp(0, 0x10) + op_time(300)
           + bytes([9, 1]) + op_tcp(0, 0x11) + op_time(60000))
    write(t, "tcp-active-echo", b"\xc0" + act)
    write(t, "tcp-active-arp", b"\x40" + raw(arp_rep) + act)
    # ICMP errors quoting the stack's own connection: port unreachable during the
    # handshake; "fragmentation needed" (MTU 1000) with data in flight, then the ACK.
    def op_icmp_flow(kind, code, back, rest):
        return bytes([6, 0x80 | kind, code]) + struct.pack(">HHH", back, rest, 0)
    write(t, "icmp-refused-handshake", b"\xc0" + op_icmp_flow(0, 3, 0, 0) + op_time(2000))
    pmtu = (op_tcp(0, 0x12, opts=b"\x02\x04\x05\xb4\x04\x02") + bytes([9, 0])
            + struct.pack(">H", 4000) + op_icmp_flow(0, 4, 2000, 1000) + op_tcp(0, 0x10)
            + op_time(700) + op_icmp_flow(1, 0, 1, 0))
    write(t, "icmp-frag-needed", b"\xc0" + pmtu)
    # Window probing: zero window from the peer while the stack has data to send.
    zw = (op_tcp(0, 0x12) + bytes([9, 0]) + struct.pack(">H", 4000) + op_tcp(0, 0x10, win=0)
          + op_time(2000) + op_time(5000) + op_tcp(0, 0x10, win=8192))
    write(t, "tcp-zero-window", b"\x80" + zw)
    # RST and challenge ACK corner cases (RFC 5961): in-window SYN, RST off by one.
    rfc = (op_tcp(5, 0x02) + op_tcp(5, 0x10) + op_tcp(5, 0x02) + op_tcp(5, 0x04, dseq=1)
           + op_tcp(5, 0x04))
    write(t, "tcp-rfc5961", b"\x80" + rfc)
    # SYN flood on the listener: many source ports (raw SYNs with fixed-up checksums).
    flood = b"".join(raw(tcp(20000 + i, 80, i * 7919, 0, 0x02)) for i in range(12))
    write(t, "tcp-syn-flood", b"\x80" + flood + op_time(1000) + op_time(65000))


if __name__ == "__main__":
    gen_fw_header()
    rx_ops()
    gen_net()
    sys.exit(0)
