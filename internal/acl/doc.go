// Package acl implements ZooKeeper's access control as Apache ZooKeeper 3.9
// decides it: permission checks against a caller's authenticated identities
// (ZooKeeperServer.checkACL), the validation and rewriting of the ACL lists
// clients send (PrepRequestProcessor.fixupACL), and the digest and ip schemes
// (DigestAuthenticationProvider, IPAuthenticationProvider).
//
// The package is pure: no I/O, no clock, no state, safe for concurrent use.
// Package fsm calls Allowed and Fixup while applying log entries, so their
// answers must depend only on their arguments; the server calls Allowed for
// reads and watch delivery and DigestFromAuth for AuthPackets.
//
// Identities are proto.IDs: {Digest, "user:base64(sha1(user:password))"} after
// a digest AuthPacket, {IP, "address"} for a connection's peer, and
// {Super, ""} for the super user, which passes every check.
package acl
