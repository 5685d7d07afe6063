#!/usr/bin/python3
"""kazoo_session.py HOST:PORT

Exercises the kazoo Python client (Debian's python3-kazoo 2.8) against the
ZooKeeper-compatible server at HOST:PORT, checking every result. Prints a
transcript; exits 1 with "FAIL: ..." on the first unexpected result, 2 on a
usage error. Run it with /usr/bin/python3 (the interpreter kazoo is
installed for).

The server must enable the "envi" four-letter word (kazoo's server_version
reads it) and have the super digest super:test. Not covered, because kazoo
2.8 lacks them: container and TTL nodes, persistent watches. Not covered
because they need more than one standalone server or a JAAS setup:
reconfig, read-only mode, SASL.

Internal mode: "kazoo_session.py --hold-ephemeral HOST:PORT PATH" creates
an ephemeral node, prints "SESSION <id> <password hex>" and waits to be
killed; the main session uses it to resume a session by id and password.
"""

import logging
import os
import signal
import subprocess
import sys
import threading
import uuid

from kazoo.client import KazooClient
from kazoo.exceptions import (
    BadVersionError,
    InvalidACLError,
    NoAuthError,
    NoChildrenForEphemeralsError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    RolledBackError,
    RuntimeInconsistency,
)
from kazoo.protocol.states import EventType, KazooState
from kazoo.security import (
    OPEN_ACL_UNSAFE,
    READ_ACL_UNSAFE,
    make_acl,
    make_digest_acl,
)

WAIT = 20.0  # seconds to wait for any single event
SESSION_TIMEOUT = 10.0


class SessionFailure(Exception):
    """An unexpected result."""


def say(msg):
    print(msg, flush=True)


def check(cond, msg):
    if not cond:
        raise SessionFailure(msg)


def check_eq(got, want, what):
    if got != want:
        raise SessionFailure("%s: got %r, want %r" % (what, got, want))


def raises(exc, fn, *args, **kwargs):
    """fn(*args, **kwargs) must raise exc."""
    try:
        result = fn(*args, **kwargs)
    except exc as e:
        say("    %s(%s) raised %s as expected" % (fn.__name__, ", ".join(repr(a) for a in args), type(e).__name__))
        return e
    raise SessionFailure("%s%r returned %r, want %s" % (fn.__name__, args, result, exc.__name__))


def wait(event, what):
    if not event.wait(WAIT):
        raise SessionFailure("timed out after %.0fs waiting for %s" % (WAIT, what))
    say("    saw %s" % what)


class Recorder:
    """Collects callback calls and lets the caller wait for a condition."""

    def __init__(self):
        self.cond = threading.Condition()
        self.calls = []

    def __call__(self, *args):
        with self.cond:
            self.calls.append(args)
            self.cond.notify_all()

    def wait_for(self, pred, what):
        with self.cond:
            if not self.cond.wait_for(lambda: pred(self.calls), WAIT):
                raise SessionFailure("timed out waiting for %s; calls so far: %r" % (what, self.calls))
        say("    saw %s" % what)


def client(addr, **kwargs):
    zk = KazooClient(hosts=addr, timeout=SESSION_TIMEOUT, **kwargs)
    zk.start(timeout=WAIT)
    return zk


def section(title):
    say("== " + title)


def basics(zk, addr, root):
    section("connect, four-letter words, server_version")
    check(zk.connected, "client should be connected")
    check_eq(zk.state, KazooState.CONNECTED, "state")
    sid, pwd = zk.client_id
    check(sid != 0 and len(pwd) == 16, "client_id should be a session id and a 16-byte password: %r" % (zk.client_id,))
    say("    session 0x%x" % sid)
    check_eq(zk.command(b"ruok"), "imok", "ruok")
    check("Mode:" in zk.command(b"srvr"), "srvr should report the server mode")
    check("zookeeper.version=" in zk.command(b"envi"), "envi should report zookeeper.version")
    version = zk.server_version()
    say("    server_version() = %r" % (version,))
    check(len(version) >= 2 and version >= (3, 5), "server_version should be at least 3.5: %r" % (version,))

    section("create: modes and results")
    check_eq(zk.create(root, b"root"), root, "create returns the path")
    check_eq(zk.create(root + "/p", b"pdata"), root + "/p", "create persistent")
    e = zk.create(root + "/e", b"edata", ephemeral=True)
    check_eq(e, root + "/e", "create ephemeral")
    s = zk.create(root + "/s-", b"sdata", sequence=True)
    check_eq(s, root + "/s-0000000002", "sequential suffix is the parent's create count")
    es = zk.create(root + "/es-", b"", ephemeral=True, sequence=True)
    check_eq(es, root + "/es-0000000003", "ephemeral sequential")
    path, stat = zk.create(root + "/deep/er/node", b"d", makepath=True, include_data=True)
    check_eq(path, root + "/deep/er/node", "makepath")
    check_eq((stat.version, stat.dataLength, stat.numChildren), (0, 1, 0), "create2 stat")
    zk.ensure_path(root + "/ensured/a/b")
    check(zk.exists(root + "/ensured/a/b") is not None, "ensure_path should create the path")
    check_eq(zk.ensure_path(root + "/ensured/a/b"), True, "ensure_path on an existing path")

    say("    errors:")
    raises(NodeExistsError, zk.create, root + "/p")
    raises(NoNodeError, zk.create, root + "/missing/child")
    raises(NoChildrenForEphemeralsError, zk.create, e + "/child")
    raises(InvalidACLError, zk.create, root + "/authacl", b"", acl=[make_acl("auth", "", all=True)])

    section("get, set, exists, versions")
    data, stat = zk.get(root + "/p")
    check_eq(data, b"pdata", "get data")
    check_eq((stat.version, stat.dataLength, stat.ephemeralOwner), (0, 5, 0), "persistent stat")
    data, stat = zk.get(e)
    check_eq(stat.ephemeralOwner, sid, "ephemeralOwner of an ephemeral")
    stat = zk.set(root + "/p", b"v1", version=0)
    check_eq(stat.version, 1, "set bumps the version")
    check(stat.mzxid > stat.czxid, "set should move mzxid past czxid")
    raises(BadVersionError, zk.set, root + "/p", b"v2", version=0)
    check_eq(zk.set(root + "/p", b"v2").version, 2, "unconditional set")
    raises(NoNodeError, zk.set, root + "/missing", b"x")
    raises(NoNodeError, zk.get, root + "/missing")
    check(zk.exists(root + "/missing") is None, "exists of a missing node is None")
    stat = zk.exists(root)
    check_eq(stat.numChildren, 6, "numChildren of the root")
    check_eq(stat.cversion, 6, "cversion counts child creations")
    big = os.urandom(512 * 1024)
    zk.create(root + "/big", big)
    check(zk.get(root + "/big")[0] == big, "a 512 KiB value should read back unchanged")
    data, stat = zk.get_async(root + "/p").get(timeout=WAIT)
    check_eq(data, b"v2", "get_async")

    section("get_children")
    children = zk.get_children(root)
    check_eq(sorted(children), sorted(["p", "e", "s-0000000002", "es-0000000003", "deep", "ensured", "big"]), "children")
    children, stat = zk.get_children(root, include_data=True)
    check_eq(stat.numChildren, len(children), "get_children include_data stat")
    raises(NoNodeError, zk.get_children, root + "/missing")

    section("delete, versions, recursive")
    raises(BadVersionError, zk.delete, s, version=5)
    zk.delete(s, version=0)
    check(zk.exists(s) is None, "deleted node should be gone")
    raises(NoNodeError, zk.delete, s)
    raises(NotEmptyError, zk.delete, root + "/deep")
    zk.delete(root + "/deep", recursive=True)
    check(zk.exists(root + "/deep") is None, "recursive delete should remove the subtree")
    check_eq(zk.sync(root), root, "sync returns the path")


def acls(zk, addr, root):
    section("ACLs, digest auth, super user")
    alice = make_digest_acl("alice", "secret", all=True)
    path = zk.create(root + "/alice", b"adata", acl=[alice])
    raises(NoAuthError, zk.get, path)
    raises(NoAuthError, zk.set, path, b"x")
    zk.add_auth("digest", "alice:secret")
    check_eq(zk.get(path)[0], b"adata", "get after add_auth")
    acl_list, stat = zk.get_acls(path)
    check_eq(len(acl_list), 1, "one ACL entry")
    check_eq((acl_list[0].id.scheme, acl_list[0].id.id), ("digest", alice.id.id), "ACL id")
    check_eq(acl_list[0].perms, 31, "ACL perms ALL")
    check_eq(stat.aversion, 0, "aversion before set_acls")
    raises(BadVersionError, zk.set_acls, path, [alice] + list(READ_ACL_UNSAFE), version=3)
    stat = zk.set_acls(path, [alice] + list(READ_ACL_UNSAFE), version=0)
    check_eq(stat.aversion, 1, "set_acls bumps aversion")

    ro = zk.create(root + "/ro", b"r", acl=READ_ACL_UNSAFE)
    raises(NoAuthError, zk.create, ro + "/child")
    own = zk.create(root + "/own", b"o", acl=[make_acl("auth", "", all=True)])
    check_eq(zk.get_acls(own)[0][0].id.id, alice.id.id, "auth ACL expands to the session's digest id")

    other = client(addr)
    try:
        check_eq(other.get(ro)[0], b"r", "world-readable node")
        raises(NoAuthError, other.get, own)
        raises(NoAuthError, other.set, ro, b"x")
    finally:
        other.stop()
        other.close()
    sup = client(addr, auth_data=[("digest", "super:test")])
    try:
        check_eq(sup.get(own)[0], b"o", "super reads any node")
        sup.set(ro, b"super was here")
        sup.create(ro + "/child")
        check(sup.exists(ro + "/child") is not None, "super creates under a read-only node")
    finally:
        sup.stop()
        sup.close()


def transactions(zk, root):
    section("transactions (multi)")
    base = zk.create(root + "/txn", b"t0")
    t = zk.transaction()
    t.create(base + "/a", b"a")
    t.set_data(base, b"t1", version=0)
    t.check(base, 1)
    t.create(base + "/b-", b"b", sequence=True)
    t.delete(base + "/a")
    results = t.commit()
    say("    committed: %r" % (results,))
    check_eq(len(results), 5, "one result per op")
    check_eq(results[0], base + "/a", "create result")
    check_eq(results[1].version, 1, "set_data result")
    check_eq(results[2], True, "check result")
    check_eq(results[3], base + "/b-0000000001", "sequential create in a transaction")
    check_eq(results[4], True, "delete result")
    check_eq(zk.get(base)[0], b"t1", "transaction applied")

    t = zk.transaction()
    t.create(base + "/never", b"x")
    t.check(base, 0)  # wrong: the version is 1
    t.set_data(base, b"t2")
    results = t.commit()
    say("    failed commit: %r" % (results,))
    check(isinstance(results[0], RolledBackError), "ops before the failure roll back: %r" % (results,))
    check(isinstance(results[1], BadVersionError), "the failing check reports BadVersion: %r" % (results,))
    check(isinstance(results[2], RuntimeInconsistency), "ops after the failure report RuntimeInconsistency: %r" % (results,))
    check(zk.exists(base + "/never") is None, "a failed transaction applies nothing")
    check_eq(zk.get(base)[0], b"t1", "data unchanged after a failed transaction")


def watches(zk, addr, root):
    section("watches: get, exists, get_children, DataWatch, ChildrenWatch")
    base = zk.create(root + "/w", b"w0")
    other = client(addr)
    try:
        changed = threading.Event()
        seen = []

        def on_get(event):
            seen.append(event)
            changed.set()

        zk.get(base, watch=on_get)
        other.set(base, b"w1")
        wait(changed, "NodeDataChanged from a get watch")
        check_eq((seen[0].type, seen[0].path), (EventType.CHANGED, base), "get watch event")

        created = threading.Event()
        ev_created = []
        check(zk.exists(base + "/x", watch=lambda ev: (ev_created.append(ev), created.set())) is None,
              "exists of a missing node")
        other.create(base + "/x")
        wait(created, "NodeCreated from an exists watch")
        check_eq((ev_created[0].type, ev_created[0].path), (EventType.CREATED, base + "/x"), "exists watch event")

        child = threading.Event()
        ev_child = []
        zk.get_children(base, watch=lambda ev: (ev_child.append(ev), child.set()))
        other.create(base + "/y")
        wait(child, "NodeChildrenChanged from a get_children watch")
        check_eq((ev_child[0].type, ev_child[0].path), (EventType.CHILD, base), "child watch event")

        deleted = threading.Event()
        ev_del = []
        zk.get(base + "/y", watch=lambda ev: (ev_del.append(ev), deleted.set()))
        other.delete(base + "/y")
        wait(deleted, "NodeDeleted from a get watch")
        check_eq(ev_del[0].type, EventType.DELETED, "delete watch event")

        data_rec = Recorder()
        zk.DataWatch(base + "/dw", func=lambda data, stat: data_rec(data))
        data_rec.wait_for(lambda c: c and c[-1] == (None,), "DataWatch initial call for a missing node")
        other.create(base + "/dw", b"d1")
        data_rec.wait_for(lambda c: c[-1] == (b"d1",), "DataWatch on create")
        other.set(base + "/dw", b"d2")
        data_rec.wait_for(lambda c: c[-1] == (b"d2",), "DataWatch on set")
        other.delete(base + "/dw")
        data_rec.wait_for(lambda c: len(c) >= 4 and c[-1] == (None,), "DataWatch on delete")

        kids = Recorder()
        zk.ChildrenWatch(base, func=lambda ch: kids(sorted(ch)))
        kids.wait_for(lambda c: c and c[-1] == (["x"],), "ChildrenWatch initial children")
        other.create(base + "/z")
        kids.wait_for(lambda c: c[-1] == (["x", "z"],), "ChildrenWatch on create")
        other.delete(base + "/x")
        kids.wait_for(lambda c: c[-1] == (["z"],), "ChildrenWatch on delete")
    finally:
        other.stop()
        other.close()


def recipes(zk, root):
    section("recipes: Lock, Counter, Queue, Barrier, Party")
    lock = zk.Lock(root + "/lock", "me")
    check(lock.acquire(timeout=WAIT), "lock acquire")
    check_eq(zk.Lock(root + "/lock", "other").acquire(blocking=False), False, "a held lock is not acquirable")
    check_eq(len(lock.contenders()), 1, "one lock contender")
    lock.release()
    counter = zk.Counter(root + "/counter")
    counter += 5
    counter -= 2
    check_eq(counter.value, 3, "counter value")
    queue = zk.Queue(root + "/queue")
    queue.put(b"one")
    queue.put(b"two")
    check_eq(len(queue), 2, "queue length")
    check_eq(queue.get(), b"one", "queue is FIFO")
    barrier = zk.Barrier(root + "/barrier")
    barrier.create()
    check_eq(barrier.wait(timeout=0.1), False, "a raised barrier blocks")
    barrier.remove()
    check_eq(barrier.wait(timeout=WAIT), True, "a removed barrier lets through")
    party = zk.Party(root + "/party", "me")
    party.join()
    check_eq(len(party), 1, "party size")
    party.leave()


def hold_ephemeral(addr, path):
    """Child mode: create an ephemeral, report the session, wait to die."""
    zk = client(addr)
    zk.create(path, b"held", ephemeral=True)
    sid, pwd = zk.client_id
    print("SESSION %d %s" % (sid, pwd.hex()), flush=True)
    sys.stdin.read()  # the parent kills us; EOF means it went away
    zk.stop()
    zk.close()


def resume_session(zk, addr, root):
    section("resume a session by id and password")
    path = root + "/held"
    child = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--hold-ephemeral", addr, path],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        line = read_line(child.stdout)
    finally:
        os.kill(child.pid, signal.SIGKILL)  # no session close: the session lives on
        child.wait()
        child.stdin.close()
        child.stdout.close()
    parts = line.split()
    check(len(parts) == 3 and parts[0] == "SESSION", "child should report its session, got %r" % line)
    sid, pwd = int(parts[1]), bytes.fromhex(parts[2])
    say("    child session 0x%x killed" % sid)
    check_eq(zk.exists(path).ephemeralOwner, sid, "the ephemeral outlives its killed client")

    resumed = KazooClient(hosts=addr, timeout=SESSION_TIMEOUT, client_id=(sid, pwd))
    resumed.start(timeout=WAIT)
    try:
        check_eq(resumed.client_id[0], sid, "resumed session id")
        check_eq(resumed.get(path)[0], b"held", "resumed session reads its node")
        resumed.set(path, b"resumed")
    finally:
        resumed.stop()
        resumed.close()
    check(zk.exists(path) is None, "closing the resumed session deletes its ephemeral")


def read_line(stream):
    """Reads one line from a child's stdout, with a timeout."""
    box = []
    t = threading.Thread(target=lambda: box.append(stream.readline()), daemon=True)
    t.start()
    t.join(WAIT)
    if not box:
        raise SessionFailure("child printed nothing within %.0fs" % WAIT)
    return box[0]


def chroot(zk, addr, root):
    section("chroot client")
    zk.ensure_path(root + "/chroot")
    zk = client(addr + root + "/chroot")
    try:
        zk.create("/inside", b"c")
        check_eq(zk.get_children("/"), ["inside"], "children under the chroot")
    finally:
        zk.stop()
        zk.close()


def main(argv):
    if len(argv) == 4 and argv[1] == "--hold-ephemeral":
        hold_ephemeral(argv[2], argv[3])
        return 0
    if len(argv) != 2:
        print("usage: %s HOST:PORT" % argv[0], file=sys.stderr)
        return 2
    addr = argv[1]
    logging.basicConfig(level=logging.ERROR, stream=sys.stderr)
    root = "/kazoo-%s" % uuid.uuid4().hex[:12]
    say("== kazoo session against %s, root %s" % (addr, root))
    states = Recorder()
    zk = KazooClient(hosts=addr, timeout=SESSION_TIMEOUT)
    zk.add_listener(states)
    try:
        zk.start(timeout=WAIT)
        basics(zk, addr, root)
        acls(zk, addr, root)
        transactions(zk, root)
        watches(zk, addr, root)
        recipes(zk, root)
        resume_session(zk, addr, root)
        chroot(zk, addr, root)
        check(zk.exists(root + "/chroot/inside") is not None, "chroot client writes under its root")

        section("close: ephemerals go with the session")
        sup = client(addr, auth_data=[("digest", "super:test")])
        try:
            zk.stop()
            states.wait_for(lambda c: (KazooState.LOST,) in c, "LOST state after stop")
            zk.close()
            check(sup.exists(root + "/e") is None, "ephemeral deleted when its session closed")
            check(sup.exists(root + "/es-0000000003") is None, "ephemeral sequential deleted too")
            sup.delete(root, recursive=True)
            check(sup.exists(root) is None, "cleanup")
        finally:
            sup.stop()
            sup.close()
    except SessionFailure as e:
        say("")
        say("FAIL: kazoo_session: %s" % e)
        return 1
    except Exception as e:  # an unexpected exception is a failure too
        say("")
        say("FAIL: kazoo_session: unexpected %s: %s" % (type(e).__name__, e))
        raise
    finally:
        zk.stop()
        zk.close()
    say("PASS: kazoo_session")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
