package metrics

import "testing"

// TestStateCollectorRoles checks which quorum gauges each member exports,
// as ZooKeeper registers them: synced_observers on the leader and the
// followers but not on an observer, the proposal sizes on the leader only.
func TestStateCollectorRoles(t *testing.T) {
	tests := []struct {
		name    string
		quorum  QuorumState
		present map[string]float64
		absent  []string
	}{
		{"observer", QuorumState{Size: 3, Observer: true},
			map[string]float64{"quorum_size": 3},
			[]string{"synced_observers", "learners", "last_proposal_size"}},
		{"follower", QuorumState{Size: 3},
			map[string]float64{"quorum_size": 3, "synced_observers": 0},
			[]string{"learners", "last_proposal_size", "min_proposal_size", "max_proposal_size"}},
		{"leader", QuorumState{Size: 3, Leading: true, SyncedObservers: 1,
			LastProposalSize: 60, MinProposalSize: 48, MaxProposalSize: 135},
			map[string]float64{"synced_observers": 1, "last_proposal_size": 60, "min_proposal_size": 48, "max_proposal_size": 135},
			nil},
		{"leader before any proposal", QuorumState{Size: 3, Leading: true,
			LastProposalSize: -1, MinProposalSize: -1, MaxProposalSize: -1},
			map[string]float64{"last_proposal_size": -1, "min_proposal_size": -1, "max_proposal_size": -1},
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewSet(Options{State: func(st *State) { q := tt.quorum; st.Quorum = &q }})
			if err != nil {
				t.Fatal(err)
			}
			fams := scrape(t, s.Handler())
			for name, want := range tt.present {
				if got := value(t, fams, name).GetGauge().GetValue(); got != want {
					t.Errorf("%s = %v, want %v", name, got, want)
				}
			}
			for _, name := range tt.absent {
				if fams[name] != nil {
					t.Errorf("%s exported", name)
				}
			}
		})
	}
}
