package recipe

import (
	"errors"
	"time"

	"github.com/paddockhq/paddock/zk"
)

// Option configures a recipe. Each recipe reads the options that concern it
// and ignores the others.
type Option func(*options)

type options struct {
	acl      []zk.ACL
	data     []byte
	grace    time.Duration
	graceSet bool
	oneTime  bool
}

func buildOptions(opts []Option) options {
	o := options{acl: zk.OpenACL}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// WithACL sets the ACL of every znode the recipe creates (its directory
// and the nodes under it). The default is zk.OpenACL.
func WithACL(acl []zk.ACL) Option {
	return func(o *options) {
		if len(acl) > 0 {
			o.acl = acl
		}
	}
}

// WithNodeData sets the data stored in the node a Lock, a read or write
// lock, a DoubleBarrier participant or a Membership creates (a lock's node
// usually names its holder). Elections and latches store the candidate's
// id, given to Campaign or NewLeaderLatch, instead.
func WithNodeData(data []byte) Option {
	return func(o *options) { o.data = append([]byte(nil), data...) }
}

// WithDisconnectGrace sets how long a holder (of a lock, a leadership or a
// membership) may stay without a connection to a read-write server before
// its hold counts as lost and Lost is closed. The default is a quarter of
// the negotiated session timeout; see the package documentation for why.
// Zero makes every disconnection a loss.
func WithDisconnectGrace(d time.Duration) Option {
	return func(o *options) { o.grace, o.graceSet = max(d, 0), true }
}

// WithOneTimeWatches makes a NodeCache or TreeCache use one-time watches
// (getData and getChildren with a watch, set again after each event) even
// when the server supports persistent watches. Caches fall back to them by
// themselves on servers that answer addWatch with ErrUnimplemented.
func WithOneTimeWatches() Option {
	return func(o *options) { o.oneTime = true }
}

// graceFor returns the disconnect grace for a session with timeout t.
func (o options) graceFor(t time.Duration) time.Duration {
	if o.graceSet {
		return o.grace
	}
	return t / 4
}

// Errors of the recipes. Errors of the server calls (zk.ErrSessionExpired,
// zk.ErrNoAuth, ...) are returned as the zk package returns them.
var (
	// ErrHeld is returned by Lock, TryLock, Campaign and Join when the
	// recipe value already holds, or is acquiring, what it is asked to
	// acquire: a value is one contender.
	ErrHeld = errors.New("recipe: already held or being acquired")
	// ErrNotHeld is returned by Unlock, Resign and Leave when there is
	// nothing to release.
	ErrNotHeld = errors.New("recipe: not held")
	// ErrNodeDeleted is returned to a contender still waiting whose own
	// node was deleted by someone else.
	ErrNodeDeleted = errors.New("recipe: own node was deleted")
	// ErrNoLeader is returned by Election.Leader when nobody campaigns.
	ErrNoLeader = errors.New("recipe: no leader")
	// ErrClosed is returned by a recipe used after Close.
	ErrClosed = errors.New("recipe: closed")
	// ErrNotStarted is returned by the accessors of a watcher or cache
	// whose Start has not succeeded.
	ErrNotStarted = errors.New("recipe: not started")
	// ErrDisconnected is the cause of a hold lost because the session had
	// no read-write server for longer than the disconnect grace.
	ErrDisconnected = errors.New("recipe: disconnected for longer than the grace period")
	// ErrBadCount is returned by a DoubleBarrier made with a count below 1.
	ErrBadCount = errors.New("recipe: participant count must be at least 1")
	// ErrEmptyData is returned by Rendezvous.Publish with no data: an
	// empty node is what Await waits on.
	ErrEmptyData = errors.New("recipe: rendezvous data must not be empty")
)
