// Package sidebyside benchmarks Paddock and Apache ZooKeeper 3.8 in the same
// run, with the same client (go-zookeeper/zk), the same settings (fsync on,
// tickTime 2000, loopback) and the same load: 64 concurrent sessions, 100-byte
// values. Each benchmark runs ZooKeeper then Paddock, so with -count=N the two
// alternate and machine drift hits both. See docs/benchmarks.md.
package sidebyside
