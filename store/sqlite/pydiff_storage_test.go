package sqlite_test

// Differential tests (from a review that called both implementations directly): the SQLite command inbox against
// Python's SqliteCommandStore (abstractruntime 0.4.28), called directly
// with the same inputs. Expected values are what the Python calls
// returned (see the comment on each).

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

func zzOpen(t *testing.T) *sqlite.Store {
	t.Helper()
	s, err := sqlite.New(t.Context(), sqlite.Config{Path: filepath.Join(t.TempDir(), "db.sqlite")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func zzTS(t *testing.T) durable.Time {
	t.Helper()
	v, err := durable.ParseTime("2024-01-01T00:00:00+00:00")
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Python SqliteCommandStore.append strips command_id and run_id:
// appending (command_id " c1 ", run_id " r1 ") then ("c1", "r1") gave
// seq=1 then duplicate=True seq=1, and list_after(after=0) showed
// ('c1', 'r1', 1).
func TestDiffStoreCommandIDsAreTrimmed(t *testing.T) {
	ctx := context.Background()
	s := zzOpen(t)
	if _, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: " c1 ", RunID: " r1 ", Type: "pause", TS: zzTS(t)}); err != nil {
		t.Fatal(err)
	}
	res, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause", TS: zzTS(t)})
	if err != nil {
		t.Fatal(err)
	}
	// Python: SqliteCommandStore.append(command_id="c1") -> accepted=False, duplicate=True, seq=1
	if !res.Duplicate || res.Seq != 1 {
		t.Errorf("append \"c1\" after \" c1 \": got %+v, Python gives duplicate=True seq=1", res)
	}
	cmds, _, err := s.CommandListAfter(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Python: list_after(after=0) -> [('c1', 'r1', 1), ...]
	if len(cmds) == 0 || cmds[0].CommandID != "c1" || cmds[0].RunID != "r1" {
		t.Errorf("stored command: got (%q, %q), Python stores ('c1', 'r1')", cmds[0].CommandID, cmds[0].RunID)
	}
}
