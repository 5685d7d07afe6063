package server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddockhq/paddock/internal/admin"
	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/fsm"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/raftnode"
	"github.com/paddockhq/paddock/internal/session"
	"github.com/paddockhq/paddock/internal/storage"
	"github.com/paddockhq/paddock/internal/watch"
)

// Version is the ZooKeeper-compatible version string reported by srvr and
// envi: clients such as kazoo parse the leading ZooKeeper version.
const Version = "3.9.3-paddock"

// Server is one Paddock server.
type Server struct {
	cfg *config.Config
	log *slog.Logger

	// snapPiece is how many znodes a snapshot writes per hold of mu
	// (snapshotPiece).
	snapPiece int
	// expiryPropose, if set (by tests), replaces the proposal of a
	// session's close by the expiry loop.
	expiryPropose func(context.Context, *fsm.Entry) (*call, error)
	// loseProposal, if set (by tests), says which proposals to lose on
	// the way: registered as waiting, never handed to raft, as a
	// proposal forwarded to a leader that never got it.
	loseProposal func(*fsm.Entry) bool
	// beforeAttach, if set (by tests), runs in a handshake just before
	// the connection is attached to its session.
	beforeAttach func(session int64)

	// mu serialises apply with reads of the state machine.
	mu      sync.RWMutex
	fsm     *fsm.Machine
	watches *watch.Registry
	tracker *session.Tracker
	node    *raftnode.Node
	ln      net.Listener

	// serving is true while the server answers clients: a standalone
	// server once started, an ensemble member while it knows a leader and
	// has caught up with it.
	serving atomic.Bool
	leaderc chan leaderEvent // newest leader change, for leaderLoop
	// expires is true while this member decides session expiry: always
	// standalone, and in an ensemble while it leads (set once the
	// deadlines were reset for its term).
	expires atomic.Bool
	// draining is set by Shutdown: connections stop reading requests.
	draining atomic.Bool
	// memTrim decides when freed memory goes back to the OS.
	memTrim memTrimmer
	// readers recycles connections' read buffers (readerSize bytes each):
	// a client that connects, does one thing and leaves would otherwise
	// cost a fresh zeroed 64 KiB allocation, and the collections it causes.
	readers sync.Pool

	// zxid is the last applied zxid, readable without the state lock.
	zxid atomic.Int64

	pendMu  sync.Mutex
	pending map[uint64]*call
	// applyScratch holds the result of an entry no request of this
	// server waits for; only Apply uses it.
	applyScratch applyResult
	// lastWrite holds, by session, the last write a connection of the
	// session proposed, so that a resumed session waits for it (settle).
	// A map under a mutex, not a sync.Map: a sync.Map allocates on every
	// store, and every write stores.
	lastMu    sync.Mutex
	lastWrite map[int64]*call
	reqSeq    atomic.Uint64
	sessSeq   atomic.Int64

	connMu    sync.Mutex
	conns     map[*conn]struct{}
	perIP     map[string]int
	bySession map[int64]*conn
	// closedActive lists sessions whose connection closed after activity
	// touchLoop has not reported yet.
	closedActive []int64

	outstanding chan struct{}
	stats       stats
	started     time.Time
	metrics     *serverMetrics // nil when metrics are off (metrics.go)
	adminSrv    *admin.Server  // nil when admin.enableServer is false (admin.go)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed atomic.Bool
}

// call is a proposal waiting to be applied.
type call struct {
	done  chan struct{}
	res   fsm.Result
	entry *fsm.Entry // what was proposed, applied without decoding it again
	start time.Time  // when proposed, with metrics on (metrics.go)
	s     *Server
	id    uint64 // the proposal's ReqID
	// conn and it, for a client's write, are the connection and request
	// it answers: apply queues the reply (replied), in the log's order
	// with the events of the entries around it.
	conn    *conn
	it      *item
	seq     int64 // the write's number on its connection (conn.proposed)
	replied bool
	// ops and changes are room for res.Ops and res.Changes, so that
	// applying a write of one op allocates neither.
	ops     [1]fsm.OpResult
	changes [2]fsm.Change
}

// Dropped completes a proposal raft refused (raftnode.Dropper).
func (c *call) Dropped(err error) { c.s.dropped(c.id, err) }

// applyResult is room for the results of entries no local request waits
// for (other members' and the server's own), reused from entry to entry.
// ops and changes keep the room the entries so far needed, so that a
// follower applying multis allocates for them once, not per entry; a
// multi larger than maxScratchOps leaves none behind.
type applyResult struct {
	res     fsm.Result
	ops     []fsm.OpResult
	changes []fsm.Change
}

// maxScratchOps bounds the room applyResult keeps: a multi's results for
// up to this many ops.
const maxScratchOps = 256

// keep takes back the room res used, emptied so that it holds nothing of
// the entry alive until the next one.
func (a *applyResult) keep(res *fsm.Result) {
	clear(res.Ops)
	clear(res.Changes)
	if cap(res.Ops) <= maxScratchOps {
		a.ops = res.Ops[:0]
	}
	if cap(res.Changes) <= 2*maxScratchOps {
		a.changes = res.Changes[:0]
	}
	res.Ops, res.Changes = nil, nil
}

// New returns a server for cfg. It validates the configuration but opens
// nothing; Start does.
func New(cfg *config.Config, logger *slog.Logger) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		snapPiece:   snapshotPiece,
		cfg:         cfg,
		log:         logger,
		fsm:         fsm.New(fsm.Options{ExtendedTypes: cfg.ExtendedTypesEnabled}),
		watches:     watch.New(),
		tracker:     session.NewTracker(cfg.TickTime),
		pending:     make(map[uint64]*call),
		lastWrite:   make(map[int64]*call),
		conns:       make(map[*conn]struct{}),
		perIP:       make(map[string]int),
		bySession:   make(map[int64]*conn),
		outstanding: make(chan struct{}, max(cfg.GlobalOutstandingLimit, 1)),
		leaderc:     make(chan leaderEvent, 1),
		ctx:         ctx,
		cancel:      cancel,
	}
	return s, nil
}

// Start opens the data directory, recovers the state from the snapshot and
// the log, starts listening and starts the background work.
func (s *Server) Start() error {
	s.started = time.Now()
	for _, d := range []string{s.cfg.DataDir, s.cfg.DataLogDir} {
		if err := storage.MkdirAllDurable(d, 0o755); err != nil {
			return fmt.Errorf("server: data directory: %w", err)
		}
	}
	// Session ids as ZooKeeper makes them: server id in the top byte, then
	// the start time, then a counter.
	s.sessSeq.Store(s.cfg.ServerID<<56 | int64(uint64(time.Now().UnixMilli())<<24>>8))
	standalone := s.cfg.Standalone()
	rc := s.raftConfig(filepath.Join(s.cfg.DataDir, "snap"), filepath.Join(s.cfg.DataLogDir, "wal"))
	if err := s.initMetrics(&rc); err != nil {
		return err
	}
	s.showConfig(s.started)
	node, err := raftnode.Start(rc, (*machine)(s))
	if err != nil {
		return err
	}
	s.node = node
	// Every session recovered from the log gets a fresh timeout.
	now := time.Now()
	s.mu.RLock()
	for _, ss := range s.fsm.Sessions() {
		s.tracker.Add(ss.ID, time.Duration(ss.Timeout)*time.Millisecond, now)
	}
	s.mu.RUnlock()
	if standalone {
		ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
		defer cancel()
		if err := node.WaitLeader(ctx); err != nil {
			node.Close()
			return fmt.Errorf("server: waiting for raft leadership: %w", err)
		}
		// Serve only once everything committed before the restart is applied.
		if err := node.WaitApplied(ctx, node.Status().Commit); err != nil {
			node.Close()
			return fmt.Errorf("server: replaying the log: %w", err)
		}
		s.serving.Store(true)
	}

	addr := net.JoinHostPort(s.cfg.ClientPortAddress, strconv.Itoa(s.cfg.ClientPort))
	// Accepted connections get no TCP keepalive probes unless
	// clientTcpKeepAlive asks for them, as with ZooKeeper: a client that
	// stops pinging loses its session, which closes its connection, and
	// the probes cost every connection four more system calls.
	lc := net.ListenConfig{KeepAlive: -1}
	if s.cfg.ClientTCPKeepAlive {
		lc.KeepAlive = 0 // Go's default period
	}
	ln, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		node.Close()
		return fmt.Errorf("server: listen on %s: %w", addr, err)
	}
	s.ln = ln
	if err := s.startMetrics(); err != nil {
		ln.Close()
		node.Close()
		return err
	}
	if err := s.startAdmin(); err != nil {
		s.stopMetrics()
		ln.Close()
		node.Close()
		return err
	}
	s.log.Info("listening", "addr", ln.Addr().String(), "mode", s.mode(), "zxid", fmt.Sprintf("0x%x", s.lastZxid()),
		"sessions", s.tracker.Len(), "nodes", s.nodeCount())
	s.wg.Add(4)
	go s.acceptLoop()
	go s.expiryLoop()
	go s.reaperLoop()
	go s.memoryLoop()
	if !standalone {
		s.wg.Add(2)
		go s.leaderLoop()
		go s.touchLoop()
	}
	return nil
}

// Addr returns the client listener's address.
func (s *Server) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Failed is closed when the server's raft node stopped by itself (its WAL
// could not be written or synced): the server then serves nothing (see
// onNodeStop) until restarted, and Err says why. It is nil before Start.
func (s *Server) Failed() <-chan struct{} {
	if s.node == nil {
		return nil
	}
	return s.node.Done()
}

// Err returns why the server's raft node stopped by itself, or nil.
func (s *Server) Err() error {
	if s.node == nil {
		return nil
	}
	return s.node.Err()
}

// Close stops serving, closes every connection and waits for the server's
// goroutines. Sessions stay open in the log: clients that reconnect to the
// restarted server within their timeout keep them.
func (s *Server) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	s.closeAdmin()
	s.cancel()
	s.stopMetrics()
	if s.ln != nil {
		s.ln.Close()
	}
	s.connMu.Lock()
	for c := range s.conns {
		c.close()
	}
	s.connMu.Unlock()
	s.wg.Wait()
	var err error
	if s.node != nil {
		err = s.node.Close()
	}

	s.pendMu.Lock()
	for id, c := range s.pending {
		delete(s.pending, id)
		c.res.Err = proto.ErrConnectionLoss
		close(c.done)
	}
	s.pendMu.Unlock()
	return err
}

func (s *Server) lastZxid() int64 { return s.zxid.Load() }

func (s *Server) nodeCount() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.fsm.Tree().NodeCount()
}

var errStopped = errors.New("server: stopped")

// propose sends e through the log and returns a call completed when it has
// been applied.
func (s *Server) propose(ctx context.Context, e *fsm.Entry) (*call, error) {
	return s.proposeFor(ctx, e, nil, nil, 0)
}

// proposeFor proposes a client's write e, request it of connection to,
// the connection's write number seq: apply queues its reply on to (see
// call). to and it are nil for the server's own proposals.
func (s *Server) proposeFor(ctx context.Context, e *fsm.Entry, to *conn, it *item, seq int64) (*call, error) {
	if s.closed.Load() {
		return nil, errStopped
	}
	id := uint64(s.cfg.ServerID)<<48 | s.nextReqSeq()
	e.ReqID = id
	if (e.Type == fsm.EntryTxn || e.Type == fsm.EntryMoveSession) && !s.cfg.Standalone() {
		// A client's write, or a session's move to this member, applies
		// only if committed in the term it was proposed in (see
		// fsm.Entry.Term).
		e.Term = s.node.Term()
	}
	c := &call{done: make(chan struct{}), entry: e, start: s.metrics.proposalStart(), s: s, id: id, conn: to, it: it, seq: seq}
	c.res.Ops, c.res.Changes = c.ops[:0], c.changes[:0]
	if it != nil {
		it.call = c // before apply can see the call
	}
	s.pendMu.Lock()
	s.pending[id] = c
	s.pendMu.Unlock()
	if s.loseProposal != nil && s.loseProposal(e) {
		return c, nil
	}
	if err := s.node.ProposeTo(ctx, e.Encode(make([]byte, 0, e.EncodedSizeHint())), c); err != nil {
		s.pendMu.Lock()
		delete(s.pending, id)
		s.pendMu.Unlock()
		return nil, err
	}
	return c, nil
}

// dropped completes a proposal raft refused: the client sees a lost
// connection, as it would if the server had failed.
func (s *Server) dropped(id uint64, err error) {
	s.pendMu.Lock()
	c := s.pending[id]
	delete(s.pending, id)
	s.pendMu.Unlock()
	if c != nil {
		s.log.Warn("proposal dropped", "err", err)
		c.res.Err = proto.ErrConnectionLoss
		close(c.done)
	}
}

// newSessionID returns a fresh session id and password.
func (s *Server) newSessionID() (int64, []byte) {
	passwd := make([]byte, 16)
	rand.Read(passwd)
	return s.sessSeq.Add(1), passwd
}

// machine adapts the server to raftnode.StateMachine: it applies entries under
// the state lock and fans the results out to watches, sessions and waiting
// requests.
type machine Server

func (m *machine) Apply(index, term uint64, data []byte) {
	s := (*Server)(m)
	if len(data) == 0 {
		s.mu.Lock()
		s.fsm.ApplyEmpty(index)
		s.zxid.Store(int64(index))
		s.mu.Unlock()
		return
	}
	s.observeProposal(len(data))
	// An entry this server proposed is applied from the proposer's own
	// copy: decoding what was just encoded would give the same entry (the
	// replay path and other members decode it), at the cost of allocations.
	var c *call
	if id, ok := fsm.PeekReqID(data); ok && id != 0 {
		s.pendMu.Lock()
		c = s.pending[id]
		delete(s.pending, id)
		s.pendMu.Unlock()
	}
	if t := fsm.PeekTerm(data); t != 0 && t != term {
		// Proposed in term t, committed by a later leader: its client
		// was told the connection was lost and may have written since.
		// Every member drops it alike.
		s.mu.Lock()
		s.fsm.ApplyEmpty(index)
		s.zxid.Store(int64(index))
		s.mu.Unlock()
		s.log.Info("dropping a write proposed in an earlier term", "index", index, "proposed_term", t, "term", term)
		if c != nil {
			c.entry = nil
			c.res.Err = proto.ErrConnectionLoss
			close(c.done)
		}
		return
	}
	s.mu.Lock()
	var res *fsm.Result
	if c != nil {
		res = &c.res
		s.fsm.ApplyEntryTo(index, c.entry, res)
	} else {
		a := &s.applyScratch
		res = &a.res
		res.Ops, res.Changes = a.ops[:0], a.changes[:0]
		s.fsm.ApplyTo(index, data, res)
	}
	for i := range res.Changes {
		ch := &res.Changes[i]
		s.watches.Trigger(ch.Type, ch.Path, res.Zxid, func(w watch.Watcher) bool {
			return w.(*conn).canRead(ch.ACL)
		})
	}
	// Published after the entry's events are queued: a reply that carries
	// the zxid without the state lock (a ping's, an error's) then comes
	// after them, so a client that reconnects with that zxid has not
	// missed an event its setWatches would not fire again.
	s.zxid.Store(res.Zxid)
	switch res.Type {
	case fsm.EntryCreateSession:
		if ss := s.fsm.Session(res.Session); ss != nil {
			s.tracker.Add(ss.ID, time.Duration(ss.Timeout)*time.Millisecond, time.Now())
		}
	case fsm.EntryCloseSession:
		if res.Err != proto.ErrSessionMoved { // a refused close leaves the session open
			s.tracker.Remove(res.Session)
		}
	case fsm.EntryMoveSession:
		// A client resumed the session (on some member): it is alive. The
		// leader learns it here, as ZooKeeper's leader does when a
		// learner revalidates a session; the member the client left
		// reported its activity last, maybe most of a timeout ago, and
		// the client's first request may come a third of a timeout later.
		if e := s.tracker.Get(res.Session); e != nil && res.Err == proto.ErrOK {
			s.tracker.Touch(e, time.Now())
		}
	}
	// A session moved to another member: its client has left this one.
	movedAway := false
	if res.Type == fsm.EntryMoveSession && res.Err == proto.ErrOK {
		ss := s.fsm.Session(res.Session)
		movedAway = ss != nil && ss.Owner != s.origin()
	}
	s.mu.Unlock()
	if movedAway {
		s.sessionMovedAway(res.Session)
	}
	if c != nil && c.conn != nil && c.conn.watched.Load() && res.Err != proto.ErrSessionMoved &&
		res.Err != proto.ErrConnectionLoss && c.conn.answered.Load() == c.seq-1 {
		// The reply goes out after this entry's events and before the
		// next entry's, as ZooKeeper's FinalRequestProcessor answers a
		// write before it applies the next: left to the connection's
		// responder, it could come after events of entries applied
		// meanwhile. Only the connection's next reply, though: if an
		// earlier write of it was lost, the responder closes the
		// connection when it gets there, and this one gets no reply.
		// And only for a connection with watches (Server.addWatch):
		// for the others the responder does it, off this loop.
		c.conn.queueWriteReply(c.it)
		c.conn.answered.Store(c.seq)
		c.replied = true
	}
	if c != nil && c.conn != nil && res.Err == proto.ErrConnectionLoss {
		// The log refused the write because an earlier write of its
		// connection never applied (fsm.Entry.Conn): the client loses the
		// connection now, rather than waiting on that earlier write.
		c.conn.close()
	}
	if c != nil {
		// The item is recycled once answered; the call may outlive it
		// (Server.lastWrite).
		c.conn, c.it = nil, nil
	}
	if res.Type == fsm.EntryCloseSession && res.Err == proto.ErrOK {
		s.lastMu.Lock()
		delete(s.lastWrite, res.Session)
		s.lastMu.Unlock()
		s.sessionClosed(res.Session)
	}
	if c != nil {
		s.metrics.proposalApplied(c.start)
		c.entry = nil
		close(c.done)
	} else {
		s.applyScratch.keep(res)
	}
}

// Snapshot opens a snapshot stream of the state as of now and returns the
// function that writes it. The writer serialises a bounded number of znodes
// at a time under the state's read lock, so reads go on and apply (writes)
// waits at most for one piece, and sorts large parents' children without
// the lock; changes meanwhile are kept out of the snapshot by the tree's
// copy on write.
func (m *machine) Snapshot() (func(io.Writer) error, error) {
	s := (*Server)(m)
	s.mu.Lock()
	st := s.fsm.BeginSnapshot()
	s.mu.Unlock()
	return func(w io.Writer) error {
		defer func() {
			s.mu.Lock()
			st.End()
			s.mu.Unlock()
			// The copies kept for the stream are garbage now: hand the
			// memory back to the OS, now or once the server is quiet.
			if s.memTrim.snapshotDone(time.Now()) {
				debug.FreeOSMemory()
			}
		}()
		buf := make([]byte, 0, 1<<20)
		for {
			s.mu.RLock()
			var done bool
			buf, done = st.Next(buf[:0], s.snapPiece)
			s.mu.RUnlock()
			// Sorting a large parent's children, which Next leaves for
			// now, needs no lock: 25 ms with 100,000 children, in which
			// apply would wait.
			st.Prepare()
			// Give the processor to whatever waits for one before the
			// next piece. The stream runs for hundreds of milliseconds
			// without blocking; while a garbage collection's mark worker
			// holds the other processor of a small machine, the apply
			// loop, raft and the connections would otherwise wait for
			// the scheduler's 10 ms preemption, piece after piece: on a
			// leader that stalled every write of a 3-member ensemble for
			// about 120 ms (docs/benchmarks.md, nineteenth session).
			runtime.Gosched()
			if _, err := w.Write(buf); err != nil {
				return err
			}
			if done {
				return nil
			}
		}
	}, nil
}

// snapshotPiece is how many znodes a snapshot writes per hold of the lock
// (Server.snapPiece, which tests lower).
const snapshotPiece = 2048

func (m *machine) Restore(data []byte) error {
	s := (*Server)(m)
	s.mu.Lock()
	if err := s.fsm.Restore(data); err != nil {
		s.mu.Unlock()
		return err
	}
	s.zxid.Store(s.fsm.LastZxid())
	s.showConfigLocked(time.Now()) // a restored state shows nothing
	// The session table jumps with the state: track the sessions it holds,
	// and only those.
	now := time.Now()
	live := make(map[int64]bool)
	for _, ss := range s.fsm.Sessions() {
		live[ss.ID] = true
		if s.tracker.Get(ss.ID) == nil {
			s.tracker.Add(ss.ID, time.Duration(ss.Timeout)*time.Millisecond, now)
		}
	}
	for _, id := range s.tracker.IDs() {
		if !live[id] {
			s.tracker.Remove(id)
		}
	}
	s.mu.Unlock()
	// The snapshot may cover entries this member proposed (forwarded
	// writes committed while it was behind) that it will now never apply:
	// their calls fail, as at a change of leader, rather than wait for
	// good. The outcome is unknown to their clients, as in ZooKeeper.
	s.failPending()
	// A member that falls so far behind that the leader sends it a
	// snapshot cannot tell its clients' watches what changed in between:
	// they reconnect, and re-register their watches with their last zxid.
	if s.serving.Load() {
		s.log.Warn("state replaced by a snapshot from the leader; closing client connections", "zxid", fmt.Sprintf("0x%x", s.lastZxid()))
		s.closeClients()
	}
	return nil
}

// sessionClosed drops the connection of a session that was closed or expired.
// A connection that asked for the close finishes it itself, after it has
// sent the reply.
func (s *Server) sessionClosed(id int64) {
	s.connMu.Lock()
	c := s.bySession[id]
	s.connMu.Unlock()
	if c != nil && !c.closeRequested.Load() {
		c.close()
	}
}

// sessionMovedAway closes this member's connection of a session that moved
// to another member. Its client went there and will not come back on it;
// left open (half open, if the client could not reach this member to close
// it), it would hold the session's watches and a maxClientCnxns place for
// as long as the session lives on elsewhere, where its client keeps it
// alive. A connection of the session that attaches here later moves the
// session back first (Server.moveSession), after this move in the log.
func (s *Server) sessionMovedAway(id int64) {
	s.connMu.Lock()
	c := s.bySession[id]
	s.connMu.Unlock()
	if c != nil {
		c.log.Info("closing connection: the session has moved to another member", "session", fmt.Sprintf("0x%x", id))
		c.close()
	}
}

// expiryLoop proposes the close of every session whose deadline passed,
// and tracks a session again if its close was lost (retrackLostExpiries).
func (s *Server) expiryLoop() {
	var proposed []expiry
	s.atBucketEnds(func(now time.Time) {
		proposed = s.retrackLostExpiries(proposed, now)
		// Only the leader decides expiry, once for the ensemble (a
		// standalone server leads its group of one; one whose raft node
		// failed decides nothing any more).
		if !s.expires.Load() {
			return
		}
		for _, id := range s.tracker.Expired(now) {
			s.log.Info("expiring session", "session", fmt.Sprintf("0x%x", id))
			s.metrics.expired()
			ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
			c, err := s.proposeExpiry(ctx, &fsm.Entry{Type: fsm.EntryCloseSession, Session: id, Time: now.UnixMilli()})
			cancel()
			if err != nil && !s.closed.Load() {
				s.log.Warn("proposing session expiry failed", "session", fmt.Sprintf("0x%x", id), "err", err)
			}
			proposed = append(proposed, expiry{id: id, call: c})
		}
	})
}

// expiry is a session close the expiry loop proposed; call is nil if the
// proposal was refused.
type expiry struct {
	id   int64
	call *call
}

// proposeExpiry proposes a session's close for the expiry loop: s.propose,
// unless a test replaced it (Server.expiryPropose). It refuses once this
// member no longer decides expiry. In an ensemble the close carries the
// term this member leads in, so that it applies only if committed in that
// term (fsm.Entry.Term): a leader that stalled for longer than the session
// timeouts (a stopped process, a frozen VM) finds every deadline passed
// when it resumes, and its closes, forwarded to the new leader once its
// raft hears of it, would otherwise expire live sessions.
func (s *Server) proposeExpiry(ctx context.Context, e *fsm.Entry) (*call, error) {
	if !s.cfg.Standalone() {
		// Read before expires: raftnode reports a lost leadership
		// (onLeaderChange clears expires) before its term moves on, so
		// a term read while expires is still true afterwards is one
		// this member led in, or an earlier one.
		e.Term = s.node.Term()
	}
	if !s.expires.Load() {
		return nil, errNotExpiring
	}
	if s.expiryPropose != nil {
		return s.expiryPropose(ctx, e)
	}
	return s.propose(ctx, e)
}

// retrackLostExpiries looks at the session closes the expiry loop proposed
// and returns those still under way. A session whose close was refused or
// lost (dropped by raft, or failed with a change of leader) while the
// session is still open is tracked again with a fresh timeout, so that it
// expires later: Tracker.Expired stopped tracking it, and otherwise no
// member would ever expire it again if this one went on leading (or led
// again before another member expired it), leaving its ephemerals behind
// for good. ZooKeeper rebuilds its session tracker from the database at
// every election, with the same effect.
func (s *Server) retrackLostExpiries(proposed []expiry, now time.Time) []expiry {
	kept := proposed[:0]
	for _, p := range proposed {
		if p.call != nil && !ready(p.call.done) {
			kept = append(kept, p)
			continue
		}
		if p.call != nil && p.call.res.Err != proto.ErrConnectionLoss {
			continue // applied
		}
		// Under the read lock apply cannot close the session between
		// the look and the tracking (it stops tracking a closed session
		// under the write lock).
		s.mu.RLock()
		if ss := s.fsm.Session(p.id); ss != nil && s.tracker.Get(p.id) == nil {
			s.tracker.Add(p.id, time.Duration(ss.Timeout)*time.Millisecond, now)
			s.log.Warn("a session's expiry was lost; it will expire again after its timeout", "session", fmt.Sprintf("0x%x", p.id))
		}
		s.mu.RUnlock()
	}
	clear(proposed[len(kept):])
	return kept
}

// atBucketEnds calls f with the time at the end of each of the session
// tracker's buckets (once a tick, when that bucket's sessions expire, as
// ZooKeeper's expiry thread wakes) until the server stops. It is the body
// of a goroutine counted in s.wg.
func (s *Server) atBucketEnds(f func(now time.Time)) { s.repeat(s.tracker.UntilNextBucket, f) }

// every calls f with the time, d after its previous call returned, until
// the server stops. It is the body of a goroutine counted in s.wg.
func (s *Server) every(d time.Duration, f func(now time.Time)) {
	s.repeat(func(time.Time) time.Duration { return d }, f)
}

// repeat calls f with the time until the server stops, waiting wait(now)
// before each call. It is the body of a goroutine counted in s.wg.
func (s *Server) repeat(wait func(now time.Time) time.Duration, f func(now time.Time)) {
	defer s.wg.Done()
	t := time.NewTimer(wait(time.Now()))
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case now := <-t.C:
			f(now)
			t.Reset(wait(time.Now()))
		}
	}
}
