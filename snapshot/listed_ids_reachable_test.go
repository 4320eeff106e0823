package snapshot_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/snapshot"
)

// TestListSkipsFilesNoLoadReaches: Python's JsonSnapshotStore writes
// snapshot_<id>.json for any id, so a shared directory may hold files for
// ids this store refuses ("a\b", ".", "..", ""). A listing must not show
// them: Load and Delete of such an id answer "not found", so the caller
// would see a snapshot it can neither read nor remove
// (docs/compatibility.md: nothing is listed that no get or delete of that
// id reaches).
func TestListSkipsFilesNoLoadReaches(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := snapshot.NewJSON(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{`a\b`, ".", "..", ""} {
		if runtime.GOOS == "windows" && strings.Contains(id, `\`) {
			continue // a separator there: no such file can exist
		}
		data, err := pyjson.Marshal(map[string]any{"snapshot_id": id, "run_id": "r1", "name": "foreign"}, pyjson.Pretty)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "snapshot_"+id+".json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	list, err := st.List(ctx, snapshot.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if _, err := st.Load(ctx, s.SnapshotID); err != nil {
			t.Errorf("List shows snapshot %q, whose Load fails: %v", s.SnapshotID, err)
		}
	}
}
