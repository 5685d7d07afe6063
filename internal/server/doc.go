// Package server is Paddock's ZooKeeper-protocol server: the client listener,
// connections and sessions, the request pipeline, watch delivery and the
// four-letter words. It drives the replicated state machine (package fsm)
// through the raft log (package raftnode).
//
// Pipeline. Each connection has three goroutines: a reader that decodes
// frames and proposes writes at once, a responder that completes requests in
// arrival order, and a writer that drains the connection's outbound queue.
// Writes are log entries; the responder waits for the entry to be applied.
// Reads run on the responder, after every earlier request of the connection
// has completed, against the applied state under the state lock — so a read
// waits for the session's own earlier writes and for nothing else.
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
