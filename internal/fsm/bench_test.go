package fsm

import (
	"strconv"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/tree"
)

// BenchmarkApplySetData measures decoding and applying a setData entry.
func BenchmarkApplySetData(b *testing.B) {
	m := New(Options{})
	m.ApplyEntry(1, &Entry{Type: EntryCreateSession, Session: 1, Timeout: 10000, Passwd: make([]byte, 16)})
	m.ApplyEntry(2, &Entry{Type: EntryTxn, Session: 1, Ops: []Op{{Op: proto.OpCreate, Path: "/k", ACL: tree.OpenACL}}})
	data := (&Entry{Type: EntryTxn, Session: 1, Auth: []proto.ID{{Scheme: "ip", ID: "127.0.0.1"}},
		Ops: []Op{{Op: proto.OpSetData, Path: "/k", Data: make([]byte, 100), Version: -1}}}).Encode(nil)
	b.ReportAllocs()
	index := uint64(3)
	for b.Loop() {
		if r := m.Apply(index, data); r.Err != proto.ErrOK {
			b.Fatal(r.Err)
		}
		index++
	}
}

// BenchmarkApplyCreate measures applying creates into a tree of 1000
// parents.
func BenchmarkApplyCreate(b *testing.B) {
	m := New(Options{})
	m.ApplyEntry(1, &Entry{Type: EntryCreateSession, Session: 1, Timeout: 10000, Passwd: make([]byte, 16)})
	index := uint64(2)
	for i := 0; i < 1000; i++ {
		m.ApplyEntry(index, &Entry{Type: EntryTxn, Session: 1, Ops: []Op{{Op: proto.OpCreate, Path: "/p" + strconv.Itoa(i), ACL: tree.OpenACL}}})
		index++
	}
	val := make([]byte, 100)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		e := &Entry{Type: EntryTxn, Session: 1, Ops: []Op{{Op: proto.OpCreate,
			Path: "/p" + strconv.Itoa(i%1000) + "/n" + strconv.Itoa(i), Data: val, ACL: tree.OpenACL}}}
		if r := m.ApplyEntry(index, e); r.Err != proto.ErrOK {
			b.Fatal(r.Err)
		}
		index++
		i++
	}
}
