package storage_test

import (
	"bufio"
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"go.etcd.io/raft/v3/raftpb"

	"github.com/paddockhq/paddock/internal/storage"
)

// walCrashDirEnv tells the test binary, re-executed as a child, to run
// TestWALCrashChild in that directory.
const walCrashDirEnv = "PADDOCK_WAL_CRASH_CHILD_DIR"

// walCrashSegment is the segment size of the crash test: small, so that the
// child rolls into a fresh spare every few dozen saves.
const walCrashSegment = 64 << 10

// crashEntryData is entry i's payload in the crash test.
func crashEntryData(i uint64) []byte {
	return bytes.Repeat([]byte{byte(i), byte(i >> 8)}, 300+int(i%7)*100)
}

// TestWALCrashChild is the child process of TestWALKilledWhileRolling: it
// appends entries to the WAL in its directory, picking up after what is
// there, and prints "ack <index>" once each Save has returned, until it is
// killed.
func TestWALCrashChild(t *testing.T) {
	dir := os.Getenv(walCrashDirEnv)
	if dir == "" {
		t.Skip("helper process of TestWALKilledWhileRolling")
	}
	w, err := storage.OpenWAL(dir, storage.WALOptions{SegmentBytes: walCrashSegment, PreallocateAfter: 1,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		t.Fatal(err)
	}
	next := w.LastIndex() + 1
	for range 1_000_000 {
		e := raftpb.Entry{Index: next, Term: 1, Data: crashEntryData(next)}
		if err := w.Save(raftpb.HardState{Term: 1, Vote: 1, Commit: next}, []raftpb.Entry{e}); err != nil {
			t.Fatal(err)
		}
		if _, err := fmt.Fprintf(os.Stdout, "ack %d\n", next); err != nil {
			t.Fatal(err)
		}
		next++
	}
}

// TestWALKilledWhileRolling kills, with SIGKILL, a process appending to a
// WAL of small preallocated segments (so that it is often in the middle of
// a roll: the new segment written and synced under the spare's name, its
// rename not yet done), eight times in a row on the same directory, and
// checks after each kill that every entry acknowledged is there, once, in
// order, with its payload.
func TestWALKilledWhileRolling(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	var acked uint64
	adopted := 0
	for round, kill := range []int{150, 233, 90, 377, 61, 144, 271, 199} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWALCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), walCrashDirEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		n, killed := 0, false
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			s, ok := strings.CutPrefix(sc.Text(), "ack ")
			if !ok {
				continue
			}
			i, err := strconv.ParseUint(s, 10, 64)
			if err != nil || i != acked+1 {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("round %d: child acknowledged %q after %d", round, s, acked)
			}
			acked = i
			if n++; n == kill && !killed {
				if err := cmd.Process.Kill(); err != nil { // SIGKILL to the child's pid
					t.Fatal(err)
				}
				killed = true
			}
		}
		werr := cmd.Wait()
		if !killed {
			t.Fatalf("round %d: child exited (%v) after %d acks; its log:\n%s", round, werr, n, stderr.String())
		}

		var logs bytes.Buffer
		w, err := storage.OpenWAL(dir, storage.WALOptions{SegmentBytes: walCrashSegment, PreallocateAfter: -1,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatalf("round %d: reopening after the kill: %v", round, err)
		}
		_, es, _, err := w.ReadAll(0)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if uint64(len(es)) < acked {
			t.Fatalf("round %d: %d entries after the kill, %d were acknowledged", round, len(es), acked)
		}
		for k, e := range es {
			if e.Index != uint64(k+1) || !bytes.Equal(e.Data, crashEntryData(e.Index)) {
				t.Fatalf("round %d: entry %d is index %d with %d bytes", round, k+1, e.Index, len(e.Data))
			}
		}
		acked = uint64(len(es)) // an entry written but not acknowledged may survive
		if strings.Contains(logs.String(), "adopted a WAL segment") {
			adopted++
		}
	}
	t.Logf("%d entries after 8 kills; %d of the restarts adopted a segment whose rename had not reached the disk", acked, adopted)
}
