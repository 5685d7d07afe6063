package fsm

import (
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// enforced applies a single op in an entry with EntryFlagEnforceQuota and
// returns its error.
func (h *harness) enforced(op Op) proto.ErrCode {
	h.t.Helper()
	r := h.apply(&Entry{Type: EntryTxn, Session: sess1, Flags: EntryFlagEnforceQuota, Ops: []Op{op}})
	return r.Ops[0].Err
}

// quotaHarness makes /q with a quota whose limits node holds limits, and
// /q/a holding "abc": the quota's stats are count=2,bytes=3.
func quotaHarness(t *testing.T, limits string) *harness {
	h := newHarness(t, Options{ExtendedTypes: true})
	h.openSession(sess1)
	const q = "/zookeeper/quota"
	h.must(sess1, nil, create("/q", "", 0))
	h.must(sess1, nil, create("/q/a", "abc", 0))
	h.must(sess1, nil, create(q+"/q", "", 0))
	h.must(sess1, nil, create(q+"/q/zookeeper_limits", limits, 0))
	h.must(sess1, nil, create(q+"/q/zookeeper_stats", "", 0))
	if got := string(h.node(q + "/q/zookeeper_stats").Data); got != "count=2,bytes=3" {
		t.Fatalf("stats: %q", got)
	}
	return h
}

// TestEnforceQuota: with EntryFlagEnforceQuota a create or setData that
// would take the quota past a hard limit fails with QUOTAEXCEEDED, in
// ZooKeeper's order of checks; soft limits and entries without the flag
// never fail.
func TestEnforceQuota(t *testing.T) {
	tests := []struct {
		name   string
		limits string
		op     Op
		flag   bool
		want   proto.ErrCode
	}{
		{"count hard limit reached", "count=-1,bytes=-1=;countHardLimit=2", create("/q/b", "", 0), true, proto.ErrQuotaExceeded},
		{"count hard limit with room", "count=-1,bytes=-1=;countHardLimit=3", create("/q/b", "", 0), true, proto.ErrOK},
		{"count hard limit, no flag", "count=-1,bytes=-1=;countHardLimit=2", create("/q/b", "", 0), false, proto.ErrOK},
		{"count soft limit only", "count=2,bytes=-1", create("/q/b", "", 0), true, proto.ErrOK},
		{"hard limit over a soft one", "count=9,bytes=-1=;countHardLimit=2", create("/q/b", "", 0), true, proto.ErrQuotaExceeded},
		{"byte hard limit by create data", "count=-1,bytes=-1=;byteHardLimit=5", create("/q/b", "xyz", 0), true, proto.ErrQuotaExceeded},
		{"byte hard limit, create within", "count=-1,bytes=-1=;byteHardLimit=5", create("/q/b", "xy", 0), true, proto.ErrOK},
		{"empty create under a byte limit", "count=-1,bytes=-1=;byteHardLimit=3", create("/q/b", "", 0), true, proto.ErrOK},
		{"sequential create", "count=-1,bytes=-1=;countHardLimit=2", create("/q/s-", "", proto.FlagPersistentSequential), true, proto.ErrQuotaExceeded},
		{"ephemeral create", "count=-1,bytes=-1=;countHardLimit=2", create("/q/e", "", proto.FlagEphemeral), true, proto.ErrQuotaExceeded},
		{"container create", "count=-1,bytes=-1=;countHardLimit=2", container("/q/c"), true, proto.ErrQuotaExceeded},
		{"TTL create", "count=-1,bytes=-1=;countHardLimit=2", createTTL("/q/t", proto.FlagPersistentWithTTL, 1000), true, proto.ErrQuotaExceeded},
		{"setData growing past", "count=-1,bytes=-1=;byteHardLimit=4", setData("/q/a", "abcde", -1), true, proto.ErrQuotaExceeded},
		{"setData within", "count=-1,bytes=-1=;byteHardLimit=4", setData("/q/a", "abcd", -1), true, proto.ErrOK},
		// The limit is on the bytes after the write: shrinking data
		// still over it is refused, to within it passes.
		{"setData shrinking, still over", "count=-1,bytes=-1=;byteHardLimit=1", setData("/q/a", "ab", -1), true, proto.ErrQuotaExceeded},
		{"setData shrinking to within", "count=-1,bytes=-1=;byteHardLimit=1", setData("/q/a", "a", -1), true, proto.ErrOK},
		{"setData under a count limit only", "count=-1,bytes=-1=;countHardLimit=2", setData("/q/a", "abcdefgh", -1), true, proto.ErrOK},
		// ZooKeeper's order: NoNode, NoAuth, then the quota, then the
		// version; for create, NodeExists and NoChildrenForEphemerals first.
		{"quota before version", "count=-1,bytes=-1=;byteHardLimit=4", setData("/q/a", "abcde", 7), true, proto.ErrQuotaExceeded},
		{"version with room", "count=-1,bytes=-1=;byteHardLimit=9", setData("/q/a", "abcde", 7), true, proto.ErrBadVersion},
		{"existing node first", "count=-1,bytes=-1=;countHardLimit=2", create("/q/a", "", 0), true, proto.ErrNodeExists},
		{"missing parent first", "count=-1,bytes=-1=;countHardLimit=2", create("/q/x/y", "", 0), true, proto.ErrNoNode},
		// The quota's own node counts: a limit of 1 leaves no room.
		{"outside the quota", "count=-1,bytes=-1=;countHardLimit=1", create("/r", "", 0), true, proto.ErrOK},
		// StatsTrack throws on these: ZooKeeper's processor answers
		// MARSHALLINGERROR.
		{"limits unreadable", "count", create("/q/b", "", 0), true, proto.ErrMarshallingError},
		{"limits unreadable, no flag", "count", create("/q/b", "", 0), false, proto.ErrOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := quotaHarness(t, tt.limits)
			var got proto.ErrCode
			if tt.flag {
				got = h.enforced(tt.op)
			} else {
				res, _ := h.one(sess1, nil, tt.op)
				got = res.Err
			}
			if got != tt.want {
				t.Fatalf("%v %s with limits %q: %v, want %v", tt.op.Op, tt.op.Path, tt.limits, got, tt.want)
			}
			stats := string(h.node("/zookeeper/quota/q/zookeeper_stats").Data)
			if got != proto.ErrOK && stats != "count=2,bytes=3" {
				t.Fatalf("a refused write changed the stats: %q", stats)
			}
		})
	}
}

// TestEnforceQuotaStatsUnreadable: a stats node StatsTrack cannot read
// fails a write that needs it (MARSHALLINGERROR), not one that does not.
func TestEnforceQuotaStatsUnreadable(t *testing.T) {
	h := quotaHarness(t, "count=-1,bytes=-1=;countHardLimit=9")
	h.must(sess1, nil, setData("/zookeeper/quota/q/zookeeper_stats", "count=x", -1))
	if got := h.enforced(create("/q/b", "", 0)); got != proto.ErrMarshallingError {
		t.Fatalf("create with unreadable stats: %v, want MarshallingError", got)
	}
	// A setData checks bytes only, which have no limit here.
	if got := h.enforced(setData("/q/a", "abcdef", -1)); got != proto.ErrOK {
		t.Fatalf("setData with no byte limit: %v, want OK", got)
	}
}

// TestEnforceQuotaMulti: inside a multi each op is checked against the
// quota's data as it was before the multi, as ZooKeeper's request
// processor checks them against the committed tree: with room for one
// more node, two creates in one multi both pass; a third create in a
// later multi fails, and so does that whole multi.
func TestEnforceQuotaMulti(t *testing.T) {
	h := quotaHarness(t, "count=-1,bytes=-1=;countHardLimit=3")
	multi := func(ops ...Op) Result {
		return h.apply(&Entry{Type: EntryTxn, Session: sess1, Flags: EntryFlagEnforceQuota, Multi: true, Ops: ops})
	}
	r := multi(create("/q/b", "", 0), create("/q/c", "", 0))
	for i, o := range r.Ops {
		if o.Err != proto.ErrOK {
			t.Fatalf("op %d of a multi with room for one before it: %v", i, o.Err)
		}
	}
	if got := string(h.node("/zookeeper/quota/q/zookeeper_stats").Data); got != "count=4,bytes=3" {
		t.Fatalf("stats after the multi: %q", got)
	}
	r = multi(setData("/q/a", "x", -1), create("/q/d", "", 0), create("/q/e", "", 0))
	if r.Ops[0].Err != proto.ErrOK || r.Ops[1].Err != proto.ErrQuotaExceeded || r.Ops[2].Err != proto.ErrRuntimeInconsistency {
		t.Fatalf("multi over the quota: %v, %v, %v; want OK, QuotaExceeded, RuntimeInconsistency", r.Ops[0].Err, r.Ops[1].Err, r.Ops[2].Err)
	}
	if got := string(h.node("/q/a").Data); got != "abc" {
		t.Fatalf("the failed multi's setData stayed: %q", got)
	}
	// Limits raised inside the multi do not count for its later ops.
	r = multi(setData("/zookeeper/quota/q/zookeeper_limits", "count=-1,bytes=-1=;countHardLimit=99", -1), create("/q/d", "", 0))
	if r.Ops[1].Err != proto.ErrQuotaExceeded {
		t.Fatalf("create after raising the limit in the same multi: %v, want QuotaExceeded", r.Ops[1].Err)
	}
}

// TestEnforceQuotaMultiChangesQuotas: a multi that creates, deletes or
// changes a quota's nodes is checked against the quotas as they were
// before it, as ZooKeeper's request processor checks against the
// committed tree; a limits node it creates counts from the next entry.
func TestEnforceQuotaMultiChangesQuotas(t *testing.T) {
	const q = "/zookeeper/quota/q"
	multi := func(h *harness, ops ...Op) Result {
		return h.apply(&Entry{Type: EntryTxn, Session: sess1, Flags: EntryFlagEnforceQuota, Multi: true, Ops: ops})
	}
	// Deleting the limits node does not lift them for the multi's creates.
	h := quotaHarness(t, "count=-1,bytes=-1=;countHardLimit=2")
	r := multi(h, del(q+"/zookeeper_limits", -1), create("/q/b", "", 0))
	if r.Ops[1].Err != proto.ErrQuotaExceeded {
		t.Fatalf("create after deleting the limits in the multi: %v, want QuotaExceeded", r.Ops[1].Err)
	}
	if h.m.Tree().Get(q+"/zookeeper_limits") == nil {
		t.Fatal("the failed multi's delete stayed")
	}

	// A limits node created by the multi does not apply within it, and
	// counts the multi's create in its stats afterwards.
	h = newHarness(t, Options{})
	h.openSession(sess1)
	h.must(sess1, nil, create("/r", "", 0))
	h.must(sess1, nil, create("/zookeeper/quota/r", "", 0))
	h.must(sess1, nil, create("/zookeeper/quota/r/zookeeper_stats", "", 0))
	r = multi(h, create("/zookeeper/quota/r/zookeeper_limits", "countHardLimit=0", 0), create("/r/a", "", 0))
	if r.Err != proto.ErrOK || r.Ops[0].Err != proto.ErrOK || r.Ops[1].Err != proto.ErrOK {
		t.Fatalf("multi creating limits, then a node under them: %v %+v", r.Err, r.Ops)
	}
	if got := string(h.node("/zookeeper/quota/r/zookeeper_stats").Data); got != "count=2,bytes=0" {
		t.Fatalf("stats after the multi: %q, want count=2,bytes=0", got)
	}
	if got := h.enforced(create("/r/b", "", 0)); got != proto.ErrQuotaExceeded {
		t.Fatalf("create after the multi: %v, want QuotaExceeded", got)
	}
}

// TestEnforceQuotaMultiUnreadable: an unreadable quota fails a whole multi
// with MARSHALLINGERROR and no per-op results, as ZooKeeper's request
// processor turns the exception into an error txn; nothing applies.
func TestEnforceQuotaMultiUnreadable(t *testing.T) {
	h := quotaHarness(t, "count")
	r := h.apply(&Entry{Type: EntryTxn, Session: sess1, Flags: EntryFlagEnforceQuota, Multi: true,
		Ops: []Op{create("/x", "", 0), create("/q/b", "", 0)}})
	if r.Err != proto.ErrMarshallingError || len(r.Ops) != 0 {
		t.Fatalf("multi under unreadable limits: %v with %d results, want MarshallingError and none", r.Err, len(r.Ops))
	}
	if h.m.Tree().Get("/x") != nil {
		t.Fatal("the failed multi's first create stayed")
	}
}
