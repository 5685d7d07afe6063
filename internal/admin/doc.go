// Package admin serves Paddock's admin HTTP API: Apache ZooKeeper's
// AdminServer commands as JSON, under the same names, aliases and field
// names, plus the /ready and /live probes.
//
// # Contract
//
// The package owns the HTTP side only: the mux, the command table (which
// command answers to which names, which ones need a serving server), the
// JSON shapes and their encoding, and the probes. It knows nothing of the
// server it reports on: it asks a [Source], which a server implements,
// for structured values. Every Source method may be called concurrently
// from HTTP handlers, and must not block for long (the snapshot command
// excepted).
//
// Routes, with the default command URL "/commands":
//
//   - GET /commands lists the commands' primary names as HTML links, as
//     ZooKeeper does;
//   - GET /commands/<name> runs the command with that name or alias and
//     answers a JSON object holding the command's fields plus "command"
//     (its primary name) and "error" (null, or a message). As in ZooKeeper,
//     an unknown command and a command that needs a serving server on one
//     that does not serve still answer 200, with the reason in "error";
//     these answers, and those refusing credentials, carry the name as
//     asked (an alias stays an alias), as ZooKeeper's do;
//   - GET /ready answers 200 while the server serves clients and 503
//     otherwise; GET /live answers 200 while the server runs its loops and
//     503 otherwise. Both carry a small JSON body.
//
// OPTIONS on any path, known or not, answers 200 with an empty body and
// "Allow: GET, HEAD, TRACE, OPTIONS", ZooKeeper's (Jetty's) answer, TRACE
// included though neither server runs it. Any other method is refused
// with 405 and any other path with 404.
//
// The snapshot command needs credentials, as ZooKeeper 3.9's does (its
// AuthRequest): an Authorization header "digest user:password" or "ip"
// whose identities hold ALL on the ACL of "/" ([Source.ACL]; the super
// user of [Options.SuperDigest] always does). Without the header it
// answers 401, with one naming no known scheme 401, with identities
// lacking a permission 403. Credentials are checked after the serving gate
// and before anything else the command checks.
//
// The snapshot command is off unless [Options.SnapshotEnabled]; it runs one
// at a time (a second concurrent request gets 429) and streams the state
// machine's snapshot as application/octet-stream, or with ?streaming=false
// takes it and reports its zxid and size only (as in ZooKeeper, a
// streaming value other than "true", in any case, means false).
//
// A write to a client that makes no progress for the idle timeout
// ([Options.IdleTimeout]) ends the answer, as Jetty's idle timeout does.
//
// A [Server] is started once with Start (or Serve) and stopped with Close,
// which waits for the handlers in flight.
package admin
