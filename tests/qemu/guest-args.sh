# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the QEMU guest tests: guest_args OUT MEM [KERNEL_ARGS...] sets GUEST_ARGS, the
# QEMU arguments every test guest shares: TCG (the machines' KVM cannot run a stock
# kernel), q35 with the emulated Intel IOMMU, serial console only, never rebooting, and
# the kernel and initramfs that tests/qemu/build-guest.sh left in OUT.
guest_args() {
	local out=$1 mem=$2
	shift 2
	GUEST_ARGS=(-accel tcg,thread=multi -cpu max -smp 1 -m "$mem"
		-machine q35,kernel-irqchip=split
		-device intel-iommu,intremap=on,caching-mode=on
		-nodefaults -display none -serial stdio -monitor none -no-reboot
		-kernel "$out/vmlinuz" -initrd "$out/initramfs.cpio"
		-append "console=ttyS0 intel_iommu=on no_timer_check quiet panic=-1 $*")
}
