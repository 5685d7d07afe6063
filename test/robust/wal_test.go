package robust_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/zktest"
)

// The WAL layout, from internal/storage's package documentation:
// <dataLogDir>/wal/<seq>-<firstIndex>.wal, a 36-byte segment header, then
// records of length (4), CRC-32C (4), type (1) and payload.
const (
	walSegmentHeader = 36
	walRecordHeader  = 9
	walRecordEntry   = 1
)

// walRecord is one record of a WAL segment, as the test reads it.
type walRecord struct {
	off     int64
	typ     byte
	payload []byte
}

// end returns the offset just past the record.
func (r walRecord) end() int64 { return r.off + walRecordHeader + int64(len(r.payload)) }

// lastSegment returns the newest WAL segment under dataDir.
func lastSegment(t *testing.T, dataDir string) string {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dataDir, "wal", "*.wal"))
	if err != nil || len(segs) == 0 {
		t.Fatalf("no WAL segment in %s/wal (err %v)", dataDir, err)
	}
	slices.Sort(segs) // fixed-width hex names: lexical order is sequence order
	return segs[len(segs)-1]
}

// readRecords splits a segment into records; it fails t on anything it
// cannot parse, since the files are undamaged when it runs.
func readRecords(t *testing.T, path string) []walRecord {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var recs []walRecord
	off := int64(walSegmentHeader)
	for off < int64(len(data)) {
		if int64(len(data))-off < walRecordHeader {
			t.Fatalf("%s: %d stray bytes at offset %d", path, int64(len(data))-off, off)
		}
		n := int64(binary.BigEndian.Uint32(data[off:]))
		if off+walRecordHeader+n > int64(len(data)) {
			t.Fatalf("%s: record at %d of %d bytes runs past the end", path, off, n)
		}
		recs = append(recs, walRecord{off: off, typ: data[off+8], payload: data[off+walRecordHeader : off+walRecordHeader+n]})
		off += walRecordHeader + n
	}
	return recs
}

// entryWith returns the last entry record whose payload holds s.
func entryWith(t *testing.T, recs []walRecord, s string) walRecord {
	t.Helper()
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].typ == walRecordEntry && bytes.Contains(recs[i].payload, []byte(s)) {
			return recs[i]
		}
	}
	t.Fatalf("no WAL entry record mentions %q", s)
	return walRecord{}
}

const walNodes = 40

func walNode(i int) string { return fmt.Sprintf("/wal/n%03d", i) }

// writeWALNodes starts Paddock, creates walNodes nodes in order on one
// session that it leaves open, and stops the server cleanly.
func writeWALNodes(t *testing.T, snapCount int) *zktest.Process {
	t.Helper()
	p := startPaddock(t, 2000, fmt.Sprintf("snapCount=%d", snapCount))
	c := newSession(t, p.Addr, 30000)
	c.create("/wal", "", proto.FlagPersistent)
	for i := range walNodes {
		c.create(walNode(i), fmt.Sprintf("d%03d", i), proto.FlagPersistent)
	}
	if err := p.Stop(); err != nil {
		t.Fatal(err)
	}
	if snapCount < walNodes {
		snaps, _ := filepath.Glob(filepath.Join(p.DataDir, "snap", "*.snap"))
		if len(snaps) == 0 {
			t.Fatalf("snapCount=%d and %d writes left no snapshot in %s/snap", snapCount, walNodes, p.DataDir)
		}
	}
	return p
}

// checkWALNodes checks, on a new session, that nodes [0, upTo) exist with
// their data, and reports whether walNode(upTo) exists, when upTo is not
// past the end.
func checkWALNodes(t *testing.T, addr string, upTo int) bool {
	t.Helper()
	c := newSession(t, addr, 10000)
	for i := range upTo {
		var got proto.GetDataResponse
		hdr, err := c.call(proto.OpGetData, &proto.GetDataRequest{Path: walNode(i)}, &got)
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("d%03d", i); hdr.Err != proto.ErrOK || string(got.Data) != want {
			t.Errorf("%s after restart: err %v data %q, want %q", walNode(i), hdr.Err, got.Data, want)
		}
	}
	if upTo >= walNodes {
		return false
	}
	return c.exists(walNode(upTo), false) != nil
}

// truncate cuts path to size bytes.
func truncate(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

// TestWALTornTail damages the end of the last WAL segment as a crash during
// a write can, with and without snapshots, and checks that the server
// starts, logs the cut, keeps every write before the torn record, and goes
// on appending to the repaired log.
func TestWALTornTail(t *testing.T) {
	damages := []struct {
		name string
		// cut returns the size to truncate the segment to, and the index
		// of the first node that may be lost.
		cut func(t *testing.T, recs []walRecord, size int64) (int64, int)
	}{
		{"last 3 bytes", func(t *testing.T, recs []walRecord, size int64) (int64, int) {
			last := recs[len(recs)-1]
			if last.typ == walRecordEntry && bytes.Contains(last.payload, []byte(walNode(walNodes-1))) {
				return size - 3, walNodes - 1
			}
			return size - 3, walNodes // only a hard state or marker is torn
		}},
		{"middle of the last entry", func(t *testing.T, recs []walRecord, size int64) (int64, int) {
			rec := entryWith(t, recs, walNode(walNodes-1))
			return rec.off + walRecordHeader + int64(len(rec.payload))/2, walNodes - 1
		}},
		{"inside the last entry's header", func(t *testing.T, recs []walRecord, size int64) (int64, int) {
			rec := entryWith(t, recs, walNode(walNodes-1))
			return rec.off + 5, walNodes - 1
		}},
	}
	for _, snapCount := range []int{100000, 10} {
		for _, d := range damages {
			t.Run(fmt.Sprintf("snapCount=%d/%s", snapCount, d.name), func(t *testing.T) {
				p := writeWALNodes(t, snapCount)
				seg := lastSegment(t, p.DataDir)
				fi, err := os.Stat(seg)
				if err != nil {
					t.Fatal(err)
				}
				size, mayLose := d.cut(t, readRecords(t, seg), fi.Size())
				truncate(t, seg, size)

				p.Restart(t)
				logLineWith(t, p, "torn", filepath.Base(seg))
				lastThere := checkWALNodes(t, p.Addr, mayLose)
				if mayLose < walNodes {
					t.Logf("cut %s to %d bytes; %s survived: %v", filepath.Base(seg), size, walNode(mayLose), lastThere)
				}
				if snapCount > walNodes && mayLose < walNodes && lastThere {
					t.Errorf("%s is there although its only WAL record was cut", walNode(mayLose))
				}

				// The repaired log takes new writes and replays again.
				c := newSession(t, p.Addr, 10000)
				c.create("/wal/after", "after", proto.FlagPersistent)
				if err := p.Stop(); err != nil {
					t.Fatal(err)
				}
				p.Restart(t)
				if again := checkWALNodes(t, p.Addr, mayLose); again != lastThere {
					t.Errorf("%s present = %v after the first restart, %v after the second", walNode(mayLose), lastThere, again)
				}
				c = newSession(t, p.Addr, 10000)
				if st := c.exists("/wal/after", false); st == nil {
					t.Errorf("/wal/after, written after the repair, is missing after a restart")
				}
			})
		}
	}
}

// TestWALCorruptRecordRefusesStart flips a byte inside an entry record that
// valid records follow, with and without snapshots, and checks that the
// server exits with a failure status and a message naming the segment and
// the damaged record's offset, and that it changed nothing on disk: with
// the byte restored it starts with every write.
func TestWALCorruptRecordRefusesStart(t *testing.T) {
	bin := zktest.BuildPaddock(t)
	for _, snapCount := range []int{100000, 10} {
		t.Run(fmt.Sprintf("snapCount=%d", snapCount), func(t *testing.T) {
			p := writeWALNodes(t, snapCount)
			seg := lastSegment(t, p.DataDir)
			rec := entryWith(t, readRecords(t, seg), walNode(walNodes/2))
			data, err := os.ReadFile(seg)
			if err != nil {
				t.Fatal(err)
			}
			at := rec.off + walRecordHeader + int64(len(rec.payload))/2
			data[at] ^= 0x5a
			if err := os.WriteFile(seg, data, 0o640); err != nil {
				t.Fatal(err)
			}

			out, code := runToExit(t, bin, p.ConfigPath)
			if code == 0 {
				t.Fatalf("paddock started on a WAL with a damaged record at %s:%d; output:\n%s", seg, rec.off, out)
			}
			if !strings.Contains(out, filepath.Base(seg)) || !strings.Contains(out, fmt.Sprintf("offset %d", rec.off)) {
				t.Errorf("exit status %d; the output does not name %s and offset %d:\n%s", code, seg, rec.off, out)
			}

			t.Logf("exit status %d, output:\n%s", code, out)

			data[at] ^= 0x5a
			if err := os.WriteFile(seg, data, 0o640); err != nil {
				t.Fatal(err)
			}
			p.Restart(t)
			checkWALNodes(t, p.Addr, walNodes)
		})
	}
}

// runToExit runs "paddock server --config cfg", expecting it to exit by
// itself, and returns its output and exit status.
func runToExit(t *testing.T, bin, cfg string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "server", "--config", cfg)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("paddock did not exit within 30s on a damaged WAL (killed); output:\n%s", out)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	t.Fatalf("run paddock: %v", err)
	return "", 0
}
