package metrics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/metrics"
	"github.com/paddockhq/paddock/internal/metrics/metricstest"
)

// TestMetricNamesList checks the checked-in list against a Set that
// reports everything (a leader, with runtime metrics): every listed family
// is exported with its type, and every exported family is listed (the
// runtime collectors' go_* and process_* families aside, of which the list
// names a few).
func TestMetricNamesList(t *testing.T) {
	s, err := metrics.NewSet(metrics.Options{ExportRuntime: true, Ops: map[int32]string{4: "getData"},
		State: func(st *metrics.State) { st.Quorum = &metrics.QuorumState{Size: 3, Leading: true} }})
	if err != nil {
		t.Fatal(err)
	}
	s.ObserveRequest(4, false, time.Millisecond) // a histogram vector shows once used
	ep, err := metrics.Listen("127.0.0.1:0", s.Handler(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	fams := metricstest.Scrape(t, ep.Addr().String())
	names := metricstest.Names(t)
	metricstest.Check(t, fams, names, "all", "ensemble", "leader", "runtime")
	listed := make(map[string]bool)
	for _, n := range names {
		if listed[n.Name] {
			t.Errorf("%s is listed twice", n.Name)
		}
		listed[n.Name] = true
	}
	for name := range fams {
		if !listed[name] && !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") {
			t.Errorf("exported family %s is not in testdata/metric_names.txt", name)
		}
	}
}

func TestParseNamesErrors(t *testing.T) {
	for _, in := range []string{"znode_count gauge", "znode_count gauge everywhere", "a b c d"} {
		if _, err := metricstest.ParseNames(strings.NewReader(in)); err == nil {
			t.Errorf("ParseNames(%q) accepted", in)
		}
	}
}
