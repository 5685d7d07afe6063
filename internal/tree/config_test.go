package tree

import (
	"bytes"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

const shownConfig = "server.1=127.0.0.1:2888:3888:participant\nserver.2=127.0.0.1:2889:3889:participant\nversion=0"

// TestShowConfig checks what a tree showing a member's configuration at
// /zookeeper/config shows clients (data, Stat, DataSize) and what it keeps
// as replicated state (Replicated, snapshots).
func TestShowConfig(t *testing.T) {
	plain := New(Options{})
	tr := New(Options{})
	tr.ShowConfig([]byte(shownConfig), 0, 1234)
	n := mustGet(t, tr, ConfigPath)
	if string(n.Data) != shownConfig {
		t.Fatalf("data = %q, want the configuration", n.Data)
	}
	want := proto.Stat{Mtime: 1234, Version: -1, Aversion: -1, DataLength: int32(len(shownConfig))}
	if got := tr.Stat(n); got != want {
		t.Fatalf("Stat = %+v, want %+v", got, want)
	}
	if got, want := tr.DataSize(), plain.DataSize()+int64(len(shownConfig)); got != want {
		t.Fatalf("DataSize = %d, want %d", got, want)
	}
	checkInvariants(t, tr)
	if data, mzxid, mtime, ok := tr.ConfigShown(); !ok || string(data) != shownConfig || mzxid != 0 || mtime != 1234 {
		t.Fatalf("ConfigShown = %q, %d, %d, %v", data, mzxid, mtime, ok)
	}
	if w := tr.Replicated(n); w.Data == nil || len(w.Data) != 0 || w.Version != 0 || w.Mzxid != 0 || w.Mtime != 0 {
		t.Fatalf("Replicated = %+v, want the fresh node's empty data and zero fields", w)
	}
	if w := tr.Replicated(mustGet(t, tr, "/zookeeper")); w.Data == nil || len(w.Data) != 0 {
		t.Fatalf("Replicated(/zookeeper) = %+v", w)
	}
	// Snapshots hold the replicated state: the same bytes as a tree that
	// shows nothing, and a restored tree shows nothing.
	snap := tr.AppendSnapshot(nil)
	if !bytes.Equal(snap, plain.AppendSnapshot(nil)) {
		t.Fatal("the snapshot of a tree showing its configuration differs from a fresh tree's")
	}
	back, err := decodeAll(snap)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, ok := back.ConfigShown(); ok {
		t.Fatal("a restored tree shows a configuration")
	}
	if d := diffDumps(dumpTree(plain), dumpTree(back)); d != "" {
		t.Fatalf("restored tree differs from a fresh one:\n%s", d)
	}
	// Showing again replaces what is shown, not the replicated state.
	tr.ShowConfig([]byte("version=0"), 5, 99)
	if got := tr.Stat(n); got.Mzxid != 5 || got.Mtime != 99 || got.Version != -1 || got.DataLength != 9 {
		t.Fatalf("Stat after showing again = %+v", got)
	}
	if !bytes.Equal(tr.AppendSnapshot(nil), snap) {
		t.Fatal("showing again changed the snapshot")
	}
	checkInvariants(t, tr)
}

// TestShowConfigWrite checks that a committed write of /zookeeper/config
// replaces what it showed, and that showing the configuration afterwards
// keeps the write as the replicated state.
func TestShowConfigWrite(t *testing.T) {
	tr := New(Options{})
	n := mustGet(t, tr, ConfigPath)
	tr.ShowConfig([]byte(shownConfig), 0, 1234)
	tr.SetData(n, []byte("written"), 1, 7, 700)
	if _, _, _, ok := tr.ConfigShown(); ok {
		t.Fatal("still showing the configuration after a write")
	}
	want := Written{Data: []byte("written"), Mzxid: 7, Mtime: 700, Version: 1}
	if got := tr.Replicated(n); string(got.Data) != "written" || got.Mzxid != 7 || got.Mtime != 700 || got.Version != 1 {
		t.Fatalf("Replicated = %+v, want %+v", got, want)
	}
	if got := tr.Stat(n); got.Version != 1 || got.Mzxid != 7 || got.DataLength != 7 {
		t.Fatalf("Stat = %+v", got)
	}
	checkInvariants(t, tr)
	written := tr.AppendSnapshot(nil)

	tr.ShowConfig([]byte(shownConfig), 0, 2000)
	if got := tr.Replicated(n); string(got.Data) != "written" || got.Version != 1 || got.Mzxid != 7 || got.Mtime != 700 {
		t.Fatalf("Replicated after showing again = %+v", got)
	}
	if !bytes.Equal(tr.AppendSnapshot(nil), written) {
		t.Fatal("the snapshot does not hold the write")
	}
	checkInvariants(t, tr)
}

// TestShowConfigStream checks that a snapshot stream writes the replicated
// state of /zookeeper/config as it was when the stream began, whatever is
// shown or written meanwhile: byte for byte AppendSnapshot at the start.
func TestShowConfigStream(t *testing.T) {
	cases := []struct {
		name          string
		before, while func(tr *Tree, n *Node)
	}{
		{"shown at the start", func(tr *Tree, n *Node) { tr.ShowConfig([]byte(shownConfig), 0, 1) }, nil},
		{"shown during", nil, func(tr *Tree, n *Node) { tr.ShowConfig([]byte(shownConfig), 0, 1) }},
		{"written during", func(tr *Tree, n *Node) { tr.ShowConfig([]byte(shownConfig), 0, 1) },
			func(tr *Tree, n *Node) { tr.SetData(n, []byte("w"), 1, 9, 9) }},
		{"written and shown during", func(tr *Tree, n *Node) { tr.ShowConfig([]byte(shownConfig), 0, 1) },
			func(tr *Tree, n *Node) {
				tr.SetData(n, []byte("w"), 1, 9, 9)
				tr.ShowConfig([]byte("version=0"), 0, 2)
			}},
		{"written before", func(tr *Tree, n *Node) {
			tr.ShowConfig([]byte(shownConfig), 0, 1)
			tr.SetData(n, []byte("w"), 1, 9, 9)
			tr.ShowConfig([]byte(shownConfig), 0, 3)
		}, func(tr *Tree, n *Node) { tr.SetData(n, []byte("w2"), 2, 10, 10) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := richTree()
			n := mustGet(t, tr, ConfigPath)
			if tc.before != nil {
				tc.before(tr, n)
			}
			want := tr.AppendSnapshot(nil)
			s := tr.BeginStream()
			got, done := s.Next(nil, 2)
			if tc.while != nil {
				tc.while(tr, n)
			}
			for !done {
				got, done = s.Next(got, 2)
			}
			s.End()
			if !bytes.Equal(got, want) {
				t.Fatalf("stream differs from AppendSnapshot at its start (%d vs %d bytes)", len(got), len(want))
			}
			checkInvariants(t, tr)
		})
	}
}
