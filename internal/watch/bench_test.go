package watch

import (
	"fmt"
	"runtime"
	"testing"
)

func benchPaths(n int) []string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = fmt.Sprintf("/app/service-%d/node-%06d", i%16, i)
	}
	return ps
}

// BenchmarkTriggerNoWatchers is the common case: a change on a path nobody
// watches, in a registry holding 10 000 other watches.
func BenchmarkTriggerNoWatchers(b *testing.B) {
	for _, recursive := range []bool{false, true} {
		b.Run(fmt.Sprintf("recursiveElsewhere=%v", recursive), func(b *testing.B) {
			r := New()
			ws := make([]counter, 100)
			for i, p := range benchPaths(10000) {
				r.Add(p, Data, &ws[i%len(ws)])
			}
			if recursive {
				r.Add("/other", PersistentRecursive, &ws[0])
			}
			b.ReportAllocs()
			for b.Loop() {
				r.Trigger(changed, "/app/service-3/node-x/leaf", 1, nil)
			}
		})
	}
}

// BenchmarkTriggerFanout fires one path watched by 1000 watchers: persistent
// watches stay armed; one-time watches are re-added before each Trigger,
// and the re-adding is part of the measured time.
func BenchmarkTriggerFanout(b *testing.B) {
	const fanout = 1000
	b.Run("persistent", func(b *testing.B) {
		r := New()
		ws := make([]counter, fanout)
		for i := range ws {
			r.Add("/hot", Persistent, &ws[i])
		}
		b.ReportAllocs()
		for b.Loop() {
			if n := r.Trigger(changed, "/hot", 1, nil); n != fanout {
				b.Fatalf("Trigger = %d, want %d", n, fanout)
			}
		}
	})
	b.Run("oneshot+readd", func(b *testing.B) {
		r := New()
		ws := make([]counter, fanout)
		b.ReportAllocs()
		for b.Loop() {
			for i := range ws {
				r.Add("/hot", Data, &ws[i])
			}
			if n := r.Trigger(changed, "/hot", 1, nil); n != fanout {
				b.Fatalf("Trigger = %d, want %d", n, fanout)
			}
		}
	})
}

// BenchmarkAdd adds new (path, watcher) pairs: 1000 watchers over 1000 paths,
// starting again with an empty registry every million adds.
func BenchmarkAdd(b *testing.B) {
	const n = 1000
	ps := benchPaths(n)
	ws := make([]counter, n)
	r := New()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		if i == n*n {
			r, i = New(), 0
		}
		r.Add(ps[i%n], Data, &ws[i/n])
		i++
	}
}

// BenchmarkMemoryPerWatch reports the heap bytes the registry holds per
// watch for several shapes of sessions × paths (one-time data watches).
func BenchmarkMemoryPerWatch(b *testing.B) {
	shapes := []struct{ sessions, paths int }{
		{1000, 100}, {100, 1000}, {10, 10000}, {10000, 10}, {30000, 3}, {100000, 1}, {1, 100000},
	}
	for _, sh := range shapes {
		b.Run(fmt.Sprintf("%dx%d", sh.sessions, sh.paths), func(b *testing.B) {
			ps := benchPaths(sh.paths)
			ws := make([]counter, sh.sessions)
			var perWatch float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				r := New()
				for s := range ws {
					for _, p := range ps {
						r.Add(p, Data, &ws[s])
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				perWatch = float64(after.HeapAlloc-before.HeapAlloc) / float64(sh.sessions*sh.paths)
				runtime.KeepAlive(r)
			}
			b.ReportMetric(perWatch, "B/watch")
		})
	}
}
