package difftest

import (
	"fmt"
	"strings"
	"testing"
)

// TestGenerateDeterministic checks that a seed always gives the same
// script and that seeds give different scripts.
func TestGenerateDeterministic(t *testing.T) {
	seen := map[string]uint64{}
	for seed := uint64(1); seed <= 200; seed++ {
		a, b := GenerateScript(seed), GenerateScript(seed)
		if a != b {
			t.Fatalf("seed %d gave two scripts:\n%s\n%s", seed, a, b)
		}
		body := a[strings.Index(a, "\n")+1:]
		if other, dup := seen[body]; dup {
			t.Errorf("seeds %d and %d gave the same script", other, seed)
		}
		seen[body] = seed
	}
}

// TestGenerateShape checks, over many seeds, that the scripts parse,
// have the length and the clients the generator promises, and keep out
// what it leaves out.
func TestGenerateShape(t *testing.T) {
	for seed := uint64(1); seed <= 2000; seed++ {
		sc, err := Generate(seed)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		script := GenerateScript(seed)
		if n := len(sc.Steps); n < 20 || n > 70 {
			t.Errorf("seed %d: %d steps", seed, n)
		}
		clients := map[string]bool{}
		for _, st := range sc.Steps {
			clients[st.Client] = true
			cmd := st.Cmd
			args := st.Args
			if cmd == "send" {
				cmd, args = args[0].Text, args[1:]
			}
			switch cmd {
			case "check", "checkwatches", "deletecontainer", "request", "raw", "rawconnect":
				t.Errorf("seed %d line %d: %s is left out of random scenarios", seed, st.Line, st.Text)
			case "multi":
				for _, g := range args {
					if g.Group[0].Text == "create2" {
						t.Errorf("seed %d line %d: create2 in a multi: %s", seed, st.Line, st.Text)
					}
				}
			case "createttl":
				if args[2].Text == "persistent" && strings.HasPrefix(args[3].Text, "-") {
					t.Errorf("seed %d line %d: negative TTL with a mode without TTL: %s", seed, st.Line, st.Text)
				}
			}
			for _, a := range args {
				if strings.HasPrefix(a.Text, "/") && strings.Count(a.Text, "/") > 3 {
					t.Errorf("seed %d line %d: path %s deeper than 3", seed, st.Line, a.Text)
				}
			}
		}
		if len(clients) < 2 || len(clients) > 3 {
			t.Errorf("seed %d: %d clients\n%s", seed, len(clients), script)
		}
	}
}

// TestGenerateExistsNeedsRead checks the rule that keeps exists (which
// ZooKeeper 3.9 checks for READ, and 3.8 does not) off paths that may
// have been given an ACL without READ for the scenario's clients.
func TestGenerateExistsNeedsRead(t *testing.T) {
	unreadable := map[string]bool{}
	for _, a := range genACLs {
		if !a.readable {
			unreadable[a.text] = true
		}
	}
	for seed := uint64(1); seed <= 2000; seed++ {
		sc, err := Generate(seed)
		if err != nil {
			t.Fatal(err)
		}
		noRead := map[string]bool{}
		for _, st := range sc.Steps {
			cmd, args := st.Cmd, st.Args
			if cmd == "send" {
				cmd, args = args[0].Text, args[1:]
			}
			switch cmd {
			case "create", "create2", "createcontainer", "setacl", "createttl":
				if acl := args[len(args)-1].Text; unreadable[acl] || (cmd == "setacl" && unreadable[args[1].Text]) {
					noRead[args[0].Text] = true
				}
			case "exists":
				p := args[0].Text
				for q := range noRead {
					if p == q || strings.HasPrefix(p, q) && strings.Trim(p[len(q):], "0123456789") == "" {
						t.Errorf("seed %d line %d: %s after an ACL without READ on %s", seed, st.Line, st.Text, q)
					}
				}
			}
		}
	}
}

// TestGenerateEnsembleBarriers checks, over many seeds, the rule that
// keeps ensemble scenarios deterministic: once another client may have
// changed the tree, or after a new connection, a client syncs before
// its next request or events step. The exceptions are the setWatches
// that follows a reattach (it goes to a member the runner brought up to
// date, and must send the zxid seen before any sync), a close (from a
// connection without watches, or one whose events were read), and the
// ping after a connection the server refuses or closes. It also checks
// that a settle follows every setacl (after the wait of its pipeline).
func TestGenerateEnsembleBarriers(t *testing.T) {
	writes := map[string]bool{"create": true, "create2": true, "createcontainer": true, "createttl": true,
		"delete": true, "set": true, "setacl": true, "multi": true, "close": true}
	exempt := map[string]bool{"connect": true, "disconnect": true, "close": true, "ping": true,
		"setwatches": true, "setwatches2": true, "sync": true}
	members := 0
	for seed := uint64(1); seed <= 2000; seed++ {
		sc, err := GenerateEnsemble(seed)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !strings.HasPrefix(GenerateEnsembleScript(seed), fmt.Sprintf("== ensemble-%d\n", seed)) {
			t.Fatalf("seed %d: scenario not named ensemble-%d", seed, seed)
		}
		stale := map[string]bool{}
		last := map[string]string{}
		unsettled := false
		for i, st := range sc.Steps {
			cmd, args := st.Cmd, st.Args
			if cmd == "send" {
				cmd, args = args[0].Text, args[1:]
			}
			last[st.Client] = cmd
			switch {
			case cmd == "setacl":
				unsettled = true
			case cmd == "settle":
				unsettled = false
			case unsettled && cmd != "wait":
				t.Errorf("seed %d line %d: %s after a setacl without a settle", seed, st.Line, st.Text)
			}
			sync := cmd == "sync" || cmd == "events" && len(args) > 0 && args[len(args)-1].Text == "sync"
			switch {
			case cmd == "connect":
				// The first connect's creates come before any other
				// client: writes, whose outcome the leader decides.
				stale[st.Client] = i > 0
				if strings.Contains(st.Text, " member=") {
					members++
				}
			case sync:
				stale[st.Client] = false
			case stale[st.Client] && !exempt[cmd]:
				t.Errorf("seed %d line %d: %s without a sync since a change or a new connection", seed, st.Line, st.Text)
			}
			if writes[cmd] {
				for c := range stale {
					if c != st.Client {
						stale[c] = true
					}
				}
			}
		}
		for c, s := range stale {
			if s && last[c] != "disconnect" && last[c] != "close" && last[c] != "ping" {
				t.Errorf("seed %d: %s ends without a sync after the last change", seed, c)
			}
		}
	}
	if members == 0 {
		t.Error("no connect names a member")
	}
}
