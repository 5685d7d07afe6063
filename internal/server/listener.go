package server

import (
	"errors"
	"net"
	"time"
)

// acceptLoop accepts client connections until the server closes.
func (s *Server) acceptLoop() {
	defer s.wg.Done()
	var delay time.Duration
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if s.closed.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors or similar: back off, as net/http does.
			if delay == 0 {
				delay = 5 * time.Millisecond
			} else if delay *= 2; delay > time.Second {
				delay = time.Second
			}
			s.log.Warn("accept failed", "err", err, "retry_in", delay)
			time.Sleep(delay)
			continue
		}
		delay = 0 // Go turns Nagle's algorithm off (TCP_NODELAY) on every TCP connection
		c := s.newConn(nc)
		if !s.addConn(c) {
			s.metrics.rejected()
			s.log.Warn("rejecting connection: too many connections from this address",
				"client", c.remote, "maxClientCnxns", s.cfg.MaxClientCnxns)
			nc.Close()
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			c.serve()
		}()
	}
}

// addConn registers a connection, enforcing maxClientCnxns per address.
func (s *Server) addConn(c *conn) bool {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	if s.closed.Load() {
		return false
	}
	if max := s.cfg.MaxClientCnxns; max > 0 && s.perIP[c.ip] >= max {
		return false
	}
	s.perIP[c.ip]++
	s.conns[c] = struct{}{}
	return true
}

// attach binds a connection to its session; a previous connection of the
// same session (the client moved) is closed.
func (s *Server) attach(c *conn) {
	s.connMu.Lock()
	old := s.bySession[c.sessionID]
	s.bySession[c.sessionID] = c
	s.connMu.Unlock()
	if old != nil && old != c {
		old.log.Info("closing connection: session moved to another connection")
		old.close()
	}
}

// detach closes the connection a session is attached to, if any, and
// returns it.
func (s *Server) detach(session int64) *conn {
	s.connMu.Lock()
	old := s.bySession[session]
	s.connMu.Unlock()
	if old != nil {
		old.log.Info("closing connection: the session is reconnecting elsewhere")
		old.close()
	}
	return old
}

// dropConn forgets a closed connection and its watches.
func (s *Server) dropConn(c *conn) {
	s.connMu.Lock()
	if _, ok := s.conns[c]; ok {
		delete(s.conns, c)
		if s.perIP[c.ip]--; s.perIP[c.ip] <= 0 {
			delete(s.perIP, c.ip)
		}
	}
	if c.sessionID != 0 && s.bySession[c.sessionID] == c {
		delete(s.bySession, c.sessionID)
	}
	if c.sessionID != 0 && !s.cfg.Standalone() && c.active.Swap(false) {
		// Its last activity still reaches the leader (touchLoop).
		s.closedActive = append(s.closedActive, c.sessionID)
	}
	s.connMu.Unlock()
	s.watches.RemoveAll(c)
}

// connections returns the open connections.
func (s *Server) connections() []*conn {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	out := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		out = append(out, c)
	}
	return out
}
