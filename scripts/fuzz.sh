#!/usr/bin/env bash
# Runs every Fuzz target of the given packages for FUZZTIME each (make fuzz).
#
# go test -fuzz sometimes ends a clean run with "context deadline exceeded"
# when its workers are slow to stop at the deadline on a loaded machine (a
# known toolchain issue, not a finding; seen now and then in CI here).
# Such a run, with no failing input written, is tried again, up to four
# times (a CI run here once needed two retries of one target); any other
# failure fails at once.
set -uo pipefail
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}
TRIES=5 # a run that only missed its deadline is tried up to this many times
for pkg in $("$GO" list "$@"); do
	for f in $("$GO" test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz'); do
		for try in $(seq "$TRIES"); do
			echo "fuzz $pkg $f"
			out=$("$GO" test -run '^$' -fuzz "^$f\$" -fuzztime "$FUZZTIME" "$pkg" 2>&1)
			rc=$?
			printf '%s\n' "$out"
			if [ "$rc" -eq 0 ]; then
				break
			fi
			if [ "$try" -lt "$TRIES" ] && grep -q 'context deadline exceeded' <<<"$out" && ! grep -q 'Failing input written' <<<"$out"; then
				echo "fuzz $pkg $f: the fuzzer did not stop cleanly at its deadline; trying again"
				continue
			fi
			exit 1
		done
	done
done
