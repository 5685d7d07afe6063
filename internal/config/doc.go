// Package config holds Paddock's server configuration and reads it from
// Apache ZooKeeper's zoo.cfg format.
//
// # Contract
//
// A [Config] is a plain struct: [Default] returns Paddock's defaults, and
// [Parse] and [Load] return a Config built from a zoo.cfg (a Java properties
// file) plus optional overrides, with every derived value filled in and
// [Config.Validate] already passed. The package keeps no global state and
// reads no environment variables; [Load] is the only function that touches the
// file system (the config file and the myid file in the data directory).
//
// Values are applied in this order, later ones winning: Paddock's defaults, the
// zoo.cfg keys, the overrides (command-line flags expressed as zoo.cfg keys,
// see [Setting]). Derived values (session timeout bounds from tickTime,
// dataLogDir from dataDir) are computed once, after all three.
//
// # Keys
//
// Every key is either handled (it sets a Config field), known but ignored
// (listed in [Config.IgnoredKeys] so the caller can log it at debug level),
// known but unsupported (a warning saying Paddock ignores it), or unknown
// (a warning). Warnings are never fatal. A handled key with a malformed value
// fails with a [*KeyError] naming the key, the value and where it came from.
// Range checks happen in [Config.Validate] and name the key too.
//
// ZooKeeper turns zoo.cfg keys it does not parse itself into Java system
// properties named "zookeeper.<key>". For the keys ZooKeeper reads as system
// properties (4lw.commands.whitelist, globalOutstandingLimit, snapCount,
// jute.maxbuffer, extendedTypesEnabled, clientTcpKeepAlive,
// DigestAuthenticationProvider.superDigest, znode.container.*) Paddock accepts
// both spellings, with and without the "zookeeper." prefix.
//
// As in ZooKeeper 3.5+, a dynamicConfigFile key names a second file that
// holds the ensemble: [Load] reads its server.N lines (group and weight
// lines are warned about; any other key is an error), and refuses server.N
// lines in the zoo.cfg itself. A relative path is relative to the working
// directory, as in ZooKeeper. [Parse] reads no files and fails on the key.
//
// # Differences from ZooKeeper
//
//   - tickTime defaults to 2000 ms (ZooKeeper's sample value; its code default
//     is 3000 ms and it refuses to start without one).
//   - dataDir defaults to ./paddock-data; ZooKeeper requires it.
//   - With no zoo.cfg the client port listens on 127.0.0.1:2181. When a zoo.cfg
//     is read, ZooKeeper's rule applies: clientPort without clientPortAddress
//     listens on all interfaces (ClientPortAddress ""). A zoo.cfg without
//     clientPort keeps Paddock's 127.0.0.1:2181 (ZooKeeper would open no plain
//     client port at all).
//   - When the zoo.cfg sets neither clientPort nor clientPortAddress, the
//     client address of this server's own server.N line ("...;[host:]port")
//     is used, as ZooKeeper does for dynamic configs. (ZooKeeper also lets
//     that line win over clientPort, and fails when they differ.)
//   - clientPort 0 means "any free port" (useful for tests), not "no port".
//   - autopurge.purgeInterval does not schedule anything: the server purges
//     after each snapshot, keeping autopurge.snapRetainCount snapshots, even
//     with purgeInterval 0, with which ZooKeeper never purges.
//   - jute.maxbuffer and znode.container.* are read from zoo.cfg; ZooKeeper
//     reads them only as JVM system properties (-D flags). A jute.maxbuffer
//     below 1 is a warning and keeps the default (ZooKeeper, which ignores
//     the key in zoo.cfg, starts with its default too).
//   - A negative maxClientCnxns becomes 0 (unlimited, as ZooKeeper treats any
//     value below 1), a negative autopurge.purgeInterval becomes 0, and a
//     globalOutstandingLimit below 1 becomes 1 with a warning; ZooKeeper keeps
//     the value as given (its conf four-letter word shows maxClientCnxns=-1).
//   - The file is read as UTF-8; Java's Properties.load reads ISO-8859-1.
//   - The keys ZooKeeper reads as system properties with Integer.getInteger
//     (jute.maxbuffer, snapCount, globalOutstandingLimit, znode.container.*,
//     fsync.warningthresholdms) accept what Integer.decode does: a sign, then
//     decimal or hex after 0x, 0X or #; but a leading 0 is decimal (Java would
//     read it as octal), and a malformed value is an error (Java silently
//     uses the default).
//   - The myid file is read in standalone mode too (ZooKeeper skips it); a
//     malformed one is then only a warning. An ensemble member without one
//     fails, as in ZooKeeper.
//   - A server's role is its server.N line's, as in ZooKeeper; a peerType
//     that disagrees is a warning. ZooKeeper also warns when peerType is
//     absent on an observer (it defaults to participant); Paddock does not.
//   - clientPortAddress without clientPort fails, as in ZooKeeper, unless an
//     override (the --port flag) supplies the port.
package config
