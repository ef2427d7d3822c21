#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The manual pages: each renders without a warning (groff's and man's own checks) and
# `cmake --install` puts it in its section; every tool the pages are for has one.
set -euo pipefail
build=${1:?build directory}
src=$(cd "$(dirname "$0")/../.." && pwd)
command -v groff >/dev/null && command -v man >/dev/null ||
	{ echo "no groff or man: scripts/setup.sh installs groff-base and man-db"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
want="myrio.3 myrio-info.1 myrio-stats.1 myrio-perf.1 myrio-rawbench.1 myrio-tcpcheck.1
myrio-setup.8 myrio-simd.8"
for page in $want; do
	[[ -f $src/man/$page ]] || { echo "no man/$page"; exit 1; }
done
for path in "$src"/man/*.[1-8]; do
	page=$(basename "$path")
	out=$(LC_ALL=C.UTF-8 groff -wall -mandoc -z -Tutf8 "$path" 2>&1)
	[[ -z $out ]] || { echo "$page: groff: $out"; exit 1; }
	out=$(LC_ALL=C.UTF-8 man --warnings -l "$path" 2>&1 >/dev/null)
	[[ -z $out ]] || { echo "$page: man: $out"; exit 1; }
	installed=$tmp/prefix/share/man/man${page##*.}/$page
	cmp -s "$path" "$installed" || { echo "$page not installed as $installed"; exit 1; }
	MANPATH=$tmp/prefix/share/man man -w "${page%.*}" >/dev/null 2>&1 ||
		{ echo "man cannot find ${page%.*} in the installed prefix"; exit 1; }
done
echo "man pages: $(ls "$src"/man | wc -l) render cleanly and are installed"
