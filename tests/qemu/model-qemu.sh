# SPDX-License-Identifier: BSD-3-Clause
# For the tests that run QEMU with the model device (source it): model_qemu NAME SRC_DIR sets
# qemu to the binary tests/qemu/build-qemu.sh built (or had cached), or ends the test: skipped
# (77) when QEMU's source package cannot be fetched, failed when the build failed.
model_qemu() {
	local name=$1 src=$2 rc=0
	qemu=$(bash "$src/tests/qemu/build-qemu.sh" "$src" | tail -n 1) || rc=$?
	if ((rc == 77)); then
		echo "$name: SKIP: QEMU's source package cannot be fetched"
		exit 77
	fi
	((rc == 0)) || { echo "$name: building QEMU with the model device failed"; exit 1; }
}
