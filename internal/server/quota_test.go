package server

import (
	"testing"

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
