package server

import (
	"context"
	"time"

	"github.com/paddockhq/paddock/internal/fsm"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/tree"
)

// reaperLoop deletes empty containers that have had children and expired
// empty TTL nodes, as ZooKeeper's ContainerManager does, by proposing
// deleteContainer entries through the log — never by a side path. Apply
// re-checks each candidate with the entry's time.
func (s *Server) reaperLoop() {
	interval := s.cfg.ContainerCheckInterval
	if interval <= 0 {
		interval = time.Minute
	}
	s.every(interval, func(now time.Time) {
		// The leader reaps for the ensemble.
		if s.cfg.Standalone() || s.node.Status().IsLeader {
			s.reapOnce(now)
		}
	})
}

// reapOnce proposes the deletion of every due candidate, at most
// ContainerMaxPerMinute per minute.
func (s *Server) reapOnce(now time.Time) {
	candidates := s.reapCandidates(now)
	perMinute := s.cfg.ContainerMaxPerMinute
	var gap time.Duration
	if perMinute > 0 {
		gap = time.Minute / time.Duration(perMinute)
	}
	for _, p := range candidates {
		// The pass may outlast this member's leadership (the gaps add
		// up to a minute per ContainerMaxPerMinute candidates). Its
		// entries carry the term they were proposed in (proposeFor
		// stamps every EntryTxn), and apply checks each candidate again.
		if !s.cfg.Standalone() && !s.node.Status().IsLeader {
			return
		}
		e := &fsm.Entry{Type: fsm.EntryTxn, Time: time.Now().UnixMilli(),
			Ops: []fsm.Op{{Op: proto.OpDeleteContainer, Path: p}}}
		ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
		c, err := s.propose(ctx, e)
		if err == nil {
			select {
			case <-c.done:
			case <-ctx.Done():
			}
		}
		cancel()
		if s.ctx.Err() != nil {
			return
		}
		if gap > 0 {
			select {
			case <-time.After(gap):
			case <-s.ctx.Done():
				return
			}
		}
	}
}

func (s *Server) reapCandidates(now time.Time) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	t := s.fsm.Tree()
	var out []string
	for _, p := range t.Containers() {
		if n := t.Get(p); n != nil && n.NumChildren() == 0 && n.Cversion > 0 {
			out = append(out, p)
		}
	}
	for _, p := range t.TTLNodes() {
		if n := t.Get(p); n != nil && n.Kind() == tree.TTL && n.NumChildren() == 0 && now.UnixMilli()-n.Mtime > n.TTL() {
			out = append(out, p)
		}
	}
	return out
}
