#!/usr/bin/env bash
# zkcli_session.sh HOST:PORT
#
# Drives Apache ZooKeeper's Java shell (zkCli.sh, ZooKeeperMain) against the
# server at HOST:PORT, with commands fed on stdin to long-running shells, and
# checks every answer. Prints a transcript; exits 1 with "FAIL: ..." on the
# first unexpected answer, 2 on a usage or setup error.
#
# zkCli.sh does not set its exit status on command errors, so answers are
# checked by matching its output. The server must have extended types (TTL)
# enabled and the super digest super:test (zktest's defaults).
#
# Environment: ZKCLI (default /usr/share/zookeeper/bin/zkCli.sh),
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
ZKCLI=${ZKCLI:-/usr/share/zookeeper/bin/zkCli.sh}
if [ ! -x "$ZKCLI" ]; then
	echo "FAIL: zkcli_session: $ZKCLI is not executable (install Debian's zookeeper package)" >&2
	exit 2
fi
# A small, quick JVM for the shell; zkEnv.sh passes CLIENT_JVMFLAGS through.
export CLIENT_JVMFLAGS="-Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-UsePerfData"

lib_init zkcli_session
R=/zkcli-$$-$RANDOM
# base64(sha1("alice:secret")), the digest ACL id of alice:secret.
ALICE_DIGEST='aYXlLOpEooaV1cRAvUL1fp9Qt7E='

# zkcli ID: start a shell; the marker is a stat of a node that never exists.
zkcli() {
	client_start "$1" 'stat /%s' '^Node does not exist: /%s$' -- "$ZKCLI" -server "$ADDR"
}

say "== zkCli.sh session against $ADDR, root $R"
zkcli A
zkcli B
zkcli W

say "== create: every mode"
run A "create $R rootdata"
expect "^Created $R\$"
run A "create -e $R/eph edata"
expect "^Created $R/eph\$"
run A "create -s $R/seq- sdata"
expect "^Created $R/seq-0000000001\$" "sequential suffix should be the parent's create count, %010d"
run A "create -e -s $R/eseq- esdata"
expect "^Created $R/eseq-0000000002\$"
run A "create -c $R/cont"
expect "^Created $R/cont\$"
run A "create -t 600000 $R/ttl tdata"
expect "^Created $R/ttl\$"
run A "create -s -t 600000 $R/sttl-"
expect "^Created $R/sttl-0000000005\$"
run A "create $R/ro rodata world:anyone:r"
expect "^Created $R/ro\$"

say "== create: errors"
run A "create $R again"
expect "^Node already exists: $R\$"
run A "create $R/eph/child"
expect "^Ephemerals cannot have children: $R/eph/child\$"
run A "create $R/missing/child"
expect "^Node does not exist: $R/missing/child\$"
run A "create $R/ro/child"
expect "^Insufficient permission : $R/ro/child\$"

say "== ls, ls -s, ls -R"
run A "ls $R"
expect "^\[cont, eph, eseq-0000000002, ro, seq-0000000001, sttl-0000000005, ttl\]\$"
run A "ls -s $R"
expect "^numChildren = 7\$"
expect "^cversion = 7\$"
expect "^dataLength = 8\$"
run A "ls -R $R"
for n in cont eph eseq-0000000002 ro seq-0000000001 sttl-0000000005 ttl; do
	expect "^$R/$n\$" "ls -R should list $R/$n"
done
run A "ls $R/nope"
expect "^Node does not exist: $R/nope\$"

say "== get -s, stat"
run A "get -s $R/eph"
expect "^edata\$"
expect "^dataVersion = 0\$"
expect "^ephemeralOwner = 0x[1-9a-f][0-9a-f]*\$" "an ephemeral's owner is its session"
run A "get -s $R/cont"
expect "^null\$" "a node created without data reads back as null"
expect "^ephemeralOwner = 0x0\$" "containers show ephemeralOwner 0"
run A "get -s $R/ttl"
expect "^tdata\$"
expect "^ephemeralOwner = 0x0\$" "TTL nodes show ephemeralOwner 0"
run A "get $R/nope"
expect "^Node does not exist: $R/nope\$"
run A "stat $R"
expect "^numChildren = 7\$"
expect "^cZxid = 0x[0-9a-f]+\$"
expect "^pZxid = 0x[0-9a-f]+\$"
run A "stat $R/nope"
expect "^Node does not exist: $R/nope\$"

say "== set with versions"
run A "set -v 0 $R/eph v1"
expect_not "version No is not valid|Exception"
run A "set -v 0 $R/eph v2"
expect "^version No is not valid : $R/eph\$" "set with a stale version should fail with BadVersion"
run A "set -s $R/eph v3"
expect "^dataVersion = 2\$"
expect "^dataLength = 2\$"
run A "get $R/eph"
expect "^v3\$"
run A "set $R/nope x"
expect "^Node does not exist: $R/nope\$"
run A "set $R/ro x"
expect "^Insufficient permission : $R/ro\$"

say "== getAcl, setAcl"
run A "getAcl $R"
expect "^'world,'anyone\$"
expect "^: cdrwa\$"
run A "getAcl -s $R/ro"
expect "^: r\$"
expect "^aclVersion = 0\$"
run A "setAcl -v 7 $R world:anyone:cdrwa"
expect "^version No is not valid : $R\$"
run A "setAcl -s $R/cont world:anyone:crwa"
expect "^aclVersion = 1\$"
run A "getAcl $R/cont"
expect "^: crwa\$"

say "== digest ACLs, addauth, whoami"
run A "create $R/alice adata digest:alice:$ALICE_DIGEST:cdrwa"
expect "^Created $R/alice\$"
run A "get $R/alice"
expect "^Insufficient permission : $R/alice\$"
run A "whoami"
expect "^ip: 127.0.0.1\$"
expect_not "^digest:"
run A "addauth digest alice:secret"
expect_not "Exception|failed"
run A "get $R/alice"
expect "^adata\$"
run A "getAcl $R/alice"
expect "^'digest,'alice:$ALICE_DIGEST\$"
run A "whoami"
expect "^digest: alice\$"
run A "create $R/mine mdata"
run A "setAcl $R/mine auth::cdrwa"
run A "getAcl $R/mine"
expect "^'digest,'alice:$ALICE_DIGEST\$" "auth:: should expand to the session's digest identity"
run B "get $R/mine"
expect "^Insufficient permission : $R/mine\$"
run B "addauth digest super:test"
run B "get $R/mine"
expect "^mdata\$" "the super digest should bypass ACLs"
run B "whoami"
expect "^digest: super\$"
run B "set $R/ro super-was-here"
expect_not "Insufficient permission"

say "== delete with versions"
run A "delete -v 5 $R/seq-0000000001"
expect "^version No is not valid : $R/seq-0000000001\$"
run A "delete -v 0 $R/seq-0000000001"
expect_not "version No is not valid|Node does not exist|Exception"
run A "stat $R/seq-0000000001"
expect "^Node does not exist: $R/seq-0000000001\$"
run A "delete $R"
expect "^Node not empty: $R\$"
run A "delete $R/nope"
expect "^Node does not exist: $R/nope\$"

say "== sync, getEphemerals, getAllChildrenNumber"
run A "sync $R"
expect "^Sync is OK\$"
run A "getEphemerals $R"
expect "$R/eph" "getEphemerals should list $R/eph"
expect "$R/eseq-0000000002" "getEphemerals should list $R/eseq-0000000002"
run B "getEphemerals $R"
expect "^\[\]\$" "another session owns no ephemerals"
run A "getAllChildrenNumber $R"
expect "^8\$" "$R has 8 descendants"

say "== quotas"
run A "setquota -n 100 $R"
expect_not "Exception|KeeperErrorCode"
run A "listquota $R"
expect "^Output quota for $R count=100,bytes=-1"
expect "^Output stat for $R count=9,bytes=[0-9]+\$" "the quota's stat should count $R and its 8 descendants"
run A "delquota -n $R"
run A "listquota $R"
expect "^Output quota for $R count=-1,bytes=-1"
expect "^Output stat for $R count=9,"
run A "delquota $R"
run A "listquota $R"
expect "^quota for $R does not exist.\$"

say "== watches: one-shot, persistent, persistent recursive, removal"
run A "create $R/g gdata"
run A "create $R/l"
run A "create $R/p"
run W "get -w $R/g"
expect "^gdata\$"
run W "ls -w $R/l"
expect "^\[\]\$"
run W "stat -w $R/s"
expect "^Node does not exist: $R/s\$"
run W "addWatch -m PERSISTENT $R/p"
run W "addWatch -m PERSISTENT_RECURSIVE $R/w"
expect_not "Exception|KeeperErrorCode"
w0=$(log_lines W)
run A "set $R/g g1"
run A "set $R/g g2"
run A "create $R/l/x"
run A "create $R/s"
run A "set $R/p p1"
run A "create $R/p/c"
run A "set $R/p p2"
run A "create $R/w"
run A "create $R/w/a"
run A "create $R/w/a/b"
run A "set $R/w/a/b bdata"
run A "delete $R/w/a/b"
await W "$w0" "type:NodeDataChanged path:$R/g\$" "get -w should fire NodeDataChanged"
await W "$w0" "type:NodeChildrenChanged path:$R/l\$" "ls -w should fire NodeChildrenChanged"
await W "$w0" "type:NodeCreated path:$R/s\$" "stat -w on a missing node should fire NodeCreated"
await W "$w0" "type:NodeChildrenChanged path:$R/p\$" "a persistent watch should see child changes"
await W "$w0" "type:NodeCreated path:$R/w\$" "a recursive watch should see its own path created"
await W "$w0" "type:NodeCreated path:$R/w/a/b\$" "a recursive watch should see descendants created"
await W "$w0" "type:NodeDataChanged path:$R/w/a/b\$" "a recursive watch should see descendants change"
await W "$w0" "type:NodeDeleted path:$R/w/a/b\$" "a recursive watch should see descendants deleted"
# Everything up to the last event has arrived; now count.
n=$(count_after W "$w0" "type:NodeDataChanged path:$R/g\$")
[ "$n" -eq 1 ] || fail "one-shot data watch fired $n times, want 1"
n=$(count_after W "$w0" "type:NodeDataChanged path:$R/p\$")
[ "$n" -eq 2 ] || fail "persistent watch saw $n data changes of $R/p, want 2"
n=$(count_after W "$w0" "type:NodeCreated path:$R/p/c\$")
[ "$n" -eq 0 ] || fail "a persistent (non-recursive) watch must not see grandchildren events"
n=$(count_after W "$w0" "type:NodeChildrenChanged path:$R/w")
[ "$n" -eq 0 ] || fail "a persistent recursive watch must not fire NodeChildrenChanged"
w1=$(log_lines W)
run W "removewatches $R/p"
await W "$w1" "type:PersistentWatchRemoved path:$R/p\$" "removewatches should report PersistentWatchRemoved"
run W "removewatches $R/never-watched"
expect "No such watcher" "removing a watch that does not exist should fail with NoWatcher"

say "== config, version"
run A "config"
expect_not "Exception|KeeperErrorCode"
run A "version"
expect "ZooKeeper CLI version"

say "== close: ephemerals go with the session"
client_stop A quit
run B "stat $R/eph"
expect "^Node does not exist: $R/eph\$" "ephemerals should be deleted when their session closes"
run B "ls $R"
expect_not "eph" "no ephemerals should remain"

say "== deleteall"
run B "deleteall $R"
expect_not "Failed|Exception"
run B "stat $R"
expect "^Node does not exist: $R\$"

client_stop W quit
client_stop B quit
say "PASS: zkcli_session"
