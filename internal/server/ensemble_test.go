package server

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/zktest"
)

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	return zktest.FreePort(t) // below the ephemeral range, see there
}

// startEnsemble runs voters+observers in-process members on loopback.
func startEnsemble(t testing.TB, voters, observers int) []*Server {
	t.Helper()
	return startEnsembleWith(t, voters, observers, nil)
}

// startEnsembleWith is startEnsemble with mutate applied to every member's
// configuration.
func startEnsembleWith(t testing.TB, voters, observers int, mutate func(*config.Config)) []*Server {
	t.Helper()
	return startEnsembleLogged(t, voters, observers, mutate, nil)
}

// startEnsembleLogged is startEnsembleWith with every member logging to
// logger (nil: nowhere).
func startEnsembleLogged(t testing.TB, voters, observers int, mutate func(*config.Config), logger *slog.Logger) []*Server {
	t.Helper()
	var servers []config.Server
	for id := 1; id <= voters+observers; id++ {
		role := config.Participant
		if id > voters {
			role = config.Observer
		}
		servers = append(servers, config.Server{ID: int64(id), Role: role,
			Addrs: []config.PeerAddr{{Host: "127.0.0.1", QuorumPort: freePort(t), ElectionPort: freePort(t)}}})
	}
	var out []*Server
	for id := 1; id <= voters+observers; id++ {
		cfg := config.Default()
		cfg.ClientPort = 0
		cfg.DataDir = t.TempDir()
		cfg.DataLogDir = cfg.DataDir
		cfg.FourLetterWords = config.ParseWhitelist("*")
		cfg.TickTime = 200 * time.Millisecond
		cfg.MinSessionTimeout, cfg.MaxSessionTimeout = 400*time.Millisecond, 4*time.Second
		cfg.ServerID = int64(id)
		cfg.Servers = servers
		if mutate != nil {
			mutate(cfg)
		}
		var l *slog.Logger
		if logger != nil {
			l = logger.With("member", id)
		}
		s, err := New(cfg, l)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out = append(out, s)
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, s := range out {
		for !s.serving.Load() {
			if time.Now().After(deadline) {
				t.Fatalf("member %d does not serve", s.cfg.ServerID)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return out
}

func TestEnsembleModesAndMntr(t *testing.T) {
	ens := startEnsemble(t, 3, 1)
	var leader *Server
	modes := map[string]int{}
	for _, s := range ens {
		m := s.mode()
		modes[m]++
		if m == "leader" {
			leader = s
		}
	}
	if modes["leader"] != 1 || modes["follower"] != 2 || modes["observer"] != 1 {
		t.Fatalf("modes %v, want one leader, two followers, one observer", modes)
	}
	if got := ens[3].mode(); got != "observer" {
		t.Fatalf("member 4 (an observer) is %q", got)
	}
	// The leader sees every other member synced once they replicate.
	var out string
	deadline := time.Now().Add(10 * time.Second)
	for {
		var b strings.Builder
		leader.writeMntr(&b)
		out = b.String()
		if strings.Contains(out, "zk_synced_followers\t2\n") && strings.Contains(out, "zk_synced_observers\t1\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("leader's mntr never showed 2 synced followers and 1 observer:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, want := range []string{"zk_server_state\tleader\n", "zk_quorum_size\t3\n", "zk_learners\t3\n", "zk_peer_state\tleading - broadcast\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("leader's mntr lacks %q:\n%s", want, out)
		}
	}
	var b strings.Builder
	ens[3].writeMntr(&b)
	if f := b.String(); !strings.Contains(f, "zk_peer_state\tobserving - broadcast\n") || strings.Contains(f, "zk_synced_followers") {
		t.Errorf("observer's mntr:\n%s", f)
	}
}
