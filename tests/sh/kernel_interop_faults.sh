#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# kernel_interop.sh on a faulty cable: the model loses, reorders and duplicates 1% of the
# frames in each direction, so both stacks' loss recovery runs against the other's; and our
# listener answers with SYN cookies, whose options the kernel must get all the same.
# usage: kernel_interop_faults.sh BUILD_DIR
here=$(dirname "$0")
MYRIO_KERNEL_FAULTS=${MYRIO_KERNEL_FAULTS:-loss=0.01,reorder=0.01,dup=0.01,seed=7} \
MYRIO_KERNEL_BYTES=${MYRIO_KERNEL_BYTES:-20M} MYRIO_KERNEL_COOKIES=${MYRIO_KERNEL_COOKIES-1} exec bash "$here/kernel_interop.sh" "$@"
