#!/usr/bin/env bash
# The layers' rules (docs/architecture.md, its "layers" block) checked against every
# #include "..." line of the tree: a file may include headers of its own layer and of the
# layers its rule names, and no file includes a .c file.
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

# For each file, its includes resolved to repository paths: "FILE HEADER LINE".
pairs=$(for f in $files; do
	d=$(dirname "$f")
	grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
		sed 's/^\([0-9]*\):[^"]*"\([^"]*\)".*/\1 \2/' |
		while read -r line inc; do
			for base in "$d" src include; do
				p=$(realpath -m --relative-to=. "$base/$inc")
				if [ -f "$p" ]; then
					echo "$f $p $line"
					break
				fi
			done
		done
done)

printf '%s\n' "$pairs" | awk -v table="$table" '
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
