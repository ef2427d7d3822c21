#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Every "§n" or "§n.m" the driver, the model and the library's other layers cite names a
# section of docs/myri10ge-interface.md, so a reader of the repository can follow it.
# References to other documents (RFC 9293 §3.8, PCI Local Bus 3.0 §6.7, a NIC's datasheet) name their
# document on the same line, before the section sign, and are not checked.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
cd "$src"
spec=docs/myri10ge-interface.md
[ -f "$spec" ] || { echo "FAIL: $spec is missing"; exit 1; }
# Section numbers the document has: "## 4. Receive path" -> 4, "### 4.6 ..." -> 4.6.
sections=$(sed -n 's/^###\{0,1\} \([0-9][0-9.]*\) .*/\1/p' "$spec" | sed 's/\.$//' | sort -u)
declare -A have
for s in $sections; do have[$s]=1; done
bad=0 n=0
while IFS=: read -r file line text; do
	# the part of the line after each §, unless another document is named before it
	while [[ $text =~ §([0-9]+(\.[0-9]+)?) ]]; do
		ref=${BASH_REMATCH[1]}
		before=${text%%§*}
		text=${text#*§}
		if [[ $before =~ (RFC|IEEE|PCI[[:space:]]Local|PCIe[[:space:]]|POSIX|datasheet)[^§]*$ ]]; then
			continue
		fi
		n=$((n + 1))
		if [ -z "${have[$ref]:-}" ]; then
			echo "FAIL: $file:$line cites §$ref, which $spec does not have"
			bad=$((bad + 1))
		fi
	done
done < <(grep -rnE '§[0-9]' src include tools examples docs/driver.md docs/device-model.md \
	docs/architecture.md 2>/dev/null | grep -v '^src/tcp_lite/')
echo "$n references to $spec checked: $bad unresolved"
[ "$bad" -eq 0 ]
