// Package session tracks session liveness on the server that decides expiry
// (the leader; in standalone, the only server): when each session's deadline
// falls, grouped into deadline buckets one tick wide as ZooKeeper's
// ExpiryQueue groups them, so a tick expires whole buckets and touching a
// session usually costs one atomic comparison.
//
// Contract:
//   - A session's deadline is now+timeout rounded up to the next multiple of
//     the tick (ExpiryQueue.roundToNextInterval): always strictly after
//     now+timeout's tick boundary, never before now+timeout.
//   - Expired(now) returns the sessions whose deadline is at or before now and
//     forgets them, so each expiry is reported once; a later Touch or
//     SetTimeout on such a session reports false. A caller that calls it
//     UntilNextBucket after each call expires every session when its bucket
//     ends, as ZooKeeper's SessionTrackerImpl thread waits for the next
//     expiration time.
//   - The tracker only reports expired sessions; closing them is a log entry
//     the caller proposes. Callers pass the time, which must not run
//     backwards: pass time.Now's. The tracker measures it from its creation
//     with the monotonic clock reading such a time carries, so a step of the
//     system's wall clock neither expires sessions early nor keeps them
//     late (ZOOKEEPER-1366); Deadline and Snapshot give wall-clock times as
//     the clock ran when the tracker was made.
//
// A Tracker is safe for concurrent use.
package session
