package server

// Serving reports whether the server answers clients: a standalone server
// once started, an ensemble member while it knows a leader and has caught
// up with it. It is false before Start has returned and after Close. Like
// Mode, it may be called concurrently with the server's work, but not
// concurrently with Start.
func (s *Server) Serving() bool {
	return s.node != nil && !s.closed.Load() && s.serving.Load()
}

// Mode names the server's part as the "Mode:" line of srvr does:
// "standalone", "leader", "follower" or "observer"; "" before Start has
// returned and after Close. A member that is not serving (it knows no
// leader) still has a mode: ask Serving too.
func (s *Server) Mode() string {
	if s.node == nil || s.closed.Load() {
		return ""
	}
	return s.mode()
}
