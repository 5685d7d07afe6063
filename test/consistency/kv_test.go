package consistency_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/paddockhq/paddock/zk"
)

// The linearizability workload: kvKeys znodes each hold an integer; the
// model of one is a register with ZooKeeper's data version.
const kvKeys = 3

func kvPath(key int) string { return "/lin/k" + strconv.Itoa(key) }

type kvOp uint8

const (
	opRead  kvOp = iota // Sync, then Get
	opWrite             // Set with version -1
	opCAS               // Set with an expected version
)

// kvInput is what a client asked.
type kvInput struct {
	op      kvOp
	key     int
	value   int64 // written by opWrite and opCAS
	version int32 // expected by opCAS
}

type kvResult uint8

const (
	resOK         kvResult = iota
	resBadVersion          // opCAS refused
	resUnknown             // connection loss or timeout: applied or not
	resApplied             // of unknown outcome, but its value was read: applied
)

// kvOutput is what the client got.
type kvOutput struct {
	result  kvResult
	value   int64 // read
	version int32 // opRead: the znode's version; opWrite, opCAS: the new version
}

// kvState is one key's state: its value and data version.
type kvState struct {
	value   int64
	version int32
}

// kvModel is the sequential specification: Set with version -1 always
// succeeds and adds one to the version; Set with version v succeeds iff
// the version is v, and then adds one; a read returns value and version. A
// write of unknown outcome may or may not have happened, so the model is
// nondeterministic. Each key is checked on its own.
var kvModel = porcupine.NondeterministicModel{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		parts := make([][]porcupine.Operation, kvKeys)
		for _, op := range history {
			k := op.Input.(kvInput).key
			parts[k] = append(parts[k], op)
		}
		return parts
	},
	Init: func() []any { return []any{kvState{}} },
	Step: func(state, input, output any) []any {
		s, in, out := state.(kvState), input.(kvInput), output.(kvOutput)
		applied := kvState{value: in.value, version: s.version + 1}
		switch in.op {
		case opRead:
			if out.result == resOK && out.value == s.value && out.version == s.version {
				return []any{s}
			}
		case opWrite:
			switch out.result {
			case resOK:
				if out.version == applied.version {
					return []any{applied}
				}
			case resUnknown:
				return []any{s, applied}
			case resApplied:
				return []any{applied}
			}
		case opCAS:
			match := s.version == in.version
			switch {
			case out.result == resOK && match && out.version == applied.version:
				return []any{applied}
			case out.result == resBadVersion && !match:
				return []any{s}
			case out.result == resUnknown && match:
				return []any{s, applied}
			case out.result == resUnknown:
				return []any{s}
			case out.result == resApplied && match:
				return []any{applied}
			}
		}
		return nil
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(kvInput), output.(kvOutput)
		var res string
		switch out.result {
		case resOK:
			res = "ok"
		case resBadVersion:
			res = "bad version"
		case resUnknown:
			res = "unknown"
		case resApplied:
			res = "unknown, applied"
		}
		switch in.op {
		case opRead:
			return fmt.Sprintf("read k%d -> %s (v%d)", in.key, fmtValue(out.value), out.version)
		case opWrite:
			return fmt.Sprintf("write k%d = %s -> %s v%d", in.key, fmtValue(in.value), res, out.version)
		default:
			return fmt.Sprintf("cas k%d v%d = %s -> %s v%d", in.key, in.version, fmtValue(in.value), res, out.version)
		}
	},
	DescribeState: func(state any) string {
		s := state.(kvState)
		return fmt.Sprintf("%s (v%d)", fmtValue(s.value), s.version)
	},
}

// kvValue is the value client writes as its n-th write: unique in the
// history, and readable (client c, write n).
func kvValue(client, n int) int64 { return int64(client)<<32 | int64(n) }

func fmtValue(v int64) string {
	if v == 0 {
		return "0"
	}
	return fmt.Sprintf("c%d.%d", v>>32, v&0xffffffff)
}

// kvClient runs the linearizability workload on one session at a time,
// preferring one member, and records every operation.
type kvClient struct {
	e      *env
	id     int
	prefer int
	rng    *rand.Rand
	clock  clock

	ops      []porcupine.Operation // return of an unknown outcome: unknownReturn
	known    [kvKeys]int32         // last version seen per key, for the CAS guesses
	writes   int
	sessions int
}

// unknownReturn marks an operation that never returned; checkKV moves it
// to the end of the history.
const unknownReturn = -1

func (c *kvClient) run(ctx context.Context) {
	var conn *zk.Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	for ctx.Err() == nil {
		if conn == nil {
			dctx, cancel := context.WithTimeout(ctx, callTimeout)
			var err error
			conn, err = c.e.dial(dctx, c.prefer)
			cancel()
			if err != nil {
				conn = nil
				continue
			}
			c.sessions++
		}
		if err := c.step(ctx, conn); sessionLost(err) {
			conn.Close()
			conn = nil
		}
	}
}

// step makes one random call and records it.
func (c *kvClient) step(ctx context.Context, conn *zk.Conn) error {
	in := kvInput{key: c.rng.IntN(kvKeys)}
	switch r := c.rng.IntN(10); {
	case r < 4:
		in.op = opRead
	case r < 7:
		in.op = opWrite
	default:
		in.op = opCAS
		in.version = c.known[in.key]
		if c.rng.IntN(4) == 0 {
			in.version += int32(c.rng.IntN(3)) - 1 // sometimes a stale or future guess
		}
		in.version = max(in.version, 0) // -1 would mean any version
	}
	if in.op != opRead {
		c.writes++
		in.value = kvValue(c.id, c.writes)
	}
	// The call's own context outlives the workload's end a little, so that
	// the last calls do not all end as unknown.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
	defer cancel()
	call := c.clock.now()
	var out kvOutput
	var err error
	switch in.op {
	case opRead:
		if _, err = conn.Sync(cctx, kvPath(in.key)); err != nil {
			return err // a failed read tells nothing: left out
		}
		var data []byte
		var st *zk.Stat
		if data, st, err = conn.Get(cctx, kvPath(in.key)); err != nil {
			return err
		}
		v, perr := strconv.ParseInt(string(data), 10, 64)
		if perr != nil {
			panic(fmt.Sprintf("%s holds %q", kvPath(in.key), data))
		}
		out = kvOutput{result: resOK, value: v, version: st.Version}
		c.known[in.key] = st.Version
	default:
		expect := int32(-1)
		if in.op == opCAS {
			expect = in.version
		}
		var st *zk.Stat
		st, err = conn.Set(cctx, kvPath(in.key), []byte(strconv.FormatInt(in.value, 10)), expect)
		switch {
		case err == nil:
			out = kvOutput{result: resOK, version: st.Version}
			c.known[in.key] = st.Version
		case errors.Is(err, zk.ErrBadVersion):
			out = kvOutput{result: resBadVersion}
		default:
			out = kvOutput{result: resUnknown}
		}
	}
	ret := c.clock.now()
	if out.result == resUnknown {
		ret = unknownReturn
	}
	c.ops = append(c.ops, porcupine.Operation{ClientId: c.id, Input: in, Call: call, Output: out, Return: ret})
	return err
}

// readAll reads every key after a Sync through member id alone, and
// records the reads as client id.
func readAll(t *testing.T, e *env, member, client int, clk clock) []porcupine.Operation {
	t.Helper()
	conn, err := e.dialOnly(callCtx(t), member)
	if err != nil {
		t.Fatalf("connect to member %d: %v", member, err)
	}
	defer conn.Close()
	var ops []porcupine.Operation
	for k := range kvKeys {
		call := clk.now()
		if _, err := conn.Sync(callCtx(t), kvPath(k)); err != nil {
			t.Fatalf("sync through member %d: %v", member, err)
		}
		data, st, err := conn.Get(callCtx(t), kvPath(k))
		if err != nil {
			t.Fatalf("read %s through member %d: %v", kvPath(k), member, err)
		}
		v, err := strconv.ParseInt(string(data), 10, 64)
		if err != nil {
			t.Fatalf("%s holds %q", kvPath(k), data)
		}
		ops = append(ops, porcupine.Operation{ClientId: client, Input: kvInput{op: opRead, key: k}, Call: call,
			Output: kvOutput{result: resOK, value: v, version: st.Version}, Return: clk.now()})
	}
	return ops
}

// checkKV checks the history with porcupine; on failure it writes the
// visualization, with the nemesis' faults, and fails t with its path.
func checkKV(t *testing.T, ops []porcupine.Operation, faults []nemesisEvent) {
	t.Helper()
	c := checkKVHistory(ops, 30*time.Second)
	t.Logf("history: %d operations (%d reads, %d writes of which %d of unknown outcome), %d faults",
		len(c.ops), c.reads, c.writes, c.unknown, len(faults))
	t.Logf("porcupine: %s in %v", c.result, c.took.Round(time.Millisecond))
	err := c.err()
	if err == nil {
		return
	}
	t.Error(err)
	if c.result == porcupine.Illegal {
		for _, line := range explainKV(c.ops) {
			t.Error(line)
		}
	}
	var notes []porcupine.Annotation
	for _, f := range faults {
		notes = append(notes, porcupine.Annotation{Tag: "nemesis", Start: f.start, End: f.end, Description: f.what})
	}
	c.info.AddAnnotations(notes)
	dir := artifactDir(t)
	writeHistory(t, filepath.Join(dir, "history.txt"), c.ops)
	p := filepath.Join(dir, "linearizability.html")
	if err := porcupine.VisualizePath(kvModel.ToModel(), c.info, p); err != nil {
		t.Fatalf("writing the visualization: %v", err)
	}
	t.Logf("visualization: %s", p)
}

// kvCheck is what checkKVHistory found.
type kvCheck struct {
	ops                    []porcupine.Operation // as checked: unknown outcomes settled, every return set
	reads, writes, unknown int                   // unknown: writes left of unknown outcome
	timeout, took          time.Duration
	result                 porcupine.CheckResult
	info                   porcupine.LinearizationInfo
}

// checkKVHistory settles what it can of the writes of unknown outcome
// (resolveUnknown), gives the others a return after everything else (they
// may take effect at any time after their call), and checks the history
// with porcupine, for at most timeout.
func checkKVHistory(ops []porcupine.Operation, timeout time.Duration) kvCheck {
	var end int64
	for _, op := range ops {
		end = max(end, op.Call, op.Return)
	}
	c := kvCheck{ops: resolveUnknown(ops), timeout: timeout}
	for i := range c.ops {
		if c.ops[i].Return == unknownReturn {
			c.ops[i].Return = end + 1 // may have taken effect at any time after its call
			if c.ops[i].Output.(kvOutput).result == resUnknown {
				c.unknown++
			}
		}
		if c.ops[i].Input.(kvInput).op == opRead {
			c.reads++
		} else {
			c.writes++
		}
	}
	start := time.Now()
	c.result, c.info = porcupine.CheckOperationsVerbose(kvModel.ToModel(), c.ops, timeout)
	c.took = time.Since(start)
	return c
}

// err says what is wrong with the history, or returns nil.
func (c kvCheck) err() error {
	switch c.result {
	case porcupine.Ok:
		return nil
	case porcupine.Illegal:
		return errors.New("history is not linearizable")
	default:
		// No violation found, none proved absent: the search gave up,
		// which writes of unknown outcome that resolveUnknown cannot
		// settle make possible. A history left unchecked must not pass.
		return fmt.Errorf("porcupine could not decide within %v: the history is not checked", c.timeout)
	}
}

// explainKV looks for the plainest anomalies of a history that porcupine
// refused, so the failure says what went wrong without the visualization:
// two acknowledged writes that got the same version of a key, a read that
// returns a value other than the one the write of that version wrote, and
// a read older than a write acknowledged before it began.
func explainKV(ops []porcupine.Operation) []string {
	var out []string
	byVersion := make([]map[int32]porcupine.Operation, kvKeys)
	for k := range byVersion {
		byVersion[k] = map[int32]porcupine.Operation{}
	}
	desc := func(op porcupine.Operation) string {
		ret := fmtNs(op.Return)
		return fmt.Sprintf("[client %d %s-%s] %s", op.ClientId, fmtNs(op.Call), ret, kvModel.DescribeOperation(op.Input, op.Output))
	}
	for _, op := range ops {
		in, o := op.Input.(kvInput), op.Output.(kvOutput)
		if in.op == opRead || o.result != resOK {
			continue
		}
		if prev, dup := byVersion[in.key][o.version]; dup {
			out = append(out, fmt.Sprintf("two acknowledged writes made version %d of k%d: %s and %s", o.version, in.key, desc(prev), desc(op)))
		}
		byVersion[in.key][o.version] = op
	}
	for _, r := range ops {
		in, o := r.Input.(kvInput), r.Output.(kvOutput)
		if in.op != opRead {
			continue
		}
		if w, ok := byVersion[in.key][o.version]; ok && w.Input.(kvInput).value != o.value {
			out = append(out, fmt.Sprintf("read %s, but version %d was written by %s", desc(r), o.version, desc(w)))
		}
		for v, w := range byVersion[in.key] {
			if v > o.version && w.Return < r.Call {
				out = append(out, fmt.Sprintf("stale read %s: %s was acknowledged before it began", desc(r), desc(w)))
				break
			}
		}
	}
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("... and %d more", len(out)-20))
	}
	return out
}

// writeHistory writes ops, one a line in call order, for reading or for
// tools: client, call and return (ns), then the operation.
func writeHistory(t *testing.T, path string, ops []porcupine.Operation) {
	sorted := slices.Clone(ops)
	slices.SortFunc(sorted, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	var b strings.Builder
	for _, op := range sorted {
		fmt.Fprintf(&b, "%d %d %d %s\n", op.ClientId, op.Call, op.Return, kvModel.DescribeOperation(op.Input, op.Output))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Errorf("writing the history: %v", err)
		return
	}
	t.Logf("history: %s", path)
}

// resolveUnknown settles what the history itself says about writes of
// unknown outcome, which otherwise make porcupine's search explode (each
// may or may not have happened, anywhere after its call):
//
//   - one whose value was read was applied (values are unique): it becomes
//     resApplied, applied at some time after its call;
//   - when every version of a key up to the last is accounted for, made by
//     an acknowledged write or holding a value written by one applied,
//     and every refused compare-and-set of the key returned before a read
//     of it began, none of the others was applied, and they are left out.
//
// Leaving an operation of unknown outcome out never hides a violation:
// such an operation can always be put last, applied or not. On a key whose
// versions are all accounted for, an unread write of unknown outcome can
// only have made a version above the last, after every read and every
// acknowledged write; only a refused compare-and-set could come after it
// and need it (to move the version off the one it expected), which a
// later read rules out: so leaving it out does not make a linearizable
// history look otherwise.
func resolveUnknown(ops []porcupine.Operation) []porcupine.Operation {
	read := map[int64]bool{}
	made := make([]map[int32]bool, kvKeys) // versions made by acknowledged writes, or seen
	top := make([]int32, kvKeys)
	lastRead := make([]int64, kvKeys)    // latest call of a read, per key
	lastRefused := make([]int64, kvKeys) // latest return of a refused compare-and-set, per key
	for k := range made {
		made[k] = map[int32]bool{}
		lastRead[k], lastRefused[k] = -1, -1
	}
	for _, op := range ops {
		in, out := op.Input.(kvInput), op.Output.(kvOutput)
		switch {
		case in.op == opRead:
			read[out.value] = true
			made[in.key][out.version] = true
			top[in.key] = max(top[in.key], out.version)
			lastRead[in.key] = max(lastRead[in.key], op.Call)
		case out.result == resOK:
			made[in.key][out.version] = true
			top[in.key] = max(top[in.key], out.version)
		case out.result == resBadVersion:
			lastRefused[in.key] = max(lastRefused[in.key], op.Return)
		}
	}
	complete := make([]bool, kvKeys)
	for k := range complete {
		complete[k] = lastRefused[k] < 0 || lastRead[k] > lastRefused[k]
		for v := int32(1); complete[k] && v <= top[k]; v++ {
			if !made[k][v] {
				complete[k] = false
				break
			}
		}
	}
	out := make([]porcupine.Operation, 0, len(ops))
	for _, op := range ops {
		in, o := op.Input.(kvInput), op.Output.(kvOutput)
		if in.op != opRead && o.result == resUnknown {
			switch {
			case read[in.value]:
				o.result = resApplied
				op.Output = o
			case complete[in.key]:
				continue
			}
		}
		out = append(out, op)
	}
	return out
}
