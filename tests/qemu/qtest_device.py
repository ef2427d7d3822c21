#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The QEMU device's life cycle without a guest: QEMU's qtest accelerator plays the host
(config cycles through 0xcf8/0xcfc, BAR0 stores, guest RAM read back) to check what a guest
driver cannot see on its own:
  - a system reset puts the NIC at power-on: SRAM cleared, firmware state (SET_INTRQ_SIZE
    since the last RESET) forgotten, nothing DMAed to the previous owner's addresses;
  - migration is refused while the device is present (its state is not serialised);
  - behind an IOMMU (intel-iommu, 4 KiB pages), a DMA that crosses an IOVA page lands when
    the two pages are adjacent in guest RAM, and is blocked when they are not.
usage: qtest_device.py QEMU BIOS_DIR MCP_ABI_H      exit 0 pass, 1 fail."""
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import time

QEMU, BIOS, ABI = sys.argv[1:4]
abi = open(ABI).read()


def const(name):
    m = re.search(r'\b%s\s*=\s*(0x[0-9a-fA-F]+|\d+)u?\b' % name, abi) or \
        re.search(r'#define\s+%s\s+(0x[0-9a-fA-F]+|\d+)u?\b' % name, abi)
    if not m:
        sys.exit('qtest_device: %s not found in %s' % (name, ABI))
    return int(m.group(1), 0)


CMD_OFFSET = const('MCP_CMD_OFFSET')
RESET, SET_INTRQ_SIZE, GET_MAX_RSS = (const('MCP_CMD_RESET'), const('MCP_CMD_SET_INTRQ_SIZE'),
                                      const('MCP_CMD_GET_MAX_RSS_QUEUES'))
OK, PENDING = const('MCP_OK'), const('MCP_RESULT_PENDING')
SLOT = 4                  # PCI device number of the NIC
BAR = 0xc0000000          # where this script places BAR0
RESP = 0x100000           # guest RAM for command responses
SRAM_PROBE = 0x100000     # an SRAM word nobody else writes
failed = []


def check(ok, what):
    print(('ok: ' if ok else 'FAIL: ') + what)
    if not ok:
        failed.append(what)


class Host:
    def __init__(self, extra=()):
        self.p = subprocess.Popen(
            [QEMU, '-machine', 'q35', '-accel', 'qtest', '-qtest', 'stdio', '-display', 'none',
             '-nodefaults', '-m', '128', '-L', BIOS, *extra,
             '-device', 'myri10ge-model,addr=%02x.0,model=eeprom_fw=rss' % SLOT],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def q(self, line):
        self.p.stdin.write(line + '\n')
        self.p.stdin.flush()
        while True:
            out = self.p.stdout.readline()
            if not out:
                sys.exit('qtest_device: QEMU exited: ' + self.p.stderr.read())
            if not out.startswith('IRQ'):
                return out.split()

    def cfg_read(self, reg):
        self.q('outl 0xcf8 0x%x' % (0x80000000 | SLOT << 11 | reg))
        return int(self.q('inl 0xcfc')[1], 16)

    def cfg_write(self, reg, v):
        self.q('outl 0xcf8 0x%x' % (0x80000000 | SLOT << 11 | reg))
        self.q('outl 0xcfc 0x%x' % v)

    def enable(self):  # BAR0 placed, memory space and bus master on
        self.cfg_write(0x10, BAR | 0xc)
        self.cfg_write(0x14, 0)
        self.cfg_write(0x04, 0x6)
        self.q('clock_step 3000000000')  # the firmware boots

    def be32_read(self, addr):
        return struct.unpack('>I', struct.pack('<I', int(self.q('readl 0x%x' % addr)[1], 16)))[0]

    def be32_write(self, addr, v):
        self.q('writel 0x%x 0x%x' % (addr, struct.unpack('<I', struct.pack('>I', v))[0]))

    def command(self, op, d0=0, resp=RESP, resp_ram=None):
        if resp_ram is None:
            resp_ram = resp
        self.be32_write(resp_ram, 0)
        self.be32_write(resp_ram + 4, PENDING)
        words = [op, d0, 0, 0, resp >> 32, resp & 0xffffffff] + [0] * 10
        for i, w in enumerate(words):  # word 15 last: it starts the command
            self.be32_write(BAR + CMD_OFFSET + 4 * i, w)
        self.q('clock_step 1000000')
        return self.be32_read(resp_ram + 4), self.be32_read(resp_ram)

    def close(self):
        self.p.stdin.close()
        self.p.kill()
        self.p.wait()


h = Host()
h.enable()
r, _ = h.command(GET_MAX_RSS)
check(r != OK, 'a fresh NIC refuses GET_MAX_RSS_QUEUES before SET_INTRQ_SIZE (result %d)' % r)
h.command(RESET)
h.command(SET_INTRQ_SIZE, 4096)
r, n = h.command(GET_MAX_RSS)
check(r == OK and n > 1, 'after RESET and SET_INTRQ_SIZE it answers (result %d, %d queues)' % (r, n))
h.q('writel 0x%x 0x5a5aa5a5' % (BAR + SRAM_PROBE))
h.q('outb 0xcf9 0x6')  # q35's reset control register: a full system reset
h.q('clock_step 1000000')
check(h.cfg_read(0x04) & 0x4 == 0, 'bus master is off after the reset')
h.be32_write(RESP + 4, PENDING)
h.enable()
check(int(h.q('readl 0x%x' % (BAR + SRAM_PROBE))[1], 16) == 0, 'SRAM is at power-on after the reset')
r, _ = h.command(GET_MAX_RSS)
check(r != OK and r != PENDING,
      'the firmware forgot SET_INTRQ_SIZE across the reset and answers (result %d)' % r)
h.close()

# Migration: the monitor on a socket, qtest on stdio.
with tempfile.TemporaryDirectory() as tmp:
    mon = os.path.join(tmp, 'mon.sock')
    h = Host(('-monitor', 'unix:%s,server=on,wait=off' % mon))
    h.q('clock_step 1000')
    s = socket.socket(socket.AF_UNIX)
    s.connect(mon)
    s.settimeout(10)
    s.sendall(b'migrate "exec:cat >/dev/null"\ninfo migrate\n')
    out, end = b'', time.time() + 10
    while time.time() < end and b'Migration status' not in out and b'igrat' not in out[-200:]:
        try:
            out += s.recv(4096)
        except socket.timeout:
            break
    time.sleep(0.5)
    try:
        s.settimeout(1)
        out += s.recv(65536)
    except socket.timeout:
        pass
    text = out.decode(errors='replace')
    said = re.findall(r'Migration status: \w+|[^\r\n\x1b]*non-migratable[^\r\n\x1b]*', text)
    check(any('non-migratable' in x for x in said) and 'Migration status: completed' not in said,
          'migration is refused: %s' % '; '.join(said))
    s.close()
    h.close()

# The IOMMU: VT-d second-level tables (3 levels, 4 KiB pages) for the NIC alone.
DMAR = 0xfed90000                       # q35's intel-iommu registers
GCMD, GSTS, RTADDR = 0x18, 0x1c, 0x20
TE, SRTP = 1 << 31, 1 << 30
ROOT, CTX, L3, L2, L1 = 0x200000, 0x201000, 0x202000, 0x203000, 0x204000
PAGES = {0: 0x300000, 1: 0x301000,      # IOVA pages 0 and 1: adjacent in RAM
         2: 0x400000, 3: 0x305000}      # pages 2 and 3: not
h = Host(('-device', 'intel-iommu'))
h.q('writeq 0x%x 0x%x' % (ROOT, CTX | 1))                        # bus 0: present
h.q('writeq 0x%x 0x%x' % (CTX + (SLOT << 3) * 16, L3 | 1))       # translated, tables at L3
h.q('writeq 0x%x 0x%x' % (CTX + (SLOT << 3) * 16 + 8, 1 << 8 | 1))  # domain 1, 39-bit
h.q('writeq 0x%x 0x%x' % (L3, L2 | 3))
h.q('writeq 0x%x 0x%x' % (L2, L1 | 3))
for page, gpa in PAGES.items():
    h.q('writeq 0x%x 0x%x' % (L1 + 8 * page, gpa | 3))               # read and write
h.q('writeq 0x%x 0x%x' % (DMAR + RTADDR, ROOT))
h.q('writel 0x%x 0x%x' % (DMAR + GCMD, SRTP))
h.q('writel 0x%x 0x%x' % (DMAR + GCMD, TE))
check(int(h.q('readl 0x%x' % (DMAR + GSTS))[1], 16) & TE != 0, 'the IOMMU translates')
h.enable()
r, _ = h.command(RESET, resp=0xffe, resp_ram=PAGES[0] + 0xffe)
check(r == OK, 'a response across two adjacent IOVA pages lands (result %#x)' % r)
r, _ = h.command(RESET, resp=0x2ffe, resp_ram=PAGES[2] + 0xffe)
check(r == PENDING, 'a response across two pages apart in RAM is blocked (result %#x)' % r)
r, _ = h.command(RESET, resp=0x5000, resp_ram=0x5000)
check(r == PENDING, 'a response to an unmapped IOVA is blocked (result %#x)' % r)
h.close()

sys.exit(1 if failed else 0)
