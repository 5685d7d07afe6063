package fsm

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/tree"
)

// TestShowConfigIsNotReplicated applies the same entries to a machine that
// shows nothing at /zookeeper/config (a replay of the log, as paddock data
// verify does) and to two that show different configurations (members whose
// configurations differ): every entry must have the same results and leave
// the same snapshot on all three, including conditional and quota-counted
// writes of the configuration node itself, and a multi that writes it and
// fails. What the showing machines show follows ZooKeeper: the
// configuration, until a committed write replaces it.
func TestShowConfigIsNotReplicated(t *testing.T) {
	const cfgA = "server.1=127.0.0.1:2888:3888:participant\nserver.2=127.0.0.1:2889:3889:participant\nversion=0"
	const cfgB = "server.1=127.0.0.1:2888:3888:participant\nversion=0"
	hs := []*harness{newHarness(t, Options{}), newHarness(t, Options{}), newHarness(t, Options{})}
	hs[1].m.ShowConfig([]byte(cfgA), 0, 111)
	hs[2].m.ShowConfig([]byte(cfgB), 0, 222)
	super := []proto.ID{superID}
	const cfgPath = tree.ConfigPath
	step := 0
	// apply applies e on every machine and checks that results and
	// snapshots agree.
	apply := func(e Entry) Result {
		t.Helper()
		step++
		var results []Result
		var snaps [][]byte
		for _, h := range hs {
			c := e
			results = append(results, h.apply(&c))
			snaps = append(snaps, h.m.AppendSnapshot(nil))
		}
		for i := 1; i < len(hs); i++ {
			if fmt.Sprint(results[i].Err, results[i].Ops) != fmt.Sprint(results[0].Err, results[0].Ops) {
				t.Fatalf("step %d: machine %d's result %v %+v, replay's %v %+v", step, i, results[i].Err, results[i].Ops, results[0].Err, results[0].Ops)
			}
			if !reflect.DeepEqual(results[i].Changes, results[0].Changes) {
				t.Fatalf("step %d: machine %d's changes %+v, replay's %+v", step, i, results[i].Changes, results[0].Changes)
			}
			if !bytes.Equal(snaps[i], snaps[0]) {
				t.Fatalf("step %d: machine %d's snapshot differs from the replay's", step, i)
			}
		}
		return results[0]
	}
	txn := func(auth []proto.ID, ops ...Op) Entry {
		return Entry{Type: EntryTxn, Session: sess1, Auth: auth, Multi: len(ops) > 1, Ops: ops}
	}
	apply(Entry{Type: EntryCreateSession, Session: sess1, Timeout: 30000, Passwd: []byte("pw")})
	// Quotas counting the whole tree and /zookeeper count the node's
	// replicated data (none), not the configuration shown: the stats
	// nodes' data is in the snapshots apply compares.
	apply(txn(nil, create("/zookeeper/quota/zookeeper_stats", "", 0)))
	apply(txn(nil, create("/zookeeper/quota/zookeeper", "", 0)))
	apply(txn(nil, create("/zookeeper/quota/zookeeper/zookeeper_limits", "bytes=1000", 0)))
	apply(txn(nil, create("/zookeeper/quota/zookeeper/zookeeper_stats", "", 0)))
	// Versions are checked against the replicated version, 0 until a write.
	if r := apply(txn(nil, check(cfgPath, -1))); r.Err != proto.ErrOK {
		t.Fatalf("check -1: %v", r.Err)
	}
	if r := apply(txn(nil, check(cfgPath, 0))); r.Err != proto.ErrOK {
		t.Fatalf("check 0: %v", r.Err)
	}
	// A failed multi that wrote the node shows the configuration again.
	r := apply(txn(super, setData(cfgPath, "first", 0), check("/none", -1)))
	if r.Ops[0].Err != proto.ErrOK || r.Ops[1].Err != proto.ErrNoNode {
		t.Fatalf("multi: %+v", r.Ops)
	}
	for i, want := range []string{"", cfgA, cfgB} {
		n := hs[i].node(cfgPath)
		st := hs[i].m.Tree().Stat(n)
		if string(n.Data) != want || st.DataLength != int32(len(want)) {
			t.Fatalf("machine %d after the failed multi shows %q (%+v), want %q", i, n.Data, st, want)
		}
		if i > 0 && (st.Version != -1 || st.Mtime != int64(111*i)) {
			t.Fatalf("machine %d after the failed multi: %+v", i, st)
		}
	}
	// A committed write replaces what is shown, everywhere alike.
	r = apply(txn(super, setData(cfgPath, "written", 0)))
	if r.Err != proto.ErrOK || r.Ops[0].Stat.Version != 1 {
		t.Fatalf("setData: %v %+v", r.Err, r.Ops[0].Stat)
	}
	for i, h := range hs {
		n := h.node(cfgPath)
		if string(n.Data) != "written" || h.m.Tree().Stat(n) != r.Ops[0].Stat {
			t.Fatalf("machine %d after the write: %q %+v", i, n.Data, h.m.Tree().Stat(n))
		}
	}
	// Shown again (a restart), the next conditional write is checked
	// against the written version.
	hs[1].m.ShowConfig([]byte(cfgA), 0, 333)
	if r := apply(txn(super, setData(cfgPath, "again", 0))); r.Err != proto.ErrBadVersion {
		t.Fatalf("setData at version 0 after a write: %v", r.Err)
	}
	if r := apply(txn(nil, check(cfgPath, 1))); r.Err != proto.ErrOK {
		t.Fatalf("check 1: %v", r.Err)
	}
	if got := string(hs[1].node(cfgPath).Data); got != cfgA {
		t.Fatalf("machine 1 shows %q", got)
	}
	// Restore drops what was shown.
	m := New(Options{})
	m.ShowConfig([]byte(cfgB), 0, 1)
	if err := m.Restore(hs[1].m.AppendSnapshot(nil)); err != nil {
		t.Fatal(err)
	}
	if n := m.Tree().Get(cfgPath); string(n.Data) != "written" {
		t.Fatalf("restored machine shows %q", n.Data)
	}
	if _, _, _, ok := m.Tree().ConfigShown(); ok {
		t.Fatal("restored machine shows a configuration")
	}
}
