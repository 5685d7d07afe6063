// Command paddock runs a Paddock server, a ZooKeeper-compatible coordination
// service.
//
//	paddock server [--config zoo.cfg] [--port N] [--address A] [--data-dir D]
//	               [--log-format text|json] [--log-level debug|info|warn|error]
//	paddock version [--json]
//	paddock bench --servers h1:p1,h2:p2 --workload get|set|... [--duration 10s] [--json]
//	paddock example master|worker|submit --servers h1:p1,...
//
// "paddock server" reads Paddock's defaults, then the zoo.cfg given with
// --config, then the flags (a flag wins over the file; each flag stands for a
// zoo.cfg key: --port clientPort, --address clientPortAddress, --data-dir
// dataDir, --log-format paddock.log.format, --log-level paddock.log.level).
// It logs to stderr and serves until SIGINT or SIGTERM, then shuts down
// cleanly; a second signal kills it at once.
//
// "paddock bench" is a load generator for any ZooKeeper-protocol server,
// built on the zk client (internal/bench; docs/bench.md lists its flags,
// workloads and output).
//
// "paddock example" runs the roles of the ZooKeeper book's master–worker
// application (examples/masterworker; docs/master-worker.md).
//
// Flags may also be written Go-style with one dash (-json, -port 2181).
//
// Exit status: 0 on a clean shutdown, 1 when the server fails, 2 for a
// usage error or an invalid configuration (the error is printed on stderr).
//
// This package is wiring only: parsing lives in internal/config and serving
// in internal/server.
package main
