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

// BenchmarkApplyMultiSetData measures decoding and applying a multi of 10
// setData ops on keys under one parent of 10,000 (paddock bench's multi
// workload), into a result with room for one op and two changes, as the
// server's per-request record has. ns/op is per multi.
func BenchmarkApplyMultiSetData(b *testing.B) {
	const keys, perMulti = 10000, 10
	m := New(Options{})
	m.ApplyEntry(1, &Entry{Type: EntryCreateSession, Session: 1, Timeout: 10000, Passwd: make([]byte, 16)})
	index := uint64(2)
	m.ApplyEntry(index, &Entry{Type: EntryTxn, Session: 1, Ops: []Op{{Op: proto.OpCreate, Path: "/bench", ACL: tree.OpenACL}}})
	for i := range keys {
		index++
		m.ApplyEntry(index, &Entry{Type: EntryTxn, Session: 1, Ops: []Op{{Op: proto.OpCreate, Path: "/bench/key-" + strconv.Itoa(i), ACL: tree.OpenACL}}})
	}
	var entries [][]byte
	for i := range 64 {
		e := &Entry{Type: EntryTxn, Multi: true, Session: 1, Auth: []proto.ID{{Scheme: "ip", ID: "127.0.0.1"}}}
		for j := range perMulti {
			e.Ops = append(e.Ops, Op{Op: proto.OpSetData, Path: "/bench/key-" + strconv.Itoa((i*perMulti+j)*97%keys), Data: make([]byte, 100), Version: -1})
		}
		entries = append(entries, e.Encode(nil))
	}
	var ops [1]OpResult
	var changes [2]Change
	var r Result
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		index++
		r.Ops, r.Changes = ops[:0], changes[:0]
		m.ApplyTo(index, entries[i%len(entries)], &r)
		if r.Err != proto.ErrOK {
			b.Fatal(r.Err)
		}
		i++
	}
}
