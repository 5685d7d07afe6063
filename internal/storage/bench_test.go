package storage_test

import (
	"bytes"
	"fmt"
	"testing"

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
