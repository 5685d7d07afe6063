package raftnode

import (
	"context"
	"errors"
	"net"
	"slices"
	"syscall"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
)

// deadCheckTimeout bounds each dial that checks whether a peer that closed
// its stream is gone.
const deadCheckTimeout = 250 * time.Millisecond

// peerClosed is the transport's hook for a peer that closed its message
// stream. When that peer is the leader and its peer port now refuses
// connections (its process is gone: a killed or stopped server), waiting for
// the election timeout only delays the next leader, so one surviving voter
// stands for election at once. Raft still decides: the vote goes to it only
// if its log is up to date, and should the old leader in fact be alive it
// just steps down for the newer term. The surviving voters stand one after
// another, lowest id first, so that two followers noticing the same death
// do not split the vote (see leaderGone).
func (n *Node) peerClosed(id uint64) {
	addr, ok := n.cfg.Peers[id]
	if !ok {
		return
	}
	n.mu.Lock()
	lead := n.status.Lead
	n.mu.Unlock()
	if lead != id {
		// Only the leader's death is worth checking; dialing a live
		// peer would only make it log a connection without a hello.
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		go func() {
			select {
			case <-n.quit:
				cancel()
			case <-ctx.Done():
			}
		}()
		if !peerGone(ctx, addr) {
			n.logger.Debug("a peer's stream ended but it still accepts connections", "peer", id)
			return
		}
		n.control(func() { n.leaderGone(id) }, true)
	}()
}

// peerGone reports whether addr refuses connections twice, within a few
// tries a moment apart: a dying process may close its streams before its
// listener, so a dial that connects is tried again. A dial that times out
// or fails otherwise says nothing certain, and neither do tries that keep
// connecting: peerGone then returns false.
func peerGone(ctx context.Context, addr string) bool {
	d := net.Dialer{Timeout: deadCheckTimeout}
	refused := 0
	for i := range deadCheckTries {
		if i > 0 {
			select {
			case <-ctx.Done():
				return false
			case <-time.After(10 * time.Millisecond):
			}
		}
		c, err := d.DialContext(ctx, "tcp", addr)
		switch {
		case err == nil:
			c.Close()
			refused = 0
		case errors.Is(err, syscall.ECONNREFUSED):
			if refused++; refused == 2 {
				return true
			}
		default:
			return false
		}
	}
	return false
}

// deadCheckTries bounds the dials of peerGone.
const deadCheckTries = 8

// leaderGone runs on the node's goroutine once leader id is known gone. If
// id is still this follower's leader, the surviving voter with the lowest id
// campaigns at once, as a leader transfer would make it (raft's
// MsgTimeoutNow: the vote is not held back by the other followers' leader
// lease). The next surviving voter campaigns standbyTicks later if it knows
// no leader by then (the first may be dead too, may not have seen the
// streams end, or may have lost the vote for want of the latest entries,
// which this one may have), and so on down the ids.
func (n *Node) leaderGone(id uint64) {
	st := n.rn.Status()
	if st.Lead != id || st.RaftState != raft.StateFollower {
		return
	}
	voters := st.Config.Voters.IDs()
	if _, ok := voters[n.cfg.ID]; !ok {
		return
	}
	var survivors []uint64
	for v := range voters {
		if v != id {
			survivors = append(survivors, v)
		}
	}
	slices.Sort(survivors)
	rank := slices.Index(survivors, n.cfg.ID)
	if rank > 0 {
		wait := time.Duration(rank*standbyTicks) * n.cfg.TickInterval
		time.AfterFunc(wait, func() {
			n.control(func() {
				// Still following the dead leader, or a candidate
				// failed to win (its log was behind this one's, say):
				// no leader yet.
				if st := n.rn.Status(); (st.Lead == id || st.Lead == raft.None) && st.RaftState == raft.StateFollower {
					n.campaignFor(id, st.Term)
				}
			}, false)
		})
		return
	}
	n.campaignFor(id, st.Term)
}

// standbyTicks is how many ticks each surviving voter after the first
// waits, in turn, before it stands for a leader known gone.
const standbyTicks = 3

// campaignFor makes this follower stand for election at once in place of
// leader id, gone, in term.
func (n *Node) campaignFor(id, term uint64) {
	n.logger.Info("the leader's process is gone; standing for election at once", "leader", id, "term", term)
	// Stepped directly: n.step would count it as word from the leader.
	if err := n.rn.Step(raftpb.Message{Type: raftpb.MsgTimeoutNow, From: id, To: n.cfg.ID, Term: term}); err != nil {
		n.logger.Warn("standing for election failed", "err", err)
	}
}
