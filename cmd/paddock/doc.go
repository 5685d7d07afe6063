// Command paddock runs a Paddock server, a ZooKeeper-compatible coordination
// service, and the tools around it.
//
//	paddock server [--config zoo.cfg] [--port N] [--address A] [--data-dir D]
//	               [--log-format text|json] [--log-level debug|info|warn|error]
//	               [--shutdown-timeout 10s] [--close-sessions-on-shutdown]
//	paddock cli [-server host:port] [-timeout ms] [--json] [cmd args...]
//	paddock snapshot inspect|dump <snapshot-file|data-dir> [--json]
//	paddock wal dump <data-dir|wal-dir> [--json] [--from INDEX] [--limit N]
//	paddock data verify <data-dir> | data purge -n N <data-dir> [--dry-run]
//	paddock version [--json]
//	paddock bench --servers h1:p1,h2:p2 --workload get|set|... [--duration 10s] [--json]
//	paddock example master|worker|submit --servers h1:p1,...
//
// "paddock server" reads Paddock's defaults, then the zoo.cfg given with
// --config, then the flags (a flag wins over the file; each flag stands for a
// zoo.cfg key: --port clientPort, --address clientPortAddress, --data-dir
// dataDir, --log-format paddock.log.format, --log-level paddock.log.level).
// It logs to stderr and serves until SIGINT or SIGTERM, then shuts down
// gracefully: it stops reading requests, finishes and answers those it read,
// and exits within --shutdown-timeout, leaving sessions open unless
// --close-sessions-on-shutdown; a second signal kills it at once. A
// shutdown still running 5 s after that timeout has its goroutines' stacks
// written to stderr, and the process exits with status 1. A server whose
// WAL can no longer be written or synced (a full or failing disk) stops
// serving, closes its clients and exits with status 1, so that a
// supervisor restarts it.
//
// "paddock cli" is zkCli.sh's shell on the zk client (internal/cli;
// docs/cli.md). "paddock snapshot", "wal" and "data" read, verify and purge
// data directories (internal/datatool; docs/data-tools.md).
//
// "paddock bench" is a load generator for any ZooKeeper-protocol server,
// built on the zk client (internal/bench; docs/bench.md lists its flags,
// workloads and output).
//
// "paddock example" runs the roles of the ZooKeeper book's master–worker
// application (examples/masterworker; docs/master-worker.md).
//
// Flags may also be written Go-style with one dash (-json, -port 2181);
// for "paddock cli", only before the shell command, whose words pass
// through unchanged, as zkCli.sh's do.
//
// Exit status: 0 on success, 1 when the server or a tool fails (a failed
// cli command: its zkCli status, 1 or 127), 2 for a usage error or an
// invalid configuration (the error is printed on stderr).
//
// This package is wiring only: parsing lives in internal/config, serving in
// internal/server, the tools in internal/cli and internal/datatool.
package main
