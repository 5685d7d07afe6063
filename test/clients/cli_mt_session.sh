#!/usr/bin/env bash
# cli_mt_session.sh HOST:PORT
#
# Drives the ZooKeeper C client's shell (cli_mt from Debian's zookeeper-bin,
# built on libzookeeper_mt) against the server at HOST:PORT, with commands fed
# on stdin, and checks every answer. Prints a transcript; exits 1 with
# "FAIL: ..." on the first unexpected answer, 2 on a usage or setup error.
#
# cli_mt answers asynchronously on stderr; each command is followed by a
# marker (a delete of a node that never exists, whose "rc = -101" answer
# comes after the command's own, since a session's requests complete in
# order). Its create always writes the 3 bytes "new" with an open ACL, and it
# has no ACL commands. Not covered: session resumption with -m (cli_mt 3.8
# writes the client-id file but its reader discards it), reconfig, read-only
# mode, SASL.
#
# Environment: CLI_MT (default /usr/lib/zookeeper/bin/cli_mt),
# WAIT_SECS (per-answer timeout, default 30).

set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"

if [ $# -ne 1 ]; then
	echo "usage: $0 HOST:PORT" >&2
	exit 2
fi
ADDR=$1
CLI_MT=${CLI_MT:-/usr/lib/zookeeper/bin/cli_mt}
if [ ! -x "$CLI_MT" ]; then
	echo "FAIL: cli_mt_session: $CLI_MT is not executable (install Debian's zookeeper-bin package)" >&2
	exit 2
fi

lib_init cli_mt_session
R=/climt-$$-$RANDOM

# climt ID: start a shell. stdbuf makes "myid" (printed on stdout) line
# buffered; everything else goes to unbuffered stderr.
climt() {
	client_start "$1" 'delete /%s' '^/%s: rc = -101$' -- stdbuf -oL "$CLI_MT" -h "$ADDR"
}

# created PATH [NAME]: the last command created PATH (named NAME).
created() {
	expect "^\[$1\]: rc = 0\$" "create $1 should succeed"
	expect "^	name = ${2:-$1}\$" "create $1 should return the name ${2:-$1}"
}

say "== cli_mt session against $ADDR, root $R"
climt A
climt B

say "== create: every mode"
run A "create $R"
created "$R"
run A "myid"
expect "^session Id = [0-9a-f]+\$"
[[ $OUT =~ session\ Id\ =\ ([0-9a-f]+) ]] || fail "no session id in: $OUT"
SID=${BASH_REMATCH[1]}
[ "$SID" != 0 ] || fail "session id is 0 after a successful create"
say "   (session id $SID)"
run A "create +e $R/e"
created "$R/e"
run A "create +s $R/s-"
created "$R/s-" "$R/s-0000000001"
run A "create +es $R/es-"
created "$R/es-" "$R/es-0000000002"
run A "create +c $R/c"
created "$R/c"
run A "create +t=600000 $R/t"
created "$R/t"
run A "create +st=600000 $R/st-"
created "$R/st-" "$R/st-0000000005"
run A "create2 $R/c2"
created "$R/c2"
expect "^	version=0	aversion=0\$" "create2 should return the new node's stat"
expect "^	ephemeralOwner = 0\$"

say "== create: errors"
run A "create $R"
expect "^\[$R\]: rc = -110\$" "creating an existing node should fail with NodeExists (-110)"
run A "create $R/e/x"
expect "^\[$R/e/x\]: rc = -108\$" "an ephemeral cannot have children (-108)"
run A "create $R/none/x"
expect "^\[$R/none/x\]: rc = -101\$" "a missing parent is NoNode (-101)"

say "== get, set"
run A "get $R/e"
expect "^$R/e: rc = 0\$"
expect "^ value_len = 3\$"
expect "^new\$"
expect "^	ephemeralOwner = $SID\$" "an ephemeral's owner is its session"
run A "get $R/c"
expect "^$R/c: rc = 0\$"
expect "^	ephemeralOwner = 0\$" "containers show ephemeralOwner 0"
run A "get $R/t"
expect "^	ephemeralOwner = 0\$" "TTL nodes show ephemeralOwner 0"
run A "get $R/none"
expect "^$R/none: rc = -101\$"
run A "set $R/s-0000000001 hello"
expect "^$R/s-0000000001: rc = 0 Stat:\$"
expect "^	version=1	aversion=0\$"
run A "get $R/s-0000000001"
expect "^ value_len = 5\$"
expect "^hello\$"
run A "set $R/none x"
expect "^$R/none: rc = -101 Stat:\$"
run A "set /zookeeper/config x"
expect "^/zookeeper/config: rc = -102 Stat:\$" "/zookeeper/config is read-only for everyone (NoAuth, -102)"

say "== ls, ls2, exists"
run A "ls $R"
expect "^$R: rc = 0\$"
for n in e s-0000000001 es-0000000002 c t st-0000000005 c2; do
	expect "^	$n\$" "ls should list $n"
done
run A "ls2 $R"
expect "^$R: rc = 0\$"
expect "^	c2\$"
expect "^	version=0	aversion=0\$" "ls2 should return the parent's stat"
run A "ls $R/none"
expect "^$R/none: rc = -101\$"
run A "exists $R"
expect_not "Error" "exists on an existing node should succeed"
run A "exists $R/none"
expect "^Error -101 for $R/none\$"

say "== watches (get, ls and exists leave watches in cli_mt)"
run B "get $R/s-0000000001"
expect "^hello\$"
run B "ls $R"
expect "^$R: rc = 0\$"
run B "wexists $R/w"
expect "^Error -101 for $R/w\$"
b0=$(log_lines B)
run A "set $R/s-0000000001 again"
run A "create $R/w"
created "$R/w"
await B "$b0" "^Watcher CHANGED_EVENT state = CONNECTED_STATE for path $R/s-0000000001\$" "get should leave a data watch"
await B "$b0" "^Watcher CHILD_EVENT state = CONNECTED_STATE for path $R\$" "ls should leave a child watch"
await B "$b0" "^Watcher CREATED_EVENT state = CONNECTED_STATE for path $R/w\$" "wexists should leave an exists watch"
run B "get $R/w"
b1=$(log_lines B)
run A "delete $R/w"
expect "^$R/w: rc = 0\$"
await B "$b1" "^Watcher DELETED_EVENT state = CONNECTED_STATE for path $R/w\$" "deleting a watched node should fire DELETED_EVENT"

say "== sync, config, addauth"
run A "sync $R"
expect "^\[$R\]: rc = 0\$"
expect "^	name = $R\$"
run A "config"
expect "^/zookeeper/config: rc = 0\$" "getConfig should succeed"
run A "addauth digest alice:secret"
run A "get $R"
expect "^$R: rc = 0\$" "the session should work after digest auth"
expect_not "AUTH_FAILED|Authentication failure"

say "== delete"
run A "delete $R"
expect "^$R: rc = -111\$" "deleting a node with children is NotEmpty (-111)"
run A "delete $R/s-0000000001"
expect "^$R/s-0000000001: rc = 0\$"
run A "delete $R/s-0000000001"
expect "^$R/s-0000000001: rc = -101\$"

say "== close: ephemerals go with the session"
client_stop A quit
run B "exists $R/e"
expect "^Error -101 for $R/e\$" "ephemerals should be deleted when their session closes"
run B "exists $R/es-0000000002"
expect "^Error -101 for $R/es-0000000002\$"
for n in c t st-0000000005 c2; do
	run B "delete $R/$n"
	expect "^$R/$n: rc = 0\$"
done
run B "delete $R"
expect "^$R: rc = 0\$"
run B "exists $R"
expect "^Error -101 for $R\$"
client_stop B quit

say "== an unknown auth scheme fails the session"
climt C
run C "get /"
expect "^/: rc = 0\$"
c0=$(log_lines C)
send C "addauth nosuchscheme whatever"
say "[C] > addauth nosuchscheme whatever"
await C "$c0" "AUTH_FAILED_STATE|Authentication failure" "an unknown auth scheme should end in AUTH_FAILED"
client_kill C

say "PASS: cli_mt_session"
