package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/paddockhq/paddock/internal/fsm"
)

// Shutdown stops the server gracefully, then closes it:
//
//  1. it stops accepting connections;
//  2. it stops reading requests: each connection finishes what it already
//     read — writes are applied through the log and answered, reads answered
//     — flushes its replies and closes;
//  3. if closeSessions is true, it closes the sessions of those connections
//     through the log, removing their ephemeral nodes, as if each client had
//     called close; otherwise sessions stay open, and clients that reconnect
//     within their timeout (to this server restarted, or to another member)
//     keep them and their ephemerals, as with ZooKeeper;
//  4. it closes the server (Close).
//
// A request the server had not finished reading when Shutdown began is never
// acknowledged, so the client sees a connection loss and may retry. When ctx
// ends before the connections finished, the rest is cut short: pending
// writes are answered with a connection loss (they may still have been
// applied). Shutdown returns the error of Close, joined with ctx's error if
// the drain was cut short.
func (s *Server) Shutdown(ctx context.Context, closeSessions bool) error {
	if s.closed.Load() {
		return nil
	}
	s.draining.Store(true)
	if s.ln != nil {
		s.ln.Close()
	}
	sessions := make(map[int64]bool)
	var errs []error
	if err := s.drainConns(ctx, sessions); err != nil {
		errs = append(errs, fmt.Errorf("server: draining connections: %w", err))
	}
	if closeSessions && len(errs) == 0 {
		n, err := s.closeSessions(ctx, sessions)
		s.log.Info("closed sessions on shutdown", "sessions", n)
		if err != nil {
			errs = append(errs, err)
		}
	}
	if err := s.Close(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// drainConns makes every connection stop reading and waits until all have
// closed, recording the sessions they held. It looks again at every tick, so
// a connection accepted just before the listener closed drains too.
func (s *Server) drainConns(ctx context.Context, sessions map[int64]bool) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		s.connMu.Lock()
		for id := range s.bySession {
			sessions[id] = true
		}
		s.connMu.Unlock()
		conns := s.connections()
		if len(conns) == 0 {
			return nil
		}
		for _, c := range conns {
			// The reader's next read fails at once; the responder then
			// answers everything already read, flushes and closes.
			c.nc.SetReadDeadline(time.Now())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d connections still open: %w", len(conns), context.Cause(ctx))
		case <-t.C:
		}
	}
}

// closeSessions proposes the close of each session still open and waits for
// the closes to apply. It returns how many it closed.
func (s *Server) closeSessions(ctx context.Context, ids map[int64]bool) (int, error) {
	var calls []*call
	for id := range ids {
		s.mu.RLock()
		open := s.fsm.Session(id) != nil
		s.mu.RUnlock()
		if !open {
			continue
		}
		// With this member as origin: a session that has moved to
		// another member since is not closed.
		c, err := s.propose(ctx, &fsm.Entry{Type: fsm.EntryCloseSession, Session: id, Time: time.Now().UnixMilli(), Origin: s.origin()})
		if err != nil {
			return len(calls), fmt.Errorf("server: closing session 0x%x on shutdown: %w", id, err)
		}
		calls = append(calls, c)
	}
	for _, c := range calls {
		select {
		case <-c.done:
		case <-ctx.Done():
			return len(calls), fmt.Errorf("server: closing sessions on shutdown: %w", context.Cause(ctx))
		}
	}
	return len(calls), nil
}
