// Package server is Paddock's ZooKeeper-protocol server: the client listener,
// connections and sessions, the request pipeline, watch delivery and the
// four-letter words. It drives the replicated state machine (package fsm)
// through the raft log (package raftnode).
//
// Pipeline. Each connection has two goroutines: a reader that decodes
// frames, and a responder that completes requests in arrival order and
// writes replies and queued watch events to the socket. Writes are log
// entries the responder proposes; it answers them once applied. Reads run
// after every earlier request of the connection has completed, against the
// applied state under the state lock — so a read waits for the session's own
// earlier writes and for nothing else; a read that arrives with nothing of
// its connection in flight is answered by the reader itself. A write that
// follows a read is proposed only after the read ran.
//
// Ordering. Apply holds the state lock while it mutates the tree and queues
// the notifications the change fires; a read holds it while it reads,
// registers its watch and queues its reply. So a client always receives a
// watch event before any reply that could show the state after the change,
// and replies leave in request order.
//
// Back-pressure. globalOutstandingLimit bounds requests in flight across all
// connections (readers stop reading when it is reached); each connection's
// outbound queue is bounded in bytes, and a client that does not read its
// replies and events is disconnected rather than allowed to stall apply.
package server
