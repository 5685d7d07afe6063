package server

import (
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/tree"
)

// TestEnforceQuota: with enforceQuota a client's create past a hard quota
// is answered QUOTAEXCEEDED, single or in a multi; without it the same
// create succeeds (the quota is only counted).
func TestEnforceQuota(t *testing.T) {
	for _, enforce := range []bool{true, false} {
		s := startServer(t, func(c *config.Config) { c.EnforceQuota = enforce })
		c := dial(t, s.Addr().String())
		create := func(path, data string) proto.ErrCode {
			t.Helper()
			h, _ := c.call(proto.OpCreate, &proto.CreateRequest{Path: path, Data: []byte(data), ACL: tree.OpenACL}, nil)
			return h.Err
		}
		for _, p := range []string{"/q", "/zookeeper/quota/q"} {
			if err := create(p, ""); err != proto.ErrOK {
				t.Fatalf("create %s: %v", p, err)
			}
		}
		for _, p := range []string{"/zookeeper/quota/q/zookeeper_limits", "/zookeeper/quota/q/zookeeper_stats"} {
			if err := create(p, "count=-1,bytes=-1=;countHardLimit=2"); err != proto.ErrOK {
				t.Fatalf("create %s: %v", p, err)
			}
		}
		if err := create("/q/a", ""); err != proto.ErrOK {
			t.Fatalf("create within the quota: %v", err)
		}
		want := proto.ErrOK
		if enforce {
			want = proto.ErrQuotaExceeded
		}
		if err := create("/q/b", ""); err != want {
			t.Fatalf("enforceQuota=%v: create past the hard limit: %v, want %v", enforce, err, want)
		}
		h, r := c.call(proto.OpMulti, &proto.MultiRequest{Ops: []proto.MultiOp{
			{Op: proto.OpCreate, Path: "/q/m", ACL: tree.OpenACL},
		}}, nil)
		if h.Err != proto.ErrOK {
			t.Fatalf("multi: %v", h.Err)
		}
		if got := r.(*proto.MultiResponse).Results[0].Err; got != want {
			t.Fatalf("enforceQuota=%v: multi create past the hard limit: %v, want %v", enforce, got, want)
		}
	}
}

// TestEnforceQuotaEnsemble: in an ensemble the member that takes a write
// decides whether its quota is enforced (its log entry says so), and every
// member applies the outcome alike: member 1 runs with enforceQuota,
// members 2 and 3 without; the same create past a hard limit is refused
// through member 1, accepted through member 2, and every member ends with
// the same children under the quota.
func TestEnforceQuotaEnsemble(t *testing.T) {
	members := startEnsembleWith(t, 3, 0, func(c *config.Config) { c.EnforceQuota = c.ServerID == 1 })
	c1, c2 := dial(t, members[0].Addr().String()), dial(t, members[1].Addr().String())
	create := func(c *rawClient, path, data string) proto.ErrCode {
		t.Helper()
		h, _ := c.call(proto.OpCreate, &proto.CreateRequest{Path: path, Data: []byte(data), ACL: tree.OpenACL}, nil)
		return h.Err
	}
	for _, p := range []string{"/q", "/zookeeper/quota/q"} {
		if err := create(c1, p, ""); err != proto.ErrOK {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	for _, p := range []string{"/zookeeper/quota/q/zookeeper_limits", "/zookeeper/quota/q/zookeeper_stats"} {
		if err := create(c1, p, "count=-1,bytes=-1=;countHardLimit=1"); err != proto.ErrOK {
			t.Fatalf("create %s: %v", p, err)
		}
	}
	if err := create(c1, "/q/a", ""); err != proto.ErrQuotaExceeded {
		t.Fatalf("create past the limit through the enforcing member: %v, want QuotaExceeded", err)
	}
	if err := create(c2, "/q/a", ""); err != proto.ErrOK {
		t.Fatalf("create past the limit through a member without enforceQuota: %v, want OK", err)
	}
	// A write through member 1 after member 2's: every member has applied
	// /q/a once member 1 answers.
	if err := create(c1, "/q/b", ""); err != proto.ErrQuotaExceeded {
		t.Fatalf("second create through the enforcing member: %v, want QuotaExceeded", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, m := range members {
		for {
			m.mu.RLock()
			a, b := m.fsm.Tree().Get("/q/a") != nil, m.fsm.Tree().Get("/q/b") != nil
			m.mu.RUnlock()
			if a && !b {
				break
			}
			if b || time.Now().After(deadline) {
				t.Fatalf("member %d: /q/a %v, /q/b %v; want /q/a only", m.cfg.ServerID, a, b)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}
