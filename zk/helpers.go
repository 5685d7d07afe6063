package zk

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
)

// Retry calls fn until it returns nil or an error other than
// ErrConnectionLoss, or until ctx ends, pausing between attempts (10 ms,
// doubling up to 1 s). It returns fn's last error, or ctx's error wrapped
// with it.
//
// Connection loss leaves a write's outcome unknown: retrying a create may
// fail with ErrNodeExists because the first attempt succeeded, and retrying a
// sequential create may make two znodes — see CreateProtected.
func Retry(ctx context.Context, fn func(ctx context.Context) error) error {
	pause := 10 * time.Millisecond
	for {
		err := fn(ctx)
		if err == nil || !errors.Is(err, ErrConnectionLoss) {
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(ctx.Err(), err)
		case <-t.C:
		}
		pause = min(pause*2, time.Second)
	}
}

// ProtectedPrefix starts the name of every znode made by CreateProtected,
// as in Apache Curator ("_c_" and a GUID), so that tools recognise them.
const ProtectedPrefix = "_c_"

// CreateProtected creates a znode like Create, retrying on connection
// loss without ever making two: the last path component gets the prefix
// "_c_<guid>-", and after a connection loss the parent's children are
// searched for that prefix before trying again. This answers the question
// the ZooKeeper book asks of sequential znodes after a connection loss: "has
// my znode been created?". The search follows a Sync of the parent, so that
// a server that had not applied the lost create when the Conn reconnected to
// it answers with it. It returns the created path; with
// ParseProtectedName a reader recovers the name given.
func (c *Conn) CreateProtected(ctx context.Context, path string, data []byte, acl []ACL, mode CreateMode) (string, error) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return "", checkPath(proto.OpCreate, path, mode.IsSequential())
	}
	parent, name := path[:i], path[i+1:]
	guid, err := newGUID()
	if err != nil {
		return "", err
	}
	prefix := ProtectedPrefix + guid + "-"
	full := parent + "/" + prefix + name
	if parent == "" {
		parent = "/"
	}
	var created string
	lost := false // a create's answer was lost: look before creating again
	err = Retry(ctx, func(ctx context.Context) error {
		if lost {
			// Did the lost create happen? Look for our prefix. Until
			// this look succeeds, no attempt creates again. The server
			// reconnected to may not have applied the lost create yet
			// (a follower behind the leader): sync first, so that the
			// listing sees every write the leader made before it.
			if _, serr := c.Sync(ctx, parent); serr != nil {
				return serr
			}
			children, _, lerr := c.Children(ctx, parent)
			if lerr != nil {
				return lerr
			}
			for _, ch := range children {
				if strings.HasPrefix(ch, prefix) {
					if parent == "/" {
						created = "/" + ch
					} else {
						created = parent + "/" + ch
					}
					return nil
				}
			}
		}
		name, err := c.Create(ctx, full, data, acl, mode)
		if err == nil {
			created = name
			return nil
		}
		lost = lost || errors.Is(err, ErrConnectionLoss)
		return err
	})
	return created, err
}

// ParseProtectedName returns the name a CreateProtected znode was given
// (the part after "_c_<guid>-"), and whether name is such a name.
func ParseProtectedName(name string) (string, bool) {
	if !strings.HasPrefix(name, ProtectedPrefix) || len(name) < len(ProtectedPrefix)+37 || name[len(ProtectedPrefix)+36] != '-' {
		return name, false
	}
	return name[len(ProtectedPrefix)+37:], true
}

func newGUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // variant
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}

// ChanWatcher is a Watcher that sends watch events to a channel, for code
// that prefers receiving to callbacks. Session state changes are not sent,
// except a final one (Expired, AuthFailed, Closed), after which the channel
// is closed.
//
// When the channel is full, Process blocks, holding up the Conn's delivery
// goroutine until the consumer receives: a slow consumer slows its Conn's
// delivery and never loses an event. A final event that finds the channel
// full is left out; the channel is closed all the same.
type ChanWatcher struct {
	// C receives the events.
	C <-chan Event

	c      chan Event
	mu     sync.Mutex
	closed bool
}

// NewChanWatcher returns a ChanWatcher whose channel buffers capacity
// events; 1 suits a one-time watch.
func NewChanWatcher(capacity int) *ChanWatcher {
	ch := make(chan Event, max(capacity, 0))
	return &ChanWatcher{C: ch, c: ch}
}

// Process sends e to the channel as described on ChanWatcher.
func (w *ChanWatcher) Process(e Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if e.Type != EventNone {
		w.c <- e
		return
	}
	if !e.State.final() {
		return
	}
	select {
	case w.c <- e:
	default:
	}
	close(w.c)
	w.closed = true
}
