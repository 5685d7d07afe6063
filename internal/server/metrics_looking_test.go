package server

import (
	"testing"

	"github.com/paddockhq/paddock/internal/metrics/metricstest"
)

// TestMetricsLookingCountsStartup checks looking_count against ZooKeeper's:
// a quorum peer starts in LOOKING and counts it (QuorumPeer.run adds to
// LOOKING_COUNT each time it enters LOOKING, the first time included), so
// a freshly started member of a 3.8 ensemble reports zk_looking_count 1
// next to zk_cnt_election_time 1. Every election a member times is
// preceded by a looking episode it counted.
func TestMetricsLookingCountsStartup(t *testing.T) {
	ens := startEnsembleWith(t, 3, 0, withMetrics)
	for _, s := range ens {
		fams := waitMetric(t, s.MetricsAddr().String(), "the first election timed", func(f metricstest.Families) bool {
			v, _ := f.Value("election_time")
			return v >= 1
		})
		looking, elections := fams.Must(t, "looking_count"), fams.Must(t, "election_time")
		if looking < 1 || looking < elections {
			t.Errorf("member %d: looking_count = %v with %v elections timed; ZooKeeper counts the LOOKING it starts in (want >= 1 and >= the elections)",
				s.cfg.ServerID, looking, elections)
		}
	}
}
