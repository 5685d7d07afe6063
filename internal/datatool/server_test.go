package datatool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/config"
	"github.com/paddockhq/paddock/internal/fsm"
	"github.com/paddockhq/paddock/internal/server"
	"github.com/paddockhq/paddock/internal/storage"
	"github.com/paddockhq/paddock/zk"
)

// serverSnapCount makes a real server snapshot often.
const serverSnapCount = 10

// startServer runs an in-process standalone server on dataDir.
func startServer(t *testing.T, dataDir string, retain int) *server.Server {
	t.Helper()
	cfg := config.Default()
	cfg.ClientPort = 0
	cfg.ClientPortAddress = "127.0.0.1"
	cfg.DataDir, cfg.DataLogDir = dataDir, dataDir
	cfg.SnapCount = serverSnapCount
	cfg.AutopurgeSnapRetainCount = retain
	cfg.ExtendedTypesEnabled = true
	s, err := server.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func connect(t *testing.T, s *server.Server) *zk.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := zk.Connect(ctx, s.Addr().String(), zk.WithSessionTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// written is what a client saw while populating a server.
type written struct {
	stats     map[string]*zk.Stat // the znodes written, as last seen
	data      map[string][]byte
	sessions  []int64
	ephemeral map[string]int64 // path -> owner
	lastZxid  int64            // zxid of the last write
	znodes    int              // znodes at the end, counted by the client
	marked    int64            // zxid after which only /filler changed
	dataDir   string
}

// populate writes a varied tree through two sessions, then fills the log
// with setData on /filler until a snapshot taken after the varied writes is
// on disk, and returns what the clients saw. The server is left running.
func populate(t *testing.T, s *server.Server, dataDir string) *written {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, b := connect(t, s), connect(t, s)
	w := &written{stats: map[string]*zk.Stat{}, data: map[string][]byte{}, ephemeral: map[string]int64{}, dataDir: dataDir,
		sessions: []int64{a.SessionID(), b.SessionID()}}
	open := zk.WorldACL(zk.PermAll)
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(a.Create(ctx, "/app", []byte("hello"), open, zk.ModePersistent))
	for range 3 {
		must(a.Create(ctx, "/app/seq-", []byte{}, open, zk.ModePersistentSequential))
	}
	must(a.Create(ctx, "/app/eph", []byte("mine"), open, zk.ModeEphemeral))
	must(b.Create(ctx, "/app/lock-", nil, open, zk.ModeEphemeralSequential))
	must(a.Multi(ctx,
		&zk.CreateOp{Path: "/m", ACL: open, Mode: zk.ModePersistent},
		&zk.CreateOp{Path: "/m/bin", Data: []byte{0xff, 0x00, 0xfe}, ACL: open, Mode: zk.ModePersistent},
		&zk.SetDataOp{Path: "/app", Data: []byte("world"), Version: 0}))
	must(a.Create(ctx, "/box", nil, open, zk.ModeContainer))
	must(a.Create(ctx, "/box/item", []byte("x"), open, zk.ModePersistent))
	if _, _, err := a.CreateTTL(ctx, "/ttl", []byte("t"), open, zk.ModePersistentWithTTL, time.Hour); err != nil {
		t.Fatal(err)
	}
	must(a.SetACL(ctx, "/m", zk.WorldACL(zk.PermRead|zk.PermWrite), -1))
	if err := a.Delete(ctx, "/app/seq-0000000001", -1); err != nil {
		t.Fatal(err)
	}
	must(a.Create(ctx, "/filler", nil, open, zk.ModePersistent))
	// Record every znode as the client sees it now.
	var walk func(p string)
	walk = func(p string) {
		data, st := must2(t, a, ctx, p)
		w.stats[p], w.data[p] = st, data
		if st.EphemeralOwner != 0 && !strings.HasPrefix(p, "/box") && p != "/ttl" {
			w.ephemeral[p] = st.EphemeralOwner
		}
		w.marked = max(w.marked, st.Mzxid, st.Czxid, st.Pzxid)
		kids, _, err := a.Children(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range kids {
			if p == "/" {
				walk("/" + k)
			} else {
				walk(p + "/" + k)
			}
		}
	}
	walk("/")
	w.znodes = len(w.stats)
	// Fill until five snapshots are durable, the newest past the marked
	// zxid but not past the last write.
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; ; i++ {
		st, err := a.Set(ctx, "/filler", []byte(fmt.Sprint(i)), -1)
		if err != nil {
			t.Fatal(err)
		}
		w.lastZxid = st.Mzxid
		w.stats["/filler"], w.data["/filler"] = st, []byte(fmt.Sprint(i))
		infos, _ := storage.ListSnapshots(filepath.Join(dataDir, SnapSubdir))
		if len(infos) >= 5 && infos[len(infos)-1].Index > uint64(w.marked) && infos[len(infos)-1].Index < uint64(w.lastZxid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot after zxid %#x appeared", w.marked)
		}
	}
	return w
}

func must2(t *testing.T, c *zk.Conn, ctx context.Context, p string) ([]byte, *zk.Stat) {
	t.Helper()
	data, st, err := c.Get(ctx, p)
	if err != nil {
		t.Fatalf("get %s: %v", p, err)
	}
	return data, st
}

// serverData populates a server in a new directory and stops it; the
// directory is shared by the tests that only read it.
func serverData(t *testing.T) *written {
	t.Helper()
	dir := t.TempDir()
	s := startServer(t, dir, 10)
	w := populate(t, s, dir)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return w
}

// copyDir copies a data directory tree.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o750)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o640)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestServerDataTools(t *testing.T) {
	w := serverData(t)
	dirs := DataDirs(w.dataDir, "")
	t.Run("verify", func(t *testing.T) { testVerifyServerData(t, w, dirs) })
	t.Run("inspect", func(t *testing.T) { testInspectServerData(t, w) })
	t.Run("dump", func(t *testing.T) { testDumpServerData(t, w) })
	t.Run("wal", func(t *testing.T) { testWALServerData(t, w, dirs) })
	t.Run("corrupt", func(t *testing.T) { testCorruptServerData(t, w) })
	t.Run("purge", func(t *testing.T) { testPurgeServerData(t, w) })
}

func testVerifyServerData(t *testing.T, w *written, dirs Dirs) {
	rep, err := Verify(dirs, VerifyOptions{FSM: fsm.Options{ExtendedTypes: true}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rep.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || len(rep.Warnings) != 0 {
		t.Fatalf("verify of a cleanly stopped server's data failed:\n%s", out.String())
	}
	p := rep.Replay
	if p == nil || p.LastZxid != uint64(w.lastZxid) || p.Znodes != w.znodes || p.Ephemerals != len(w.ephemeral) || p.Sessions != 2 {
		t.Fatalf("replay = %+v, want last zxid %#x, %d znodes, %d ephemerals, 2 sessions\n%s", p, w.lastZxid, w.znodes, len(w.ephemeral), out.String())
	}
	if len(rep.Snapshots) < 2 || p.SnapshotIndex != rep.Snapshots[len(rep.Snapshots)-1].Index || p.Applied == 0 {
		t.Fatalf("expected a replay from the newest of several snapshots plus WAL entries:\n%s", out.String())
	}
	if !strings.HasSuffix(out.String(), "OK\n") || !strings.Contains(out.String(), fmt.Sprintf("last zxid %#x", w.lastZxid)) {
		t.Fatalf("report:\n%s", out.String())
	}
}

func testInspectServerData(t *testing.T, w *written) {
	info, err := ResolveSnapshot(w.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := InspectSnapshot(info, InspectOptions{ExtendedTypes: true})
	if err != nil {
		t.Fatal(err)
	}
	b := sum.Body
	// The newest snapshot is past every write but /filler's updates.
	if !sum.ChecksumOK || b == nil || b.LastZxid != info.Index || b.LastZxid <= uint64(w.marked) {
		t.Fatalf("summary %+v body %+v, want a verified snapshot after %#x", sum, b, w.marked)
	}
	if b.Znodes != int64(w.znodes) || b.Ephemeral != int64(len(w.ephemeral)) || b.Container != 1 || b.TTL != 1 ||
		b.Persistent != int64(w.znodes-len(w.ephemeral)-2) || b.Sessions != 2 || b.EphemeralOwners != 2 || b.ACLLists < 3 {
		t.Fatalf("body summary %+v; client saw %d znodes, %d ephemerals", b, w.znodes, len(w.ephemeral))
	}
	if !slices.Equal(sum.Voters, []uint64{1}) {
		t.Fatalf("voters %v", sum.Voters)
	}
	var out bytes.Buffer
	if err := sum.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"checksum:        ok", fmt.Sprintf("znodes:          %d (persistent", w.znodes), "sessions:        2"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out.String())
		}
	}
}

func testDumpServerData(t *testing.T, w *written) {
	info, err := ResolveSnapshot(w.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := DumpSnapshot(&out, info, DumpOptions{JSON: true, Data: true, ExtendedTypes: true}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	sessions := map[string][]string{}
	for i, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var head struct{ Type string }
		if err := json.Unmarshal([]byte(line), &head); err != nil {
			t.Fatalf("line %d is not JSON: %v: %s", i+1, err, line)
		}
		switch head.Type {
		case "znode":
			var z jsonZnodeLine
			if err := json.Unmarshal([]byte(line), &z); err != nil {
				t.Fatal(err)
			}
			seen[z.Path] = true
			st, ok := w.stats[z.Path]
			if !ok {
				t.Errorf("dump has %s, which the client never saw", z.Path)
				continue
			}
			if z.Path == "/filler" {
				continue // changed after the snapshot
			}
			want := jsonStat{Czxid: st.Czxid, Ctime: st.Ctime, Mzxid: st.Mzxid, Mtime: st.Mtime, Pzxid: st.Pzxid,
				Cversion: st.Cversion, Version: st.Version, Aversion: st.Aversion, EphemeralOwner: hexID(st.EphemeralOwner),
				DataLength: st.DataLength, NumChildren: st.NumChildren}
			if z.Stat != want {
				t.Errorf("%s: dump stat %+v, client saw %+v", z.Path, z.Stat, want)
			}
			var data *string
			if err := json.Unmarshal(z.Data, &data); err != nil {
				t.Fatalf("%s: data %s: %v", z.Path, z.Data, err)
			}
			wantData, wantEnc := dataJSON(w.data[z.Path])
			if (data == nil) != (wantData == nil) || (data != nil && (*data != *wantData || z.Enc != wantEnc)) {
				t.Errorf("%s: data %s/%s, want %v/%s", z.Path, z.Data, z.Enc, wantData, wantEnc)
			}
		case "session":
			var s jsonSessionLine
			if err := json.Unmarshal([]byte(line), &s); err != nil {
				t.Fatal(err)
			}
			sessions[s.ID] = s.Ephemerals
			if s.Timeout != 30000 {
				t.Errorf("session %s timeout %d", s.ID, s.Timeout)
			}
		case "snapshot":
			if i != 0 {
				t.Errorf("snapshot line at %d", i+1)
			}
		default:
			t.Errorf("unknown line type %q", head.Type)
		}
	}
	if len(seen) != w.znodes {
		t.Errorf("dump has %d znodes, the client saw %d", len(seen), w.znodes)
	}
	for path, owner := range w.ephemeral {
		if !slices.Contains(sessions[hexID(owner)], path) {
			t.Errorf("session %s lists %v, not its ephemeral %s", hexID(owner), sessions[hexID(owner)], path)
		}
	}
	if len(sessions) != 2 {
		t.Errorf("sessions %v", sessions)
	}
	// The text dump has the same znodes.
	out.Reset()
	if err := DumpSnapshot(&out, info, DumpOptions{Data: true, ExtendedTypes: true}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\n/m/bin\n", "data = base64:/wD+\n", "data = \"world\"\n", "type = container", "type = ttl (ttl 3600000 ms)",
		fmt.Sprintf("ephemeralOwner = %s\n", hexID(w.ephemeral["/app/eph"])), "acl = [world:anyone:rw]"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text dump lacks %q", want)
		}
	}
}

func testWALServerData(t *testing.T, w *written, dirs Dirs) {
	var out bytes.Buffer
	res, err := DumpWAL(&out, dirs.WAL, WALDumpOptions{})
	if err != nil || res.Torn != nil {
		t.Fatalf("dump: %v, torn %+v", err, res.Torn)
	}
	text := out.String()
	for _, want := range []string{
		fmt.Sprintf("zxid=%s", hexID(w.lastZxid)),
		fmt.Sprintf("session=%s", hexID(w.sessions[0])),
		"setData /filler version=-1",
		"hardstate term=",
		"snapshot index=",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("WAL dump lacks %q", want)
		}
	}
	// --from and --limit: exactly the entries asked for, from that index.
	from := uint64(w.lastZxid) - 2
	out.Reset()
	res, err = DumpWAL(&out, dirs.WAL, WALDumpOptions{JSON: true, From: from, Limit: 2})
	if err != nil || res.Entries != 2 {
		t.Fatalf("dump --from %d --limit 2: %v, %d entries", from, err, res.Entries)
	}
	var idx []uint64
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var r jsonRecordLine
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.Type == "entry" {
			idx = append(idx, r.Index)
			if r.FSM == nil || r.FSM.Type != "txn" || r.FSM.Zxid != r.Index || len(r.FSM.Ops) != 1 || r.FSM.Ops[0].Path != "/filler" {
				t.Errorf("entry %d: %s", r.Index, line)
			}
		}
	}
	if !slices.Equal(idx, []uint64{from, from + 1}) {
		t.Errorf("entries %v, want [%d %d]", idx, from, from+1)
	}
}

// flip inverts one byte of a file.
func flip(t *testing.T, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[off] ^= 0xff
	if err := os.WriteFile(path, b, 0o640); err != nil {
		t.Fatal(err)
	}
}

func onlySegment(t *testing.T, walDir string) storage.WALSegment {
	t.Helper()
	segs, err := storage.ListWALSegments(walDir)
	if err != nil || len(segs) == 0 {
		t.Fatalf("segments %v: %v", segs, err)
	}
	return segs[len(segs)-1]
}

func testCorruptServerData(t *testing.T, w *written) {
	t.Run("middle of the WAL", func(t *testing.T) {
		dirs := DataDirs(copyDir(t, w.dataDir), "")
		seg := onlySegment(t, dirs.WAL)
		flip(t, seg.Path, seg.Size/2)
		rep, err := Verify(dirs, VerifyOptions{FSM: fsm.Options{ExtendedTypes: true}})
		if err != nil {
			t.Fatal(err)
		}
		if rep.OK() || rep.Problems[0].File != seg.Path || rep.Problems[0].Offset <= 0 || rep.Problems[0].Offset > seg.Size/2 ||
			!strings.Contains(rep.Problems[0].Message, "a valid record follows") || rep.WAL.TornTail != nil {
			t.Fatalf("problems %+v torn %+v", rep.Problems, rep.WAL.TornTail)
		}
		var out bytes.Buffer
		if _, err := DumpWAL(&out, dirs.WAL, WALDumpOptions{}); !errors.Is(err, storage.ErrCorrupt) {
			t.Fatalf("wal dump of a corrupt WAL: %v", err)
		}
	})
	t.Run("torn tail", func(t *testing.T) {
		dirs := DataDirs(copyDir(t, w.dataDir), "")
		seg := onlySegment(t, dirs.WAL)
		if err := os.Truncate(seg.Path, seg.Size-3); err != nil {
			t.Fatal(err)
		}
		rep, err := Verify(dirs, VerifyOptions{FSM: fsm.Options{ExtendedTypes: true}})
		if err != nil {
			t.Fatal(err)
		}
		tt := rep.WAL.TornTail
		if !rep.OK() || tt == nil || tt.Path != seg.Path || tt.Offset >= seg.Size-3 || len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "torn tail") {
			t.Fatalf("problems %+v torn %+v warnings %v", rep.Problems, tt, rep.Warnings)
		}
		var out bytes.Buffer
		res, err := DumpWAL(&out, dirs.WAL, WALDumpOptions{})
		if err != nil || res.Torn == nil || !strings.Contains(out.String(), "torn tail: "+seg.Path) {
			t.Fatalf("wal dump: %v %+v", err, res.Torn)
		}
	})
	t.Run("snapshot", func(t *testing.T) {
		dirs := DataDirs(copyDir(t, w.dataDir), "")
		infos, err := storage.ListSnapshots(dirs.Snap)
		if err != nil || len(infos) < 2 {
			t.Fatal(infos, err)
		}
		newest := infos[len(infos)-1]
		flip(t, newest.Path, 40)
		rep, err := Verify(dirs, VerifyOptions{FSM: fsm.Options{ExtendedTypes: true}})
		if err != nil {
			t.Fatal(err)
		}
		if rep.OK() || rep.Problems[0].File != newest.Path || !strings.Contains(rep.Problems[0].Message, "checksum") {
			t.Fatalf("problems %+v", rep.Problems)
		}
		// A server would start from the older snapshot; the replay says so.
		if rep.Replay == nil || rep.Replay.SnapshotIndex != infos[len(infos)-2].Index || rep.Replay.LastZxid != uint64(w.lastZxid) {
			t.Fatalf("replay %+v", rep.Replay)
		}
		if _, err := InspectSnapshot(newest, InspectOptions{ExtendedTypes: true}); !errors.Is(err, storage.ErrCorrupt) {
			t.Fatalf("inspect of a damaged snapshot: %v", err)
		}
	})
}

func testPurgeServerData(t *testing.T, w *written) {
	dir := copyDir(t, w.dataDir)
	dirs := DataDirs(dir, "")
	before, _ := storage.ListSnapshots(dirs.Snap)
	if len(before) <= 3 {
		t.Fatalf("only %d snapshots to start with", len(before))
	}
	// A running server holds the lock: purge refuses and removes nothing.
	s := startServer(t, dir, 10)
	var out bytes.Buffer
	if _, err := Purge(&out, dirs, PurgeOptions{Retain: 3}); !errors.Is(err, storage.ErrLocked) || !strings.Contains(err.Error(), "a server is using") {
		t.Fatalf("purge while a server runs: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The refused purge removed nothing. (The server itself may have taken
	// a snapshot while it ran: its snapshot interval is randomised.)
	now, _ := storage.ListSnapshots(dirs.Snap)
	for _, b := range before {
		if !slices.Contains(now, b) {
			t.Fatalf("snapshot %s went away: before %v, now %v", b.Path, before, now)
		}
	}
	// Dry run: says, removes nothing.
	if _, err := Purge(&out, dirs, PurgeOptions{Retain: 3, DryRun: true}); err != nil {
		t.Fatal(err)
	}
	if n, _ := storage.ListSnapshots(dirs.Snap); len(n) != len(now) || !strings.Contains(out.String(), "would remove snapshot "+now[0].Path) {
		t.Fatalf("dry run removed files or said nothing:\n%s", out.String())
	}
	out.Reset()
	plan, err := Purge(&out, dirs, PurgeOptions{Retain: 3})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := storage.ListSnapshots(dirs.Snap)
	if !slices.Equal(after, now[len(now)-3:]) || len(plan.RemoveSnapshots) != len(now)-3 || !strings.Contains(out.String(), "removed snapshot "+now[0].Path) {
		t.Fatalf("kept %v of %v:\n%s", after, now, out.String())
	}
	// The server restarts on the purged directory with all its data.
	s = startServer(t, dir, 10)
	c := connect(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for path, st := range w.stats {
		if _, ok := w.ephemeral[path]; ok {
			continue // their sessions may have expired by now
		}
		data, got := must2(t, c, ctx, path)
		if got.Mzxid != st.Mzxid || got.Czxid != st.Czxid || !bytes.Equal(data, w.data[path]) {
			t.Errorf("%s after purge and restart: %+v %q, want %+v %q", path, got, data, st, w.data[path])
		}
	}
}
