#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The layers' rules (docs/architecture.md, its "layers" block) checked against every
# #include "..." line of the tree: a file may include headers of its own layer and of the
# layers its rule names, no file includes a .c file, and every file of src/ and include/
# is in some layer (a new folder, say a new driver, needs a row of its own).
#
#   tests/sh/layering.sh [BUILD_DIR] [SOURCE_DIR]   (BUILD_DIR is unused: ctest passes it)
set -euo pipefail
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$src"
rules=docs/architecture.md
[ -f "$rules" ] || { echo "FAIL: $rules is missing"; exit 1; }

# The rules: "layer prefix... | allowed..." lines; a prefix has a slash or a dot.
table=$(awk '/^```layers/ { on = 1; next } /^```/ { on = 0 } on && !/^#/ && NF' "$rules")
[ -n "$table" ] || { echo "FAIL: no layers block in $rules"; exit 1; }

git ls-files -- '*.c' '*.h' >/dev/null 2>&1 && files=$(git ls-files -- '*.c' '*.h') ||
	files=$(find include src tools examples tests fuzz -name '*.[ch]' | sort)

# Every file of the library in a layer: "FILE" lines, checked like the includes below.
unlayered=$(printf '%s\n' $files | grep -E '^(src|include)/' | awk -v table="$table" '
BEGIN {
	n = split(table, rows, "\n")
	for (r = 1; r <= n; r++) {
		m = split(rows[r], w, /[ \t]+/)
		for (k = 2; k <= m; k++) if (w[k] ~ /[\/.]/) pre[++np] = w[k]
	}
}
{ for (i = 1; i <= np; i++) if (index($0, pre[i]) == 1) next; print }')
if [ -n "$unlayered" ]; then
	echo "FAIL: in no layer of $rules (give their folder a row):"
	sed 's/^/  /' <<<"$unlayered"
	exit 1
fi

# Every include line, "FILE:LINE:TEXT", resolved below to a repository path (the
# including file's directory first, then src/ and include/, as the build searches).
# shellcheck disable=SC2086
grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' $files |
	awk -F: '
function norm(p,    n, i, parts, out, k) {
	n = split(p, parts, "/"); k = 0
	for (i = 1; i <= n; i++) {
		if (parts[i] == "." || parts[i] == "") continue
		if (parts[i] == ".." && k > 0 && out[k] != "..") { k--; continue }
		out[++k] = parts[i]
	}
	p = ""
	for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
	return p
}
function exists(p,    l, r) { r = (getline l < p); close(p); return r >= 0 }
{
	f = $1; line = $2; inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
	d = f; if (!sub(/\/[^\/]*$/, "", d)) d = "."
	split(d " src include", bases, " ")
	for (i = 1; i <= 3; i++) {
		p = norm(bases[i] "/" inc)
		if (exists(p)) { print f, p, line; break }
	}
}' | awk -v table="$table" '
function layer_of(path,    i, best, bl) {
	best = ""; bl = 0
	for (i = 1; i <= np; i++)
		if (index(path, pre[i]) == 1 && length(pre[i]) > bl) { best = pl[i]; bl = length(pre[i]) }
	return best
}
BEGIN {
	n = split(table, rows, "\n")
	for (r = 1; r <= n; r++) {
		m = split(rows[r], w, /[ \t]+/)
		name = w[1]; known[name] = 1; allow[name, name] = 1
		for (k = 2; k <= m; k++) {
			if (w[k] ~ /[\/.]/) { np++; pre[np] = w[k]; pl[np] = name }
			else if (w[k] != "-") allow[name, w[k]] = 1
		}
	}
	for (key in allow) {
		split(key, kk, SUBSEP)
		if (!(kk[2] in known)) { printf "FAIL: rule of %s names unknown layer %s\n", kk[1], kk[2]; bad = 1 }
	}
}
NF == 3 {
	checked++
	if ($2 ~ /\.c$/) { printf "FAIL: %s:%s includes a .c file: %s\n", $1, $3, $2; bad++; next }
	a = layer_of($1); b = layer_of($2)
	if (a == "" || b == "") next
	if (!((a, b) in allow)) {
		printf "FAIL: %s:%s (%s) includes %s (%s)\n", $1, $3, a, $2, b
		bad++
	}
}
END {
	printf "%d includes checked against %d path rules: %d violations\n", checked, np, bad
	exit bad ? 1 : 0
}'
