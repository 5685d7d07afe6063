// Package cli compares "paddock cli" with Apache ZooKeeper's zkCli.sh:
// the same scripted sessions, covering every command, run through both
// shells against the same server, Apache ZooKeeper 3.8 and then Paddock, must
// print the same output and exit with the same status once what must differ
// is normalised (session ids, times, zxids, the banner, session-state events,
// which arrive at times of their own, and the "Command not found" line zkCli
// adds after "help"). It needs Java and Debian's zookeeper package
// (/usr/share/zookeeper/bin/zkCli.sh).
package cli
