package storage_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/paddockhq/paddock/internal/storage"
)

// BenchmarkWALGroupCommit appends the same n entries two ways: in one Save
// (one write and one fsync, as raftnode does with everything of one Ready)
// and in n Saves of one entry (n fsyncs, as without group commit). One op is
// the whole batch of n entries; entries/s and µs/entry compare the two.
func BenchmarkWALGroupCommit(b *testing.B) {
	data := bytes.Repeat([]byte("x"), 128)
	for _, n := range []int{16, 256} {
		for _, grouped := range []bool{true, false} {
			fsyncs := n
			if grouped {
				fsyncs = 1
			}
			b.Run(fmt.Sprintf("entries=%d/fsyncs=%d", n, fsyncs), func(b *testing.B) {
				w, err := storage.OpenWAL(b.TempDir(), storage.WALOptions{})
				if err != nil {
					b.Fatal(err)
				}
				defer w.Close()
				batch := make([]raftpb.Entry, n)
				index := uint64(0)
				b.SetBytes(int64(n * len(data)))
				for b.Loop() {
					for i := range batch {
						index++
						batch[i] = raftpb.Entry{Term: 1, Index: index, Data: data}
					}
					if grouped {
						if err := w.Save(raftpb.HardState{Term: 1, Vote: 1, Commit: index}, batch); err != nil {
							b.Fatal(err)
						}
						continue
					}
					for i := range batch {
						hs := raftpb.HardState{Term: 1, Vote: 1, Commit: batch[i].Index}
						if err := w.Save(hs, batch[i:i+1]); err != nil {
							b.Fatal(err)
						}
					}
				}
				entries := float64(index)
				b.ReportMetric(entries/b.Elapsed().Seconds(), "entries/s")
				b.ReportMetric(b.Elapsed().Seconds()*1e6/entries, "µs/entry")
			})
		}
	}
}

// BenchmarkWALPreallocation saves batches of 32 entries of 150 bytes (one
// write and one fsync each, a busy server's group commit) into a WAL that
// never preallocates, where every write extends the file, and into one
// that has moved to a zero-filled spare segment, where writes overwrite
// allocated blocks. One op is one Save; its time is mostly the fsync.
func BenchmarkWALPreallocation(b *testing.B) {
	data := bytes.Repeat([]byte("x"), 150)
	for _, tt := range []struct {
		name  string
		after int64
	}{{"append", -1}, {"preallocated", 1}} {
		b.Run(tt.name, func(b *testing.B) {
			w, err := storage.OpenWAL(b.TempDir(), storage.WALOptions{PreallocateAfter: tt.after})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			batch := make([]raftpb.Entry, 32)
			index := uint64(0)
			save := func() {
				for i := range batch {
					index++
					batch[i] = raftpb.Entry{Term: 1, Index: index, Data: data}
				}
				if err := w.Save(raftpb.HardState{Term: 1, Vote: 1, Commit: index}, batch); err != nil {
					b.Fatal(err)
				}
			}
			save()
			if tt.after > 0 {
				// Wait (bounded) for the spare, and move to it.
				for i := 0; !w.SpareReady(); i++ {
					if i > 10000 {
						b.Fatal("no spare segment after 10 s")
					}
					time.Sleep(time.Millisecond)
				}
				save()
			}
			for b.Loop() {
				save()
			}
		})
	}
}
