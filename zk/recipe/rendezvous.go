package recipe

import (
	"context"
	"errors"

	"github.com/paddockhq/paddock/zk"
)

// Rendezvous is the rendezvous of the ZooKeeper paper: a client that starts
// a master and workers hands them the path of a rendezvous znode; the
// master, once it runs, publishes its details (an address, say) there, and
// the workers wait until they are there. The znode is filled when it exists
// with non-empty data.
type Rendezvous struct {
	conn *zk.Conn
	path string
	opts options
}

// NewRendezvous returns the rendezvous at the znode path.
func NewRendezvous(conn *zk.Conn, path string, opts ...Option) *Rendezvous {
	return &Rendezvous{conn: conn, path: cleanPath(path), opts: buildOptions(opts)}
}

// Create creates the empty rendezvous znode (and its parents), as the
// client that starts the master and workers does. A znode that exists is
// left as it is.
func (r *Rendezvous) Create(ctx context.Context) error {
	_, err := create(ctx, r.conn, r.path, nil, r.opts.acl, zk.ModePersistent)
	if errors.Is(err, zk.ErrNodeExists) {
		return nil
	}
	return err
}

// Publish fills the rendezvous with data (creating the znode if need be),
// waking every worker waiting in Await.
func (r *Rendezvous) Publish(ctx context.Context, data []byte) error {
	if len(data) == 0 {
		return ErrEmptyData
	}
	for {
		err := zk.Retry(ctx, func(ctx context.Context) error {
			_, err := r.conn.Set(ctx, r.path, data, -1)
			return err
		})
		if !errors.Is(err, zk.ErrNoNode) {
			return err
		}
		_, err = create(ctx, r.conn, r.path, data, r.opts.acl, zk.ModePersistent)
		if !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
		// Created meanwhile (by Create, or by our own create whose answer
		// was lost): set it.
	}
}

// Await waits until the rendezvous is filled and returns its data, or
// returns when ctx ends or the session is over.
func (r *Rendezvous) Await(ctx context.Context) ([]byte, error) {
	s := newSignal()
	defer removeWatcher(r.conn, r.path, s)
	for {
		var data []byte
		err := zk.Retry(ctx, func(ctx context.Context) error {
			var err error
			data, _, err = r.conn.GetW(ctx, r.path, s)
			return err
		})
		switch {
		case err == nil && len(data) > 0:
			return data, nil
		case errors.Is(err, zk.ErrNoNode):
			var exists bool
			err := zk.Retry(ctx, func(ctx context.Context) error {
				var err error
				exists, _, err = r.conn.ExistsW(ctx, r.path, s)
				return err
			})
			if err != nil {
				return nil, err
			}
			if exists {
				continue
			}
		case err != nil:
			return nil, err
		}
		if err := wait(ctx, s); err != nil {
			return nil, err
		}
	}
}
