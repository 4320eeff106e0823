package snapshot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestJSONSaveAndDeleteSyncTheDirectory: Save and Delete make the
// directory entry durable once the file is in place (or gone), so a saved
// or deleted snapshot survives a power loss, and a failed sync is an error
// that says the change is in place.
func TestJSONSaveAndDeleteSyncTheDirectory(t *testing.T) {
	dir := t.TempDir()
	j, err := NewJSON(dir)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string // the snapshot files present at each sync
	var failWith error
	j.syncDir = func(d string) error {
		if d != dir {
			t.Errorf("synced %s; want the store's dir %s", d, dir)
		}
		names, _ := filepath.Glob(filepath.Join(d, "snapshot_*.json"))
		for i, n := range names {
			names[i] = filepath.Base(n)
		}
		seen = append(seen, strings.Join(names, ","))
		return failWith
	}
	ctx := context.Background()
	if err := j.Save(ctx, &durable.Snapshot{SnapshotID: "s1", Name: "one"}); err != nil {
		t.Fatal(err)
	}
	if ok, err := j.Delete(ctx, "s1"); !ok || err != nil {
		t.Fatalf("Delete = %v, %v; want true, nil", ok, err)
	}
	if want := []string{"snapshot_s1.json", ""}; !slices.Equal(seen, want) {
		t.Fatalf("syncs saw %q; want %q (after the rename, after the remove)", seen, want)
	}

	failWith = errors.New("disk gone")
	err = j.Save(ctx, &durable.Snapshot{SnapshotID: "s2"})
	if err == nil || !strings.Contains(err.Error(), "disk gone") || !strings.Contains(err.Error(), "in place") {
		t.Fatalf("Save with a failing dir sync = %v; want an error saying the file is in place and why the sync failed", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "snapshot_s2.json")); err != nil {
		t.Fatalf("the snapshot is not in place: %v", err)
	}
	ok, err := j.Delete(ctx, "s2")
	if !ok || err == nil || !strings.Contains(err.Error(), "disk gone") {
		t.Fatalf("Delete with a failing dir sync = %v, %v; want true and the sync's error", ok, err)
	}
}
