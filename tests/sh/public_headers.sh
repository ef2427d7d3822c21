#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Every public header compiles on its own as C11 and as C++17, warnings as errors: an
# application includes any one of them first, from either language. And the umbrella
# myrio.h includes every one of them.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
command -v g++ >/dev/null || { echo "skip: no C++ compiler (g++)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for h in "$src"/include/myrio/*.h; do
	name=$(basename "$h")
	printf '#include <myrio/%s>\nint main(void) { return 0; }\n' "$name" >"$tmp/t.c"
	cp "$tmp/t.c" "$tmp/t.cpp"
	if ! cc -std=c11 -pedantic -Wall -Wextra -Werror -I"$src/include" -c "$tmp/t.c" \
		-o "$tmp/t.o" 2>"$tmp/err"; then
		echo "FAIL C11   $name"; sed 's/^/  /' "$tmp/err" | head -5; status=1
	else
		echo "ok   C11   $name"
	fi
	if ! g++ -std=c++17 -Wall -Wextra -Werror -I"$src/include" -c "$tmp/t.cpp" \
		-o "$tmp/t.o" 2>"$tmp/err"; then
		echo "FAIL C++17 $name"; sed 's/^/  /' "$tmp/err" | head -5; status=1
	else
		echo "ok   C++17 $name"
	fi
	if [ "$name" != myrio.h ] && ! grep -q "^#include \"myrio/$name\"" \
		"$src/include/myrio/myrio.h"; then
		echo "FAIL myrio.h does not include $name"; status=1
	fi
done
exit $status
