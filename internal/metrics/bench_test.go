package metrics

import (
	"testing"
	"time"
)

// BenchmarkObserveRequest is the cost metrics add to every client request.
func BenchmarkObserveRequest(b *testing.B) {
	s, err := NewSet(Options{Ops: map[int32]string{4: "getData", 5: "setData"}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			s.ObserveRequest(int32(4+i&1), i&1 == 1, time.Duration(i&1023)*time.Microsecond)
		}
	})
}

// BenchmarkObserveRequestNil is the cost with metrics off.
func BenchmarkObserveRequestNil(b *testing.B) {
	var s *Set
	for i := 0; i < b.N; i++ {
		s.ObserveRequest(4, false, time.Millisecond)
	}
}
