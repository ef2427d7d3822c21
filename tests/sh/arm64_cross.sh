#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The library cross-built for arm64 and run under QEMU user mode: the byte swaps and BAR0
# accessors on that host, the driver moving frames through the stepped model, and the
# barriers compiled to what Linux uses there (dsb st for mmio_wmb, dmb oshld for dma_rmb).
# Also: a build for an architecture without barriers is refused with a clear message.
# The library's sources only: src/preload is a separate, dynamically linked library whose
# interposed read/write would replace libc's in this static program. Nor src/tcp_lite, which
# the smoke test does not use and nothing below it calls: a third of the compiler's work, on
# a machine where this one compile competes with a whole suite.
# Skipped (77) without gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and qemu-user.
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
out="${1:?usage: arm64_cross.sh BUILD_DIR}/arm64"
cc=aarch64-linux-gnu-gcc
qemu=$(command -v qemu-aarch64 || command -v qemu-aarch64-static || true)
if ! command -v $cc >/dev/null || [ -z "$qemu" ]; then
	echo "no $cc or qemu-aarch64: skipping (apt-get install gcc-aarch64-linux-gnu" \
		"libc6-dev-arm64-cross qemu-user)"
	exit 77
fi
mkdir -p "$out"
status=0
# shellcheck disable=SC2046
if ! $cc -std=gnu11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter \
	-I"$src/src" -I"$src/include" -static -o "$out/arm64_smoke" \
	"$src/tests/arch/arm64_smoke.c" "$src/tests/arch/absent_libs.c" \
	$(find "$src/src" -name '*.c' -not -path '*/src/preload/*' -not -path '*/src/tcp_lite/*') \
	-lpthread; then
	echo "the arm64 build failed"
	exit 1
fi
"$qemu" "$out/arm64_smoke" || status=1
dis=$(aarch64-linux-gnu-objdump -d "$out/arm64_smoke")
for insn in 'dsb[[:space:]]+st' 'dmb[[:space:]]+oshld'; do
	if grep -Eq "$insn" <<<"$dis"; then
		echo "barrier present: $insn"
	else
		echo "barrier missing from the arm64 build: $insn"
		status=1
	fi
done
# an architecture mmio.h has no barriers for: refused at build time, saying why
msg=$(echo '#include "bus/mmio.h"' | cc -U__x86_64__ -U__i386__ -U__aarch64__ -I"$src/src" \
	-fsyntax-only -x c - 2>&1)
if grep -q "exist for x86 and arm64 only" <<<"$msg"; then
	echo "other architectures refused: ok"
else
	echo "a build for another architecture was not refused: $msg"
	status=1
fi
exit $status
