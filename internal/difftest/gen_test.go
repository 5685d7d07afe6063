package difftest

import (
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
