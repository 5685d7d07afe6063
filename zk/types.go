package zk

import (
	"crypto/sha1"
	"encoding/base64"
	"strconv"

	"github.com/paddockhq/paddock/internal/proto"
)

// Stat is a znode's metadata, exactly as ZooKeeper keeps it.
type Stat struct {
	Czxid          int64 // zxid of the change that created the znode
	Mzxid          int64 // zxid of the change that last modified its data
	Ctime          int64 // creation time, milliseconds since the epoch
	Mtime          int64 // last modification time, milliseconds since the epoch
	Version        int32 // number of changes to the data
	Cversion       int32 // number of changes to the children
	Aversion       int32 // number of changes to the ACL
	EphemeralOwner int64 // session id of the owner of an ephemeral node, else 0
	DataLength     int32 // length of the data
	NumChildren    int32 // number of children
	Pzxid          int64 // zxid of the last change to the children
}

// statFrom returns s as a *Stat, without a copy: s must belong to a
// response decoded for this one call, which the caller then owns.
func statFrom(s *proto.Stat) *Stat {
	return (*Stat)(s)
}

// ID is an identity in an authentication scheme: ("world", "anyone"),
// ("digest", "user:base64(sha1(user:password))"), ("ip", "10.0.0.0/8"), ...
type ID struct {
	Scheme string
	ID     string
}

// ACL grants Perms to an identity.
type ACL struct {
	Perms int32
	ID    ID
}

// Permission bits of an ACL.
const (
	PermRead   = proto.PermRead
	PermWrite  = proto.PermWrite
	PermCreate = proto.PermCreate
	PermDelete = proto.PermDelete
	PermAdmin  = proto.PermAdmin
	PermAll    = proto.PermAll
)

// WorldACL grants perms to everyone (ZooDefs.Ids.OPEN_ACL_UNSAFE is
// WorldACL(PermAll)).
func WorldACL(perms int32) []ACL {
	return []ACL{{Perms: perms, ID: ID{Scheme: "world", ID: "anyone"}}}
}

// AuthACL grants perms to every identity the creating session has
// authenticated as (ZooDefs.Ids.CREATOR_ALL_ACL is AuthACL(PermAll)).
func AuthACL(perms int32) []ACL {
	return []ACL{{Perms: perms, ID: ID{Scheme: "auth", ID: ""}}}
}

// DigestACL grants perms to the digest user with this password: the id is
// user:base64(sha1("user:password")), as ZooKeeper's
// DigestAuthenticationProvider computes it.
func DigestACL(perms int32, user, password string) []ACL {
	sum := sha1.Sum([]byte(user + ":" + password))
	return []ACL{{Perms: perms, ID: ID{Scheme: "digest", ID: user + ":" + base64.StdEncoding.EncodeToString(sum[:])}}}
}

// Commonly used ACLs, as ZooDefs.Ids names them.
var (
	// OpenACL lets anyone do anything (OPEN_ACL_UNSAFE).
	OpenACL = WorldACL(PermAll)
	// ReadACL lets anyone read (READ_ACL_UNSAFE).
	ReadACL = WorldACL(PermRead)
	// CreatorACL gives every permission to the creator's identities
	// (CREATOR_ALL_ACL).
	CreatorACL = AuthACL(PermAll)
)

// aclsToProto converts an ACL for the wire; nil becomes an empty list, as
// the Java client never sends a null one.
func aclsToProto(acl []ACL) []proto.ACL {
	out := make([]proto.ACL, len(acl))
	for i, a := range acl {
		out[i] = proto.ACL{Perms: a.Perms, ID: proto.ID{Scheme: a.ID.Scheme, ID: a.ID.ID}}
	}
	return out
}

func aclsFromProto(acl []proto.ACL) []ACL {
	if acl == nil {
		return nil
	}
	out := make([]ACL, len(acl))
	for i, a := range acl {
		out[i] = ACL{Perms: a.Perms, ID: ID{Scheme: a.ID.Scheme, ID: a.ID.ID}}
	}
	return out
}

// CreateMode is the kind of znode Create makes (ZooKeeper's CreateMode).
type CreateMode int32

// Create modes.
const (
	ModePersistent                  CreateMode = CreateMode(proto.FlagPersistent)
	ModeEphemeral                   CreateMode = CreateMode(proto.FlagEphemeral)
	ModePersistentSequential        CreateMode = CreateMode(proto.FlagPersistentSequential)
	ModeEphemeralSequential         CreateMode = CreateMode(proto.FlagEphemeralSequential)
	ModeContainer                   CreateMode = CreateMode(proto.FlagContainer)
	ModePersistentWithTTL           CreateMode = CreateMode(proto.FlagPersistentWithTTL)
	ModePersistentSequentialWithTTL CreateMode = CreateMode(proto.FlagPersistentSequentialWithTTL)
)

// IsSequential reports whether the server appends a sequence number.
func (m CreateMode) IsSequential() bool {
	return m == ModePersistentSequential || m == ModeEphemeralSequential || m == ModePersistentSequentialWithTTL
}

// IsEphemeral reports whether the znode goes away with the session.
func (m CreateMode) IsEphemeral() bool {
	return m == ModeEphemeral || m == ModeEphemeralSequential
}

// IsTTL reports whether the mode needs a TTL (CreateTTL).
func (m CreateMode) IsTTL() bool {
	return m == ModePersistentWithTTL || m == ModePersistentSequentialWithTTL
}

func (m CreateMode) valid() bool { return m >= ModePersistent && m <= ModePersistentSequentialWithTTL }

// String returns ZooKeeper's name for the mode.
func (m CreateMode) String() string {
	switch m {
	case ModePersistent:
		return "PERSISTENT"
	case ModeEphemeral:
		return "EPHEMERAL"
	case ModePersistentSequential:
		return "PERSISTENT_SEQUENTIAL"
	case ModeEphemeralSequential:
		return "EPHEMERAL_SEQUENTIAL"
	case ModeContainer:
		return "CONTAINER"
	case ModePersistentWithTTL:
		return "PERSISTENT_WITH_TTL"
	case ModePersistentSequentialWithTTL:
		return "PERSISTENT_SEQUENTIAL_WITH_TTL"
	}
	return "CreateMode(" + strconv.Itoa(int(m)) + ")"
}

// EventType is the type of a watch event (Watcher.Event.EventType).
type EventType int32

// Event types. EventNone carries a change of session state.
const (
	EventNone                   = EventType(proto.EventNone)
	EventNodeCreated            = EventType(proto.EventNodeCreated)
	EventNodeDeleted            = EventType(proto.EventNodeDeleted)
	EventNodeDataChanged        = EventType(proto.EventNodeDataChanged)
	EventNodeChildrenChanged    = EventType(proto.EventNodeChildrenChanged)
	EventDataWatchRemoved       = EventType(proto.EventDataWatchRemoved)
	EventChildWatchRemoved      = EventType(proto.EventChildWatchRemoved)
	EventPersistentWatchRemoved = EventType(proto.EventPersistentWatchRemoved)
)

// String returns ZooKeeper's name for the type.
func (t EventType) String() string {
	switch t {
	case EventNone:
		return "None"
	case EventNodeCreated:
		return "NodeCreated"
	case EventNodeDeleted:
		return "NodeDeleted"
	case EventNodeDataChanged:
		return "NodeDataChanged"
	case EventNodeChildrenChanged:
		return "NodeChildrenChanged"
	case EventDataWatchRemoved:
		return "DataWatchRemoved"
	case EventChildWatchRemoved:
		return "ChildWatchRemoved"
	case EventPersistentWatchRemoved:
		return "PersistentWatchRemoved"
	}
	return "EventType(" + strconv.Itoa(int(t)) + ")"
}

// State is the state of the session (Watcher.Event.KeeperState), carried by
// every event.
type State int32

// Session states. Expired, AuthFailed and Closed are final: the Conn makes no
// more calls after them.
const (
	StateDisconnected      = State(proto.StateDisconnected)
	StateSyncConnected     = State(proto.StateSyncConnected)
	StateAuthFailed        = State(proto.StateAuthFailed)
	StateConnectedReadOnly = State(proto.StateConnectedReadOnly)
	StateExpired           = State(proto.StateExpired)
	StateClosed            = State(proto.StateClosed)
)

// String returns ZooKeeper's name for the state.
func (s State) String() string {
	switch s {
	case StateDisconnected:
		return "Disconnected"
	case StateSyncConnected:
		return "SyncConnected"
	case StateAuthFailed:
		return "AuthFailed"
	case StateConnectedReadOnly:
		return "ConnectedReadOnly"
	case StateExpired:
		return "Expired"
	case StateClosed:
		return "Closed"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// final reports whether the session can never be used again.
func (s State) final() bool {
	return s == StateExpired || s == StateAuthFailed || s == StateClosed
}

// Connected reports whether the state is one in which calls are sent.
func (s State) Connected() bool {
	return s == StateSyncConnected || s == StateConnectedReadOnly
}

// Event is a watch notification or a change of session state.
type Event struct {
	Type  EventType
	State State
	// Path is the znode the event is about, relative to the chroot; ""
	// for session events.
	Path string
	// Zxid is the zxid of the change that fired the event when the server
	// says (Paddock and ZooKeeper 3.9 do), else -1.
	Zxid int64
}

// Watcher receives events: watch notifications of the calls it was passed
// to, and every change of session state while it is registered (as the
// Java client's watchers do). Process runs on the Conn's delivery
// goroutine; see the package documentation.
type Watcher interface {
	Process(Event)
}

// WatcherFunc adapts a function to the Watcher interface.
type WatcherFunc func(Event)

// Process calls f(e).
func (f WatcherFunc) Process(e Event) { f(e) }
