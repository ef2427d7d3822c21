# SPDX-License-Identifier: BSD-3-Clause
# For benchmark scripts that count instructions with callgrind (source it).

# incl FILE FUNCTION: inclusive instructions of FUNCTION in callgrind output FILE, read
# from the file itself
# (self cost plus the inclusive cost of its calls, over every file its code came from), so
# that nothing depends on how the debug information spells this checkout's source paths.
incl() {
	awk -v want="$2" '
	function named(s,    id) { # "(id) name" defines id, "(id)" uses it
		if (match(s, /^\([0-9]+\)/)) {
			id = substr(s, 1, RLENGTH)
			if (length(s) > RLENGTH) names[id] = substr(s, RLENGTH + 2)
			return names[id]
		}
		return s
	}
	/^fn=/ { fn = named(substr($0, 4)); next }
	/^cfn=/ { named(substr($0, 5)); next }
	/^calls=/ { next }
	/^[-+*0-9]/ { if (fn == want && NF > 1) total += $2 }
	END { print total + 0 }' "$1"
}
