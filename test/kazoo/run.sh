#!/usr/bin/env bash
# run.sh <zookeeper|paddock> [pytest arguments...]
#
# Runs kazoo's own test suite (Debian's python3-kazoo, in place under
# /usr/lib/python3/dist-packages/kazoo/tests; nothing is copied) against one
# standalone server started by kazoo's harness, which runs
# "java ... QuorumPeerMain <zoo.cfg>". The java shim in shim/ is put first on
# PATH so that, without changing kazoo, that command starts
#
#   zookeeper  Apache ZooKeeper 3.8 from /usr/share/java, or
#   paddock    $PADDOCK_BIN server --config <zoo.cfg> (PADDOCK_BIN defaults
#              to a fresh "go build" of ./cmd/paddock).
#
# Tests listed in deselect.txt are deselected. pymods/ provides the two
# small third-party modules kazoo's tests import that Debian does not
# install (mock, objgraph). Extra arguments go to pytest (e.g. -k lock, -x).
#
# Diagnostics for a hang: pytest runs with faulthandler_timeout=240, so a
# test still running after 240 s gets every Python thread's traceback
# printed (the test is not stopped). The whole run is stopped after
# KAZOO_SUITE_TIMEOUT seconds (SIGTERM, SIGKILL 30 s later; TestKazooSuite
# sets it below its own limit so that this one fires first). When pytest
# fails or times out, run.sh sends SIGQUIT to each Paddock server still
# running (the Go runtime then writes all goroutine stacks to its
# paddock.log and exits) and prints the last 200 lines of every paddock.log
# (any goroutine dump in it in full) before deleting its working directory.
# A Paddock server that logged "shutdown did not finish" (its shutdown after
# kazoo's SIGTERM hung, so it dumped its goroutines and exited) fails the
# run, with the same output, even when every test passed.
#
# Environment: PADDOCK_BIN; REAL_JAVA (default /usr/bin/java);
# KAZOO_SUITE_TIMEOUT (seconds, default 900); KAZOO_TESTS (default
# /usr/lib/python3/dist-packages/kazoo/tests); KAZOO_CLUSTER_SIZE (servers
# kazoo's harness runs as one ensemble, default 1); KAZOO_DESELECT (the
# deselect list, default deselect.txt; deselect-ensemble.txt is the one for
# a cluster of 3).
# Exit status: pytest's (0 = all selected tests passed), 2 on usage errors,
# 124 on timeout.

set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
usage() {
	echo "usage: $0 <zookeeper|paddock> [pytest arguments...]" >&2
	exit 2
}
[ $# -ge 1 ] || usage
target=$1
shift
case "$target" in
zookeeper | paddock) ;;
*) usage ;;
esac

python=/usr/bin/python3 # pyenv's python3 on PATH has no kazoo
tests=${KAZOO_TESTS:-/usr/lib/python3/dist-packages/kazoo/tests}
if [ ! -d "$tests" ]; then
	echo "run.sh: kazoo's tests are not at $tests (install python3-kazoo)" >&2
	exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/kazoo-suite.XXXXXX")
pidfile="$work/server.pids"
: >"$pidfile"

# cleanup kills, by PID, any server the shim started that is still running
# (kazoo stops its servers at exit, unless pytest was killed).
cleanup() {
	local pid cmd
	while read -r pid; do
		[ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || continue
		cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" || true)
		case "$cmd" in
		*QuorumPeerMain* | *" server --config "*)
			echo "run.sh: killing leftover server pid $pid" >&2
			kill -KILL "$pid" 2>/dev/null || true
			;;
		esac
	done <"$pidfile"
	rm -rf -- "$work"
}
trap cleanup EXIT

# diagnose runs when pytest failed or timed out, before cleanup deletes
# $work. It sends SIGQUIT to each Paddock server the shim started that is
# still running (the Go runtime writes every goroutine's stack to its
# paddock.log and exits), waits up to 2 s for them to exit, and prints the
# last 200 lines of every paddock.log, or, if it has a goroutine dump, the
# 200 lines before the dump and all of it. For ZooKeeper it prints nothing.
diagnose() {
	[ "$target" = paddock ] || return 0
	local pid cmd log i alive first lines from
	local quit=()
	while read -r pid; do
		[ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || continue
		cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" || true)
		case "$cmd" in
		*" server --config "*)
			echo "run.sh: sending SIGQUIT to leftover paddock server pid $pid (goroutine stacks go to its paddock.log)" >&2
			if kill -QUIT "$pid" 2>/dev/null; then
				quit+=("$pid")
			fi
			;;
		esac
	done <"$pidfile"
	for ((i = 0; i < 20 && ${#quit[@]} > 0; i++)); do
		alive=0
		for pid in "${quit[@]}"; do
			if [ -e "/proc/$pid" ]; then
				alive=1
			fi
		done
		[ "$alive" = 1 ] || break
		sleep 0.1
	done
	# A goroutine dump (SIGQUIT's, or the one "paddock server" writes when
	# its shutdown hangs) is printed whole: it is longer than 200 lines.
	while IFS= read -r -d '' log; do
		first=$(grep -n -m 1 -E '^(SIGQUIT: quit|goroutine [0-9]+ )' -- "$log" 2>/dev/null | cut -d: -f1 || true)
		if [ -n "$first" ]; then
			from=$((first > 200 ? first - 200 : 1))
			echo "run.sh: ===== $log from line $from (the goroutine dump starts at line $first) =====" >&2
		else
			lines=$(wc -l <"$log" 2>/dev/null || echo 0)
			from=$((lines > 200 ? lines - 199 : 1))
			echo "run.sh: ===== last 200 lines of $log =====" >&2
		fi
		tail -n "+$from" -- "$log" >&2 || true
		echo "run.sh: ===== end of $log =====" >&2
	done < <(find "$work" -name paddock.log -print0 2>/dev/null | sort -z || true)
}

if [ "$target" = paddock ] && [ -z "${PADDOCK_BIN:-}" ]; then
	root=$(cd "$here/../.." && pwd)
	echo "run.sh: building ./cmd/paddock in $root"
	(cd "$root" && go build -o "$work/paddock" ./cmd/paddock)
	PADDOCK_BIN=$work/paddock
fi

# A free port on 127.0.0.1 for the client port (with one server kazoo uses
# only the base port; the admin port it also writes is disabled by the shim).
# A cluster of N servers uses base+10i+{0,1,2,3} for server i (client,
# election, quorum and admin ports): pick a base below the ephemeral range
# where all of them are free.
size=${KAZOO_CLUSTER_SIZE:-1}
if [ "$size" = 1 ]; then
	port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
else
	port=$("$python" - "$size" <<'EOF'
import random, socket, sys
size = int(sys.argv[1])
def free(p):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
        return True
    except OSError:
        return False
    finally:
        s.close()
for _ in range(1000):
    base = random.randrange(20000, 32000 - 10 * size, 10)
    if all(free(base + 10 * i + k) for i in range(size) for k in range(4)):
        print(base)
        sys.exit(0)
sys.exit("run.sh: no free block of ports for %d servers" % size)
EOF
)
fi
deselect_file=${KAZOO_DESELECT:-$here/deselect.txt}

# Deselections: every line of deselect.txt for all targets or this one.
deselect=()
while IFS= read -r line; do
	line=${line%%#*}
	read -r -a words <<<"$line" || true
	[ ${#words[@]} -gt 0 ] || continue
	if [[ ${words[0]} == @* ]]; then
		[ "${words[0]}" = "@$target" ] || continue
		words=("${words[@]:1}")
	fi
	[ ${#words[@]} -eq 1 ] || {
		echo "run.sh: $deselect_file: bad line: $line" >&2
		exit 2
	}
	deselect+=(--deselect "${words[0]}")
done <"$deselect_file"

export PATH="$here/shim:$PATH"
export KAZOO_SHIM_TARGET=$target
export KAZOO_SHIM_PIDFILE=$pidfile
export REAL_JAVA=${REAL_JAVA:-/usr/bin/java}
export PADDOCK_BIN=${PADDOCK_BIN:-}
export ZOOKEEPER_CLUSTER_SIZE=$size
export ZOOKEEPER_PORT_OFFSET=$port
export ZOOKEEPER_VERSION=3.8.0
export ZOOKEEPER_CLASSPATH=/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar
export PYTHONPATH="$here/pymods${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
export TMPDIR=$work # kazoo's server working directories go here too

echo "run.sh: kazoo suite against $target ($size servers), base port $port, ${#deselect[@]} deselect arguments from $deselect_file"
cd "$work"
status=0
timeout -k 30 "${KAZOO_SUITE_TIMEOUT:-900}" \
	"$python" -m pytest -p no:cacheprovider --rootdir "$work" -q -rfEs --durations=10 \
	-o faulthandler_timeout=240 \
	"${deselect[@]}" "$@" "$tests" || status=$?
# A server whose shutdown hung (kazoo's harness stops servers with SIGTERM
# and waits for them without a limit) dumps its goroutines and exits
# (cmd/paddock's waitShutdown): that fails the run even if every test passed.
if [ "$status" -eq 0 ] && [ "$target" = paddock ]; then
	hung=$(grep -rl --include=paddock.log "shutdown did not finish" "$work" 2>/dev/null || true)
	if [ -n "$hung" ]; then
		echo "run.sh: a paddock server's shutdown hung: $hung" >&2
		status=1
	fi
fi
if [ "$status" -ne 0 ]; then
	if [ "$status" -eq 124 ]; then
		echo "run.sh: pytest timed out after ${KAZOO_SUITE_TIMEOUT:-900} s" >&2
	else
		echo "run.sh: pytest exited with status $status" >&2
	fi
	diagnose || true
fi
exit "$status"
