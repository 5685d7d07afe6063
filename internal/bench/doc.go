// Package bench is a load generator for any server that speaks ZooKeeper's
// client protocol, Paddock or Apache ZooKeeper: "paddock bench" is its
// command.
//
// # Contract
//
// Run opens Config.Sessions sessions with the zk client and drives one
// workload through them. Each session keeps Config.Inflight asynchronous
// calls outstanding: every callback records its call's latency (from the
// call to the callback) and issues the next call, so one process drives
// hundreds of sessions with many requests in flight without a goroutine per
// request. Calls made during the warm-up are not counted; the measured
// window starts when the warm-up ends and closes when Config.Duration has
// passed or Config.Ops calls have been issued, once the calls still in flight
// have completed. With Config.Rate (an open loop) the due time decides: the
// calls due during the warm-up are not measured, even when sent after it,
// and those due in the window are, even when a stalled session could only
// send them after its end.
//
// Everything a run creates lives under a root of its own, /bench-<random>
// (under the connect string's chroot, if any), made before the sessions
// start and deleted at the end with batched multi deletes; cleanup errors
// are counted in the Result, not returned (when the admin session expired
// meanwhile, the cleanup is done again from a new one). The populate workload keeps its
// tree unless Config.Keep says otherwise, so that memory and restart times
// can be measured afterwards.
//
// Cancelling the context passed to Run stops issuing calls: the calls in
// flight complete, the sessions close, the root is deleted, and Run returns
// the result of what was measured so far together with the context's error.
// A load that stops on its own before the window's end (every session over,
// a failed watch-fanout round) fails the run: no Result, an error wrapping
// errEndedEarly.
//
// Server CPU and memory are read from /proc for the processes named in
// Config.ServerPIDs (Linux only): user+system CPU time over the measured
// window, divided by the operations, and VmRSS at its end.
//
// The package keeps no global state and reads no environment; the caller
// passes every setting in Config and an optional progress writer.
package bench
