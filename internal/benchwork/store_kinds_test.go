package benchwork

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestStoreKindDurability: Fsync reports json_fsync and sqlite_full as
// syncing every commit (the JSON line's "fsync"), and the stores opened
// for them do sync: json is the Python-like store without fsync, json_fsync
// the default synced one, sqlite_full SQLite with synchronous=FULL (the
// README's "durable steps/s" comparison).
func TestStoreKindDurability(t *testing.T) {
	want := map[string]bool{StoreMemory: false, StoreJSON: false, StoreJSONFsync: true, StoreSQLite: false,
		StoreSQLiteFull: true, StoreSQLiteShared: false, StorePostgres: false}
	for _, k := range StoreKinds {
		if Fsync(k) != want[k] {
			t.Errorf("Fsync(%q) = %v, want %v", k, Fsync(k), want[k])
		}
	}
	ctx := context.Background()
	// The JSON-file store keeps its Config.NoSync in the unexported field
	// noSync; read it, as nothing else shows whether it fsyncs.
	for kind, noSync := range map[string]bool{StoreJSON: true, StoreJSONFsync: false} {
		st, err := OpenStore(ctx, kind, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		f := reflect.ValueOf(st).Elem().FieldByName("noSync")
		_ = st.Close()
		if !f.IsValid() {
			t.Fatalf("%s: the JSON-file store has no noSync field any more; update this test", kind)
		}
		if f.Bool() != noSync {
			t.Errorf("%s store opened with NoSync %v, want %v", kind, f.Bool(), noSync)
		}
	}
	// A synchronous=FULL SQLite store preallocates its redo log (see
	// redoPreallocated in store/sqlite): the visible sign of FULL.
	redoSize := func(kind string) int64 {
		dir := t.TempDir()
		st, err := OpenStore(ctx, kind, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		fi, err := os.Stat(filepath.Join(dir, "runtime.sqlite3-redo"))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	if full, normal := redoSize(StoreSQLiteFull), redoSize(StoreSQLite); full < 1<<20 || normal >= 1<<20 {
		t.Errorf("redo log sizes: sqlite_full %d B (want >= 1 MiB, preallocated by synchronous=FULL), sqlite %d B", full, normal)
	}
}
