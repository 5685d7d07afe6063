package datatool

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/paddockhq/paddock/internal/fsm"
	"github.com/paddockhq/paddock/internal/proto"
	"github.com/paddockhq/paddock/internal/storage"
)

// TestWALDumpEnforceQuota: a write proposed with enforceQuota is marked in
// the text dump and the JSON one; a write without it is not.
func TestWALDumpEnforceQuota(t *testing.T) {
	for _, flags := range []uint64{fsm.EntryFlagEnforceQuota, 0} {
		e := &fsm.Entry{Type: fsm.EntryTxn, Session: 7, Time: 1, Flags: flags,
			Ops: []fsm.Op{{Op: proto.OpSetData, Path: "/q/a", Data: []byte("x"), Version: -1}}}
		we := storage.WALEntry{Index: 9, Term: 2, Type: storage.EntryNormal, Data: e.Encode(nil)}
		var b strings.Builder
		writeEntryText(&b, &we)
		line, err := json.Marshal(recordJSON(&storage.WALRecord{Kind: storage.RecordEntry, Entry: we}))
		if err != nil {
			t.Fatal(err)
		}
		want := flags != 0
		if got := strings.Contains(b.String(), " enforceQuota"); got != want {
			t.Errorf("flags %d: text %q marks enforceQuota: %v, want %v", flags, b.String(), got, want)
		}
		if got := strings.Contains(string(line), `"enforceQuota":true`); got != want {
			t.Errorf("flags %d: JSON %s marks enforceQuota: %v, want %v", flags, line, got, want)
		}
	}
}
