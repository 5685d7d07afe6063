package zk

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/paddockhq/paddock/internal/proto"
)

// Error is a ZooKeeper error code (KeeperException.Code) as a Go error.
// Every sentinel below is an *Error; compare with errors.Is, which sees
// through the *OpError and *MultiError wrappers every call adds:
//
//	if errors.Is(err, zk.ErrNoNode) { ... }
type Error struct {
	code int32
	msg  string
}

// Error returns "zk: " and ZooKeeper's text for the code.
func (e *Error) Error() string { return "zk: " + e.msg }

// Code returns the numeric code as ZooKeeper sends it on the wire.
func (e *Error) Code() int32 { return e.code }

func newError(code proto.ErrCode, msg string) *Error {
	return &Error{code: int32(code), msg: msg}
}

// Sentinels, one per ZooKeeper error code.
var (
	ErrSystemError                  = newError(proto.ErrSystemError, "system error")
	ErrRuntimeInconsistency         = newError(proto.ErrRuntimeInconsistency, "runtime inconsistency")
	ErrDataInconsistency            = newError(proto.ErrDataInconsistency, "data inconsistency")
	ErrConnectionLoss               = newError(proto.ErrConnectionLoss, "connection loss")
	ErrMarshallingError             = newError(proto.ErrMarshallingError, "marshalling error")
	ErrUnimplemented                = newError(proto.ErrUnimplemented, "unimplemented")
	ErrOperationTimeout             = newError(proto.ErrOperationTimeout, "operation timeout")
	ErrBadArguments                 = newError(proto.ErrBadArguments, "bad arguments")
	ErrUnknownSession               = newError(proto.ErrUnknownSession, "unknown session")
	ErrNewConfigNoQuorum            = newError(proto.ErrNewConfigNoQuorum, "no quorum of new config is connected")
	ErrReconfigInProgress           = newError(proto.ErrReconfigInProgress, "reconfig in progress")
	ErrAPIError                     = newError(proto.ErrAPIError, "API error")
	ErrNoNode                       = newError(proto.ErrNoNode, "node does not exist")
	ErrNoAuth                       = newError(proto.ErrNoAuth, "not authenticated")
	ErrBadVersion                   = newError(proto.ErrBadVersion, "bad version")
	ErrNoChildrenForEphemerals      = newError(proto.ErrNoChildrenForEphemerals, "ephemeral nodes may not have children")
	ErrNodeExists                   = newError(proto.ErrNodeExists, "node already exists")
	ErrNotEmpty                     = newError(proto.ErrNotEmpty, "node has children")
	ErrSessionExpired               = newError(proto.ErrSessionExpired, "session expired")
	ErrInvalidCallback              = newError(proto.ErrInvalidCallback, "invalid callback")
	ErrInvalidACL                   = newError(proto.ErrInvalidACL, "invalid ACL specified")
	ErrAuthFailed                   = newError(proto.ErrAuthFailed, "authentication failed")
	ErrSessionMoved                 = newError(proto.ErrSessionMoved, "session moved")
	ErrNotReadOnly                  = newError(proto.ErrNotReadOnly, "not a read-only call")
	ErrEphemeralOnLocalSession      = newError(proto.ErrEphemeralOnLocalSession, "ephemeral node on local session")
	ErrNoWatcher                    = newError(proto.ErrNoWatcher, "no watcher")
	ErrRequestTimeout               = newError(proto.ErrRequestTimeout, "request timeout")
	ErrReconfigDisabled             = newError(proto.ErrReconfigDisabled, "reconfig is disabled")
	ErrSessionClosedRequireSASLAuth = newError(proto.ErrSessionClosedRequireSASLAuth, "session closed because client failed to authenticate")
	ErrQuotaExceeded                = newError(proto.ErrQuotaExceeded, "quota has exceeded")
	ErrThrottledOp                  = newError(proto.ErrThrottledOp, "op throttled due to high load")
)

// Errors that are not ZooKeeper codes but arise in the client.
var (
	// ErrClosed is returned by calls made after Close, and by calls that
	// were waiting when Close ended the session.
	ErrClosed = errors.New("zk: connection closed")
	// ErrInvalidPath reports a path that ZooKeeper would refuse; the call
	// is not sent. The wrapping error says what is wrong with it.
	ErrInvalidPath = errors.New("zk: invalid path")
	// ErrNoServer is returned by Connect when no server could be reached
	// before its context ended; it wraps the last dial or handshake error.
	ErrNoServer = errors.New("zk: could not connect to a server")
	// ErrBadConnectString reports a connect string Connect cannot parse.
	ErrBadConnectString = errors.New("zk: bad connect string")
)

// errByCode is the one table from wire codes to errors.
var errByCode = func() map[proto.ErrCode]*Error {
	m := make(map[proto.ErrCode]*Error)
	for _, e := range []*Error{
		ErrSystemError, ErrRuntimeInconsistency, ErrDataInconsistency, ErrConnectionLoss,
		ErrMarshallingError, ErrUnimplemented, ErrOperationTimeout, ErrBadArguments,
		ErrUnknownSession, ErrNewConfigNoQuorum, ErrReconfigInProgress, ErrAPIError,
		ErrNoNode, ErrNoAuth, ErrBadVersion, ErrNoChildrenForEphemerals, ErrNodeExists,
		ErrNotEmpty, ErrSessionExpired, ErrInvalidCallback, ErrInvalidACL, ErrAuthFailed,
		ErrSessionMoved, ErrNotReadOnly, ErrEphemeralOnLocalSession, ErrNoWatcher,
		ErrRequestTimeout, ErrReconfigDisabled, ErrSessionClosedRequireSASLAuth,
		ErrQuotaExceeded, ErrThrottledOp,
	} {
		m[proto.ErrCode(e.code)] = e
	}
	return m
}()

// codeError returns the error for a wire code: nil for ErrOK, the sentinel
// when there is one, and a fresh *Error for a code this client does not know.
func codeError(code proto.ErrCode) error {
	if code == proto.ErrOK {
		return nil
	}
	if e, ok := errByCode[code]; ok {
		return e
	}
	return &Error{code: int32(code), msg: "unknown error code " + strconv.Itoa(int(code))}
}

// ErrorCode returns the ZooKeeper code carried by err (0 for nil, and
// ErrSystemError's code for an error that carries none).
func ErrorCode(err error) int32 {
	if err == nil {
		return 0
	}
	var e *Error
	if errors.As(err, &e) {
		return e.code
	}
	return ErrSystemError.code
}

// OpError is the error every operation returns: the operation and the path
// it was called with, and the cause (a sentinel such as ErrNoNode, or a
// *MultiError). errors.Is and errors.As see through it.
type OpError struct {
	Op   string // ZooKeeper's name of the operation: "create", "getData", ...
	Path string // the path as the caller gave it ("" for calls without one)
	Err  error
}

// Error returns "zk: <op> <path>: <cause>".
func (e *OpError) Error() string {
	msg := bareMessage(e.Err)
	if e.Path == "" {
		return "zk: " + e.Op + ": " + msg
	}
	return "zk: " + e.Op + " " + e.Path + ": " + msg
}

// Unwrap returns the cause.
func (e *OpError) Unwrap() error { return e.Err }

func opError(op proto.OpCode, path string, err error) error {
	if err == nil {
		return nil
	}
	return &OpError{Op: op.String(), Path: path, Err: err}
}

// MultiError says which operation of a multi made the whole transaction fail,
// and why. errors.Is(err, ErrBadVersion) holds for a multi that failed on a
// check or a versioned set.
type MultiError struct {
	Index int    // position of the failed operation in the call's ops
	Op    string // its ZooKeeper name ("check", "setData", ...)
	Path  string // its path
	Err   error  // why it failed
}

// Error says which operation failed and why.
func (e *MultiError) Error() string {
	return fmt.Sprintf("op %d (%s %s): %s", e.Index, e.Op, e.Path, bareMessage(e.Err))
}

// bareMessage returns err's text without a leading "zk: ".
func bareMessage(err error) string {
	return strings.TrimPrefix(err.Error(), "zk: ")
}

// Unwrap returns the cause.
func (e *MultiError) Unwrap() error { return e.Err }
