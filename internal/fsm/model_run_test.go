package fsm

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/paddockhq/paddock/internal/proto"
)

// generator makes random but bounded entries over a small path space, biased
// towards paths that exist so that most operations get past the first checks.
type generator struct {
	rng      *rand.Rand
	known    []string // paths created so far (sequential names included)
	sessions []int64
}

var (
	basePaths    = []string{"/a", "/b", "/a/x", "/a/y", "/b/x", "/a/x/z", "/c", "/a/y/w"}
	invalidPaths = []string{"", "a", "/a/", "/a/.", "/", "/zookeeper", "/zookeeper/config", "/zookeeper/quota", "/a//x", "/b/..", "/a\x00"}
	aclChoices   = [][]proto.ACL{openACL, openACL, openACL, readACL, aliceACL, authACL, noDelete, noCreate, noWrite, nil, badDigest}
	authChoices  = [][]proto.ID{nil, nil, nil, {aliceID}, {bobID}, {aliceID, bobID}, {superID}}
)

func (g *generator) path() string {
	switch r := g.rng.Intn(100); {
	case r < 8:
		return invalidPaths[g.rng.Intn(len(invalidPaths))]
	case r < 50 && len(g.known) > 0:
		return g.known[g.rng.Intn(len(g.known))]
	default:
		return basePaths[g.rng.Intn(len(basePaths))]
	}
}

func (g *generator) data() []byte {
	switch g.rng.Intn(4) {
	case 0:
		return nil
	case 1:
		return []byte{}
	default:
		return []byte(fmt.Sprintf("d%d", g.rng.Intn(1000)))
	}
}

func (g *generator) version(m *Machine, path string) int32 {
	n := m.Tree().Get(path)
	switch r := g.rng.Intn(10); {
	case r < 5 || n == nil:
		return -1
	case r < 8:
		if g.rng.Intn(2) == 0 {
			return n.Version
		}
		return n.Aversion
	default:
		return int32(g.rng.Intn(4))
	}
}

func (g *generator) op(m *Machine) Op {
	path := g.path()
	switch r := g.rng.Intn(100); {
	case r < 40:
		op := Op{Path: path, Data: g.data(), ACL: aclChoices[g.rng.Intn(len(aclChoices))], TTL: -1}
		op.Flags = int32(g.rng.Intn(7))
		if g.rng.Intn(3) == 0 {
			op.Flags = proto.FlagEphemeral
		}
		if g.rng.Intn(30) == 0 {
			op.Flags = []int32{-1, 7, 100}[g.rng.Intn(3)]
		}
		switch k := g.rng.Intn(10); {
		case k < 5:
			op.Op = proto.OpCreate
		case k < 7:
			op.Op = proto.OpCreate2
		case k < 8:
			op.Op, op.Flags = proto.OpCreateContainer, []int32{proto.FlagContainer, proto.FlagPersistentSequential, proto.FlagEphemeral}[g.rng.Intn(3)]
		default:
			op.Op = proto.OpCreateTTL
			op.TTL = []int64{1 + g.rng.Int63n(80), 1 + g.rng.Int63n(80), 0, -1, 1 << 40}[g.rng.Intn(5)]
			if g.rng.Intn(4) != 0 {
				op.Flags = []int32{proto.FlagPersistentWithTTL, proto.FlagPersistentSequentialWithTTL}[g.rng.Intn(2)]
			}
		}
		return op
	case r < 58:
		return Op{Op: proto.OpDelete, Path: path, Version: g.version(m, path)}
	case r < 74:
		return Op{Op: proto.OpSetData, Path: path, Data: g.data(), Version: g.version(m, path)}
	case r < 82:
		return Op{Op: proto.OpSetACL, Path: path, ACL: aclChoices[g.rng.Intn(len(aclChoices))], Version: g.version(m, path)}
	case r < 90:
		return Op{Op: proto.OpCheck, Path: path, Version: g.version(m, path)}
	default:
		return Op{Op: proto.OpDeleteContainer, Path: path}
	}
}

func (g *generator) entry(m *Machine, now int64) *Entry {
	session := g.sessions[g.rng.Intn(len(g.sessions))]
	switch r := g.rng.Intn(100); {
	case r < 6:
		return &Entry{Type: EntryCreateSession, Session: session, Timeout: int32(g.rng.Intn(10000)), Passwd: g.data(), Time: now}
	case r < 8:
		return &Entry{Type: EntryCloseSession, Session: session, Time: now}
	case r < 11:
		// The reaper: no session, one deleteContainer.
		return &Entry{Type: EntryTxn, Time: now, Ops: []Op{{Op: proto.OpDeleteContainer, Path: g.path()}}}
	case r < 25:
		ops := make([]Op, g.rng.Intn(5))
		for i := range ops {
			ops[i] = g.op(m)
			if ops[i].Op == proto.OpDeleteContainer || (ops[i].Op == proto.OpSetACL && g.rng.Intn(2) == 0) {
				ops[i] = Op{Op: proto.OpCheck, Path: ops[i].Path, Version: -1}
			}
		}
		return &Entry{Type: EntryTxn, Session: session, Auth: authChoices[g.rng.Intn(len(authChoices))], Multi: true, Ops: ops, Time: now}
	default:
		return &Entry{Type: EntryTxn, Session: session, Auth: authChoices[g.rng.Intn(len(authChoices))], Ops: []Op{g.op(m)}, Time: now}
	}
}

func emptyToNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// runModel applies steps random entries to a Machine and to the model and
// compares results and whole states after every step. Every 1000 steps the
// machine is replaced by a restore of its own snapshot.
func runModel(t *testing.T, seed int64, ext bool, steps int) {
	rng := rand.New(rand.NewSource(seed))
	g := &generator{rng: rng, sessions: []int64{sess1, sess2, 0x3000000000003}}
	m := New(Options{ExtendedTypes: ext})
	mod := newModel(ext)
	now := t0
	var stats [4]int // ok, failed single, ok multi, failed multi
	codes := make(map[proto.ErrCode]int)
	for i := 1; i <= steps; i++ {
		now += int64(rng.Intn(25))
		e := g.entry(m, now)
		if i <= 3 {
			e = &Entry{Type: EntryCreateSession, Session: g.sessions[i-1], Timeout: 1000, Time: now}
		}
		r := m.Apply(uint64(i), e.Encode(nil))
		wantErr, wantOps, wantChanges := mod.apply(e, int64(i))
		if r.Err != wantErr || !reflect.DeepEqual(emptyToNil(r.Ops), emptyToNil(wantOps)) ||
			!reflect.DeepEqual(emptyToNil(r.Changes), emptyToNil(wantChanges)) {
			t.Fatalf("seed %d step %d: entry %+v\nmachine: %v %+v\n         %+v\nmodel:   %v %+v\n         %+v",
				seed, i, e, r.Err, r.Ops, r.Changes, wantErr, wantOps, wantChanges)
		}
		if d := diffState(mod.dump(uint64(i)), dumpMachine(m)); d != "" {
			t.Fatalf("seed %d step %d: entry %+v\nstates differ (model first):\n%s", seed, i, e, d)
		}
		codes[r.Err]++
		for _, res := range r.Ops {
			codes[res.Err]++
			if res.Path != "" && len(g.known) < 200 {
				g.known = append(g.known, res.Path)
			}
		}
		if e.Type == EntryTxn && r.Err != proto.ErrSessionExpired {
			k := 0
			if r.Err != proto.ErrOK || (e.Multi && len(r.Ops) > 0 && r.Ops[0].Op == proto.OpError) {
				k = 1
			}
			if e.Multi {
				k += 2
			}
			stats[k]++
		}
		if i%1000 == 0 {
			checkState(t, m)
			restored := New(Options{ExtendedTypes: ext})
			if err := restored.Restore(m.AppendSnapshot(nil)); err != nil {
				t.Fatalf("seed %d step %d: restore: %v", seed, i, err)
			}
			m = restored
		}
	}
	// The generator must reach both outcomes of both kinds, or the test
	// proves little.
	for k, n := range stats {
		if n < steps/100 {
			t.Fatalf("seed %d: outcome class %d seen only %d times in %d steps: %v", seed, k, n, steps, stats)
		}
	}
	for _, c := range []proto.ErrCode{proto.ErrOK, proto.ErrBadArguments, proto.ErrNoNode, proto.ErrNoAuth,
		proto.ErrBadVersion, proto.ErrNoChildrenForEphemerals, proto.ErrNodeExists, proto.ErrNotEmpty,
		proto.ErrSessionExpired, proto.ErrInvalidACL, proto.ErrRuntimeInconsistency} {
		if codes[c] == 0 {
			t.Fatalf("seed %d: no result with %v in %d steps: %v", seed, c, steps, codes)
		}
	}
	if ext == (codes[proto.ErrUnimplemented] > 0) {
		t.Fatalf("seed %d: Unimplemented seen %d times with extended types %v", seed, codes[proto.ErrUnimplemented], ext)
	}
	t.Logf("seed %d: ok single %d, failed single %d, ok multi %d, failed multi %d, nodes %d; codes %v",
		seed, stats[0], stats[1], stats[2], stats[3], m.Tree().NodeCount(), codes)
}

func TestModel(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		runModel(t, seed, seed%2 == 1, 5000)
	}
}
