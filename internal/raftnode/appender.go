package raftnode

import (
	"fmt"
	"sync"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// appender makes raft's log appends durable on a goroutine of its own:
// raft's LocalAppendThread, with raft.Config.AsyncStorageWrites. The node's
// goroutine hands it each MsgStorageAppend (entries, hard state) and goes
// on stepping messages and applying committed entries while the WAL
// fsyncs. So a leader counts its followers' acknowledgements as they arrive
// rather than after its own next fsync, a write is answered as soon as a
// quorum has it on disk, and the next fsync starts the moment the previous
// one returns, with every append queued meanwhile (group commit).
//
// Responses raft attached to an append are delivered only once it is
// durable: those for other members go to the transport from here, those for
// this node are handed back to the node's goroutine (done), which steps
// them. Appends are written in the order raft produced them.
type appender struct {
	n *Node

	mu    sync.Mutex
	idle  *sync.Cond       // signalled when the queue is empty and nothing is being written
	queue []raftpb.Message // MsgStorageAppend, in raft's order
	busy  bool             // a batch is being written
	resps []raftpb.Message // responses to this node, for the node's goroutine
	err   error            // a failed write: the node stops

	wake chan struct{} // to the appender: the queue is not empty
	done chan struct{} // to the node's goroutine: resps or err are set
	wg   sync.WaitGroup

	ents         []raftpb.Entry   // reused across batches
	self, others []raftpb.Message // reused across batches by write
}

func newAppender(n *Node) *appender {
	a := &appender{n: n, wake: make(chan struct{}, 1), done: make(chan struct{}, 1)}
	a.idle = sync.NewCond(&a.mu)
	return a
}

// start runs the appender until quit is closed or a write fails.
func (a *appender) start(quit <-chan struct{}) {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.run(quit)
	}()
}

// push queues a MsgStorageAppend.
func (a *appender) push(m raftpb.Message) {
	a.mu.Lock()
	a.queue = append(a.queue, m)
	a.mu.Unlock()
	signal(a.wake)
}

// take returns the responses for this node gathered so far and the error
// that stopped the appender, if any. spare, emptied, takes their place, so
// that the caller can hand back the slice of its previous take.
func (a *appender) take(spare []raftpb.Message) ([]raftpb.Message, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.resps
	a.resps = spare[:0]
	return r, a.err
}

// waitIdle waits until every queued append is durable (their responses are
// then waiting in take), or returns the error that stopped the appender.
func (a *appender) waitIdle() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for (len(a.queue) > 0 || a.busy) && a.err == nil {
		a.idle.Wait()
	}
	return a.err
}

// stop waits for the appender's goroutine to return (after quit closed).
func (a *appender) stop() { a.wg.Wait() }

func (a *appender) run(quit <-chan struct{}) {
	var batch []raftpb.Message
	for {
		a.mu.Lock()
		batch, a.queue = a.queue, batch[:0]
		a.busy = len(batch) > 0
		if !a.busy {
			a.idle.Broadcast()
		}
		a.mu.Unlock()
		if len(batch) == 0 {
			select {
			case <-a.wake:
				continue
			case <-quit:
				return
			}
		}
		self, err := a.write(batch)
		clear(batch)
		a.mu.Lock()
		a.busy = false
		a.resps = append(a.resps, self...)
		clear(self)
		if err != nil {
			a.err = err
			a.idle.Broadcast()
		}
		a.mu.Unlock()
		signal(a.done)
		if err != nil {
			return
		}
	}
}

// write saves the batch's entries and last hard state with one WAL write
// and at most one fsync, loads them into raft's in-memory log (logStore), sends the
// responses for other members and returns those for this node.
func (a *appender) write(batch []raftpb.Message) ([]raftpb.Message, error) {
	n := a.n
	ents := a.ents[:0]
	var hs raftpb.HardState
	for i := range batch {
		m := &batch[i]
		ents = append(ents, m.Entries...)
		if h := (raftpb.HardState{Term: m.Term, Vote: m.Vote, Commit: m.Commit}); !raft.IsEmptyHardState(h) {
			hs = h
		}
	}
	n.walMu.Lock()
	err := n.wal.Save(hs, ents)
	n.walMu.Unlock()
	clear(ents)
	if cap(ents) <= 4096 {
		a.ents = ents[:0]
	} else {
		a.ents = nil
	}
	if err != nil {
		return nil, fmt.Errorf("raftnode: persisting %d entries: %w", len(ents), err)
	}
	for i := range batch {
		if es := batch[i].Entries; len(es) > 0 {
			if err := n.ms.Append(es); err != nil {
				return nil, fmt.Errorf("raftnode: appending entries %d..%d to raft storage: %w",
					es[0].Index, es[len(es)-1].Index, err)
			}
		}
	}
	if !raft.IsEmptyHardState(hs) {
		if err := n.ms.SetHardState(hs); err != nil {
			return nil, fmt.Errorf("raftnode: setting hard state: %w", err)
		}
	}
	self, others := a.self[:0], a.others[:0]
	for i := range batch {
		for _, r := range batch[i].Responses {
			if r.To == n.cfg.ID {
				self = append(self, r)
			} else {
				others = append(others, r)
			}
		}
	}
	n.send(others) // the transport copies what it queues
	clear(others)
	a.others = others[:0]
	a.self = self[:0] // run copies self before the next write
	return self, nil
}

// signal wakes the receiver of a one-slot channel without blocking.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
