package recipe

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/zk"
)

// signal is a Watcher that wakes one waiter on any event: a watch firing or
// a change of session state. Events coalesce: a waiter re-reads the state it
// waits on after every wake, so one pending wake stands for any number of
// events. It is a pointer, so the Conn merges its registrations on a path.
type signal struct{ c chan struct{} }

func newSignal() *signal { return &signal{c: make(chan struct{}, 1)} }

// Process never blocks the Conn's delivery goroutine.
func (s *signal) Process(zk.Event) {
	select {
	case s.c <- struct{}{}:
	default:
	}
}

// eventQueue is a Watcher that keeps every event, in order, for a goroutine
// that needs their paths and types (a hold's monitor, a tree cache). Process
// never blocks; the queue holds what the watches produce until it is read.
type eventQueue struct {
	mu   sync.Mutex
	evs  []zk.Event
	wake chan struct{}
}

func newEventQueue() *eventQueue { return &eventQueue{wake: make(chan struct{}, 1)} }

func (q *eventQueue) Process(e zk.Event) {
	q.mu.Lock()
	q.evs = append(q.evs, e)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take returns the events queued so far.
func (q *eventQueue) take() []zk.Event {
	q.mu.Lock()
	defer q.mu.Unlock()
	evs := q.evs
	q.evs = nil
	return evs
}

// closingQueue is an eventQueue that drops events once closed: the
// one-time watches a closed cache leaves fire into it once and are gone.
type closingQueue struct {
	eventQueue
	closed bool
}

func newClosingQueue() *closingQueue {
	return &closingQueue{eventQueue: eventQueue{wake: make(chan struct{}, 1)}}
}

func (q *closingQueue) Process(e zk.Event) {
	q.mu.Lock()
	closed := q.closed
	q.mu.Unlock()
	if !closed {
		q.eventQueue.Process(e)
	}
}

func (q *closingQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.evs = nil
	q.mu.Unlock()
}

// finalState reports whether a session state ends the Conn.
func finalState(s zk.State) bool {
	return s == zk.StateExpired || s == zk.StateClosed || s == zk.StateAuthFailed
}

// sessionOver reports whether err says the Conn can make no more calls.
func sessionOver(err error) bool {
	return errors.Is(err, zk.ErrSessionExpired) || errors.Is(err, zk.ErrClosed) || errors.Is(err, zk.ErrAuthFailed)
}

// stateError is the error a recipe reports for a final session state.
func stateError(s zk.State) error {
	switch s {
	case zk.StateExpired:
		return zk.ErrSessionExpired
	case zk.StateAuthFailed:
		return zk.ErrAuthFailed
	}
	return zk.ErrClosed
}

// join returns dir/name.
func join(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// base returns the last component of a path.
func base(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

// parent returns the parent of an absolute path ("/" for "/").
func parent(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// cleanPath trims a trailing slash ("/a/" is "/a"; "/" stays).
func cleanPath(p string) string {
	if len(p) > 1 {
		p = strings.TrimRight(p, "/")
		if p == "" {
			p = "/"
		}
	}
	return p
}

// ensurePath creates path and its missing ancestors as persistent znodes.
func ensurePath(ctx context.Context, conn *zk.Conn, path string, acl []zk.ACL) error {
	if path == "/" || path == "" {
		return nil
	}
	err := zk.Retry(ctx, func(ctx context.Context) error {
		_, err := conn.Create(ctx, path, nil, acl, zk.ModePersistent)
		return err
	})
	switch {
	case err == nil, errors.Is(err, zk.ErrNodeExists):
		return nil
	case errors.Is(err, zk.ErrNoNode):
		if err := ensurePath(ctx, conn, parent(path), acl); err != nil {
			return err
		}
		return ensurePath(ctx, conn, path, acl)
	}
	return err
}

// create makes a znode under dir, creating dir first if it is missing.
// Sequential znodes are made with CreateProtected, so that a connection
// loss does not leave a second one behind; other creates are retried on
// connection loss, and the caller handles ErrNodeExists.
//
// An ephemeral sequential create (a contender's node) is not abandoned when
// ctx ends: it goes on in the background and its node, if made, is deleted,
// so that a contender that gave up never leaves a node that would block the
// others until its session ends.
func create(ctx context.Context, conn *zk.Conn, path string, data []byte, acl []zk.ACL, mode zk.CreateMode) (string, error) {
	if mode != zk.ModeEphemeralSequential {
		return createParents(ctx, conn, path, data, acl, mode)
	}
	type result struct {
		name string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		name, err := createParents(context.WithoutCancel(ctx), conn, path, data, acl, mode)
		done <- result{name, err}
	}()
	select {
	case r := <-done:
		return r.name, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.err == nil {
				deleteOwn(context.Background(), conn, r.name)
			}
		}()
		return "", ctx.Err()
	}
}

func createParents(ctx context.Context, conn *zk.Conn, path string, data []byte, acl []zk.ACL, mode zk.CreateMode) (string, error) {
	do := func() (string, error) {
		if mode.IsSequential() {
			return conn.CreateProtected(ctx, path, data, acl, mode)
		}
		var name string
		err := zk.Retry(ctx, func(ctx context.Context) error {
			var err error
			name, err = conn.Create(ctx, path, data, acl, mode)
			return err
		})
		return name, err
	}
	name, err := do()
	if errors.Is(err, zk.ErrNoNode) {
		if err := ensurePath(ctx, conn, parent(path), acl); err != nil {
			return "", err
		}
		name, err = do()
	}
	return name, err
}

// protectedPrefix returns the "_c_<guid>-" prefix of a CreateProtected
// name ("" if it has none).
func protectedPrefix(name string) string {
	if given, ok := zk.ParseProtectedName(name); ok {
		return name[:len(name)-len(given)]
	}
	return ""
}

// sweep deletes the siblings of our node made by the same protected create
// (a create whose answer was lost and that a server applied after the
// look-up that did not find it), and returns the children without them.
// Left alone, such a twin would block the contenders after it until the
// session ends.
func sweep(ctx context.Context, conn *zk.Conn, dir, own string, children []string) []string {
	prefix := protectedPrefix(own)
	if prefix == "" {
		return children
	}
	out := children[:0:0]
	for _, c := range children {
		if c != own && strings.HasPrefix(c, prefix) {
			deleteNode(ctx, conn, join(dir, c))
			continue
		}
		out = append(out, c)
	}
	return out
}

// deleteNode deletes path, retrying on connection loss. A node that is
// gone, or a session that is over (expired, closed or failed
// authentication: its ephemerals go with it), is not an error.
func deleteNode(ctx context.Context, conn *zk.Conn, path string) error {
	err := zk.Retry(ctx, func(ctx context.Context) error { return conn.Delete(ctx, path, -1) })
	if err == nil || errors.Is(err, zk.ErrNoNode) || sessionOver(err) {
		return nil
	}
	return err
}

// deleteOwn deletes a participant's own node and its twins: siblings made
// by the same protected create that a server applied late, after the
// look-up that found or made the node (see sweep). A twin that appears
// while the participant holds would otherwise outlive the node, blocking
// the contenders after it, or showing as a candidate or a member, until the
// session ends. The twins go first, so that none is taken for the
// participant once its node is gone. Errors are deleteNode's.
func deleteOwn(ctx context.Context, conn *zk.Conn, path string) error {
	var err error
	if prefix := protectedPrefix(base(path)); prefix != "" {
		dir := parent(path)
		var children []string
		err = zk.Retry(ctx, func(ctx context.Context) error {
			var err error
			children, _, err = conn.Children(ctx, dir)
			return err
		})
		if errors.Is(err, zk.ErrNoNode) || sessionOver(err) {
			err = nil // no directory, or no session: no twin
		}
		for _, c := range children {
			if c != base(path) && strings.HasPrefix(c, prefix) {
				if derr := deleteNode(ctx, conn, join(dir, c)); derr != nil && err == nil {
					err = derr
				}
			}
		}
	}
	if derr := deleteNode(ctx, conn, path); derr != nil {
		return derr
	}
	return err
}

// abandon deletes a contender's own node that is no longer wanted (a wait
// given up, a TryLock that failed), even when ctx has ended: left behind,
// it would block the contenders after it until the session ends. It tries
// for up to the session timeout, then keeps trying in the background.
func abandon(ctx context.Context, conn *zk.Conn, path string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), conn.SessionTimeout())
	err := deleteOwn(ctx, conn, path)
	cancel()
	if err != nil && !sessionOver(err) {
		go deleteOwn(context.Background(), conn, path)
	}
}

// seqNode is a child made by a sequential create: its name, the name it was
// given (the part before the sequence number, after any CreateProtected
// prefix) and its sequence number (see seqSuffix).
type seqNode struct {
	name   string
	prefix string
	seq    int64
}

// parseSeq parses a sequential child name whose given name is prefix
// ("lock-0000000007" or "_c_<guid>-lock-0000000007" for "lock-").
func parseSeq(name, prefix string) (seqNode, bool) {
	given, _ := zk.ParseProtectedName(name)
	if !strings.HasPrefix(given, prefix) {
		return seqNode{}, false
	}
	n, ok := seqSuffix(given[len(prefix):])
	if !ok {
		return seqNode{}, false
	}
	return seqNode{name: name, prefix: prefix, seq: n}, true
}

// seqSuffix parses the sequence number a server appends to a sequential
// create's name: the parent's counter, a signed 32-bit integer, formatted
// with %010d. Once the counter has overflowed (past 2147483647 ZooKeeper
// names the next node "<path>-2147483648", and counts up to -1), the number
// is negative and may take 11 characters. The number returned is the
// counter read as unsigned, so that nodes made after the overflow sort after
// those made before it, in creation order. Only names the server could
// make parse: nothing else aliases a sequence number.
func seqSuffix(s string) (int64, bool) {
	if len(s) != 10 && (len(s) != 11 || s[0] != '-') {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil || fmt.Sprintf("%010d", n) != s {
		return 0, false
	}
	return int64(uint32(int32(n))), true
}

// sortedSeq returns the children whose given name is one of prefixes, in
// sequence order (creation order under one parent).
func sortedSeq(children []string, prefixes ...string) []seqNode {
	var out []seqNode
	for _, c := range children {
		for _, p := range prefixes {
			if n, ok := parseSeq(c, p); ok {
				out = append(out, n)
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].seq != out[j].seq {
			return out[i].seq < out[j].seq
		}
		return out[i].name < out[j].name
	})
	return out
}

func indexOf(nodes []seqNode, name string) int {
	for i, n := range nodes {
		if n.name == name {
			return i
		}
	}
	return -1
}

// uniqueName returns prefix and a random 128-bit hex string.
func uniqueName(prefix string) string {
	var b [16]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// wait blocks until s fires or ctx ends.
func wait(ctx context.Context, s *signal) error {
	select {
	case <-s.c:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// removeWatcher takes w's watches on path out of the Conn, locally even if
// the server cannot be reached, so that an abandoned wait leaves nothing
// registered. Errors (no such watch, a session over) do not matter.
func removeWatcher(conn *zk.Conn, path string, w zk.Watcher) {
	ctx, cancel := context.WithTimeout(context.Background(), conn.SessionTimeout())
	defer cancel()
	conn.RemoveWatches(ctx, path, w, zk.WatcherAny, true)
}

// closedCh is a channel that is always closed: the Lost channel of a
// recipe that holds nothing.
var closedCh = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// afterCtx returns a context that ends d after ctx ends (and when stop is
// called): the time to learn the outcome of a write that ctx's end
// abandoned in flight.
func afterCtx(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	out, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var mu sync.Mutex
	var t *time.Timer
	stopAfter := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if out.Err() == nil {
			t = time.AfterFunc(d, cancel)
		}
	})
	return out, func() {
		stopAfter()
		cancel()
		mu.Lock()
		defer mu.Unlock()
		if t != nil {
			t.Stop()
		}
	}
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
