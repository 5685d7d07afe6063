package paddocktest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"path"
	"time"

	"github.com/paddockhq/paddock/paddocktest"
	"github.com/paddockhq/paddock/zk"
)

// Registry is the code under test: workers announce themselves with an
// ephemeral znode under /workers, and anyone can list them.
type Registry struct{ conn *zk.Conn }

// Register announces a worker. It retries on connection loss, which a
// change of leader causes, and treats "already there" as success (the
// retried create may have gone through the first time).
func (r *Registry) Register(ctx context.Context, name string) error {
	return zk.Retry(ctx, func(ctx context.Context) error {
		_, err := r.conn.Create(ctx, "/workers", nil, zk.OpenACL, zk.ModePersistent)
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return err
		}
		_, err = r.conn.Create(ctx, path.Join("/workers", name), nil, zk.OpenACL, zk.ModeEphemeral)
		if errors.Is(err, zk.ErrNodeExists) {
			return nil
		}
		return err
	})
}

// Workers lists the workers.
func (r *Registry) Workers(ctx context.Context) ([]string, error) {
	var names []string
	err := zk.Retry(ctx, func(ctx context.Context) error {
		var err error
		names, _, err = r.conn.Children(ctx, "/workers")
		return err
	})
	return names, err
}

// A test of Registry against a three-member ensemble that loses its
// leader. In a test function, paddocktest.Start(t, opts) does what New
// and Close do here, and fails the test if the ensemble cannot start.
func Example() {
	ens, err := paddocktest.New(paddocktest.Options{Members: 3})
	if err != nil {
		log.Fatal(err)
	}
	defer ens.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	conn, err := zk.Connect(ctx, ens.ConnectString())
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	reg := &Registry{conn: conn}
	if err := reg.Register(ctx, "alpha"); err != nil {
		log.Fatal(err)
	}

	// The leader dies. The ensemble elects another; the session, and with
	// it the ephemeral znode, survives.
	leader, err := ens.Leader(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if err := leader.Kill(); err != nil {
		log.Fatal(err)
	}
	if err := reg.Register(ctx, "beta"); err != nil {
		log.Fatal(err)
	}
	workers, err := reg.Workers(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(workers), "workers")

	// The old leader comes back as a follower with everything it missed.
	if err := leader.Restart(); err != nil {
		log.Fatal(err)
	}
	if err := ens.WaitServing(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("the old leader is back as a", leader.Mode())
	// Output:
	// 2 workers
	// the old leader is back as a follower
}
