package proto

import "fmt"

// OpCode is a ZooKeeper request type (ZooDefs.OpCode).
type OpCode int32

// Opcodes of the client protocol.
const (
	OpNotification         OpCode = 0
	OpCreate               OpCode = 1
	OpDelete               OpCode = 2
	OpExists               OpCode = 3
	OpGetData              OpCode = 4
	OpSetData              OpCode = 5
	OpGetACL               OpCode = 6
	OpSetACL               OpCode = 7
	OpGetChildren          OpCode = 8
	OpSync                 OpCode = 9
	OpPing                 OpCode = 11
	OpGetChildren2         OpCode = 12
	OpCheck                OpCode = 13
	OpMulti                OpCode = 14
	OpCreate2              OpCode = 15
	OpReconfig             OpCode = 16
	OpCheckWatches         OpCode = 17
	OpRemoveWatches        OpCode = 18
	OpCreateContainer      OpCode = 19
	OpDeleteContainer      OpCode = 20
	OpCreateTTL            OpCode = 21
	OpMultiRead            OpCode = 22
	OpAuth                 OpCode = 100
	OpSetWatches           OpCode = 101
	OpSASL                 OpCode = 102
	OpGetEphemerals        OpCode = 103
	OpGetAllChildrenNumber OpCode = 104
	OpSetWatches2          OpCode = 105
	OpAddWatch             OpCode = 106
	OpWhoAmI               OpCode = 107
	OpCreateSession        OpCode = -10
	OpCloseSession         OpCode = -11
	OpError                OpCode = -1
)

var opNames = map[OpCode]string{
	OpNotification: "notification", OpCreate: "create", OpDelete: "delete", OpExists: "exists",
	OpGetData: "getData", OpSetData: "setData", OpGetACL: "getACL", OpSetACL: "setACL",
	OpGetChildren: "getChildren", OpSync: "sync", OpPing: "ping", OpGetChildren2: "getChildren2",
	OpCheck: "check", OpMulti: "multi", OpCreate2: "create2", OpReconfig: "reconfig",
	OpCheckWatches: "checkWatches", OpRemoveWatches: "removeWatches", OpCreateContainer: "createContainer",
	OpDeleteContainer: "deleteContainer", OpCreateTTL: "createTTL", OpMultiRead: "multiRead",
	OpAuth: "auth", OpSetWatches: "setWatches", OpSASL: "sasl", OpGetEphemerals: "getEphemerals",
	OpGetAllChildrenNumber: "getAllChildrenNumber", OpSetWatches2: "setWatches2", OpAddWatch: "addWatch",
	OpWhoAmI: "whoAmI", OpCreateSession: "createSession", OpCloseSession: "closeSession", OpError: "error",
}

// String returns ZooKeeper's name for the opcode.
func (o OpCode) String() string {
	if s, ok := opNames[o]; ok {
		return s
	}
	return fmt.Sprintf("op(%d)", int32(o))
}

// Special xids (ClientCnxn).
const (
	XidNotification int32 = -1
	XidPing         int32 = -2
	XidAuth         int32 = -4
	XidSetWatches   int32 = -8
)

// ErrCode is a KeeperException.Code value carried in ReplyHeader.Err.
type ErrCode int32

// Error codes.
const (
	ErrOK                           ErrCode = 0
	ErrSystemError                  ErrCode = -1
	ErrRuntimeInconsistency         ErrCode = -2
	ErrDataInconsistency            ErrCode = -3
	ErrConnectionLoss               ErrCode = -4
	ErrMarshallingError             ErrCode = -5
	ErrUnimplemented                ErrCode = -6
	ErrOperationTimeout             ErrCode = -7
	ErrBadArguments                 ErrCode = -8
	ErrUnknownSession               ErrCode = -12
	ErrNewConfigNoQuorum            ErrCode = -13
	ErrReconfigInProgress           ErrCode = -14
	ErrAPIError                     ErrCode = -100
	ErrNoNode                       ErrCode = -101
	ErrNoAuth                       ErrCode = -102
	ErrBadVersion                   ErrCode = -103
	ErrNoChildrenForEphemerals      ErrCode = -108
	ErrNodeExists                   ErrCode = -110
	ErrNotEmpty                     ErrCode = -111
	ErrSessionExpired               ErrCode = -112
	ErrInvalidCallback              ErrCode = -113
	ErrInvalidACL                   ErrCode = -114
	ErrAuthFailed                   ErrCode = -115
	ErrSessionMoved                 ErrCode = -118
	ErrNotReadOnly                  ErrCode = -119
	ErrEphemeralOnLocalSession      ErrCode = -120
	ErrNoWatcher                    ErrCode = -121
	ErrRequestTimeout               ErrCode = -122
	ErrReconfigDisabled             ErrCode = -123
	ErrSessionClosedRequireSASLAuth ErrCode = -124
	ErrQuotaExceeded                ErrCode = -125
	ErrThrottledOp                  ErrCode = -127
)

var errNames = map[ErrCode]string{
	ErrOK: "ok", ErrSystemError: "SystemError", ErrRuntimeInconsistency: "RuntimeInconsistency",
	ErrDataInconsistency: "DataInconsistency", ErrConnectionLoss: "ConnectionLoss",
	ErrMarshallingError: "MarshallingError", ErrUnimplemented: "Unimplemented",
	ErrOperationTimeout: "OperationTimeout", ErrBadArguments: "BadArguments",
	ErrUnknownSession: "UnknownSession", ErrNewConfigNoQuorum: "NewConfigNoQuorum",
	ErrReconfigInProgress: "ReconfigInProgress", ErrAPIError: "APIError", ErrNoNode: "NoNode",
	ErrNoAuth: "NoAuth", ErrBadVersion: "BadVersion", ErrNoChildrenForEphemerals: "NoChildrenForEphemerals",
	ErrNodeExists: "NodeExists", ErrNotEmpty: "Directory not empty", ErrSessionExpired: "Session expired",
	ErrInvalidCallback: "Invalid callback", ErrInvalidACL: "InvalidACL", ErrAuthFailed: "AuthFailed",
	ErrSessionMoved: "Session moved", ErrNotReadOnly: "Not a read-only call",
	ErrEphemeralOnLocalSession: "Ephemeral node on local session", ErrNoWatcher: "No such watcher",
	ErrRequestTimeout: "RequestTimeout", ErrReconfigDisabled: "Reconfig is disabled",
	ErrSessionClosedRequireSASLAuth: "Session closed because client failed to authenticate",
	ErrQuotaExceeded:                "Quota has exceeded", ErrThrottledOp: "Op throttled due to high load",
}

// String returns ZooKeeper's message text for the code.
func (e ErrCode) String() string {
	if s, ok := errNames[e]; ok {
		return s
	}
	return fmt.Sprintf("code(%d)", int32(e))
}

// Error makes ErrCode usable as an error value.
func (e ErrCode) Error() string { return "zookeeper error " + fmt.Sprint(int32(e)) + ": " + e.String() }

// Permission bits (ZooDefs.Perms).
const (
	PermRead   int32 = 1
	PermWrite  int32 = 2
	PermCreate int32 = 4
	PermDelete int32 = 8
	PermAdmin  int32 = 16
	PermAll    int32 = 31
)

// ID is an authentication identity: a scheme and an id within it.
type ID struct {
	Scheme string
	ID     string
}

// ACL grants Perms to an identity.
type ACL struct {
	Perms int32
	ID    ID
}

// Stat is the metadata ZooKeeper returns for a znode, fields in wire order.
type Stat struct {
	Czxid          int64
	Mzxid          int64
	Ctime          int64
	Mtime          int64
	Version        int32
	Cversion       int32
	Aversion       int32
	EphemeralOwner int64
	DataLength     int32
	NumChildren    int32
	Pzxid          int64
}

// Create flags (CreateMode).
const (
	FlagPersistent                  int32 = 0
	FlagEphemeral                   int32 = 1
	FlagPersistentSequential        int32 = 2
	FlagEphemeralSequential         int32 = 3
	FlagContainer                   int32 = 4
	FlagPersistentWithTTL           int32 = 5
	FlagPersistentSequentialWithTTL int32 = 6
)

// EventType is a watch event type (Watcher.Event.EventType).
type EventType int32

// Event types.
const (
	EventNone                   EventType = -1
	EventNodeCreated            EventType = 1
	EventNodeDeleted            EventType = 2
	EventNodeDataChanged        EventType = 3
	EventNodeChildrenChanged    EventType = 4
	EventDataWatchRemoved       EventType = 5
	EventChildWatchRemoved      EventType = 6
	EventPersistentWatchRemoved EventType = 7
)

// KeeperState values carried in WatcherEvent.State.
const (
	StateDisconnected      int32 = 0
	StateSyncConnected     int32 = 3
	StateAuthFailed        int32 = 4
	StateConnectedReadOnly int32 = 5
	StateExpired           int32 = -112
	StateClosed            int32 = 7
)

// WatcherType is the type argument of checkWatches/removeWatches.
type WatcherType int32

// Watcher types.
const (
	WatcherChildren            WatcherType = 1
	WatcherData                WatcherType = 2
	WatcherAny                 WatcherType = 3
	WatcherPersistent          WatcherType = 4
	WatcherPersistentRecursive WatcherType = 5
)

// AddWatch modes.
const (
	AddWatchPersistent          int32 = 0
	AddWatchPersistentRecursive int32 = 1
)

// DefaultMaxBuffer is jute.maxbuffer's default: the largest frame accepted.
const DefaultMaxBuffer = 0xfffff
