#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The QEMU device without a guest (tests/qemu/qtest_device.py under QEMU's qtest
# accelerator): a system reset returns the model NIC to power-on, migration is refused, and
# DMA through an IOMMU crosses pages only where they are adjacent in RAM.
# usage: qemu_device_qtest.sh BUILD_DIR    exit 0 pass, 77 skip (QEMU's source cannot be
# fetched), else fail.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../qemu/model-qemu.sh
. "$src/tests/qemu/model-qemu.sh"
model_qemu qemu_device_qtest "$src"
exec python3 "$src/tests/qemu/qtest_device.py" "$qemu" /usr/share/seabios "$src/src/mcp/mcp_abi.h"
