package snapshot_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/snapshot"
)

const hex32 = "0123456789abcdef0123456789abcdef"

// JSONStore.Save writes snapshot_<id>.json through a temp file
// snapshot_<id>.json.<32 hex>.tmp and a rename (atomicfile.Write). A
// process killed between the two leaves the temp behind; opening the store
// must remove such temps once they are old enough to be nobody's write in
// progress (another process may share the directory: no lock is taken),
// as the JSON run store does, or a gateway killed now and then fills its
// snapshot directory with them. Young temps and files of other shapes are
// left alone.
func TestNewJSONRemovesStaleSnapshotTemps(t *testing.T) {
	dir := t.TempDir()
	s, err := snapshot.NewJSON(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(t.Context(), &durable.Snapshot{SnapshotID: "s1", RunID: "r1", Name: "n"}); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	put := func(name string, mtime time.Time) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(`{"snapshot_id": "s`), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := []string{put("snapshot_s1.json."+hex32+".tmp", old), put("snapshot_s2.json."+hex32+".tmp", old)}
	kept := []string{
		put("snapshot_s3.json.fedcba9876543210fedcba9876543210.tmp", time.Now()), // young: maybe a live write
		put("other.json."+hex32+".tmp", old),                                     // not a snapshot's temp
		put("snapshot_.json."+hex32+".tmp", old),                                 // no id: no Save writes it
		put("snapshot_s4.json.0123.tmp", old),                                    // not a 32-hex suffix
	}

	var logs bytes.Buffer
	if _, err := snapshot.NewJSONConfig(snapshot.JSONConfig{Dir: dir, Logger: slog.New(slog.NewTextHandler(&logs, nil))}); err != nil {
		t.Fatal(err)
	}
	for _, p := range stale {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("stale temp %s still there after open (err %v)", filepath.Base(p), err)
		}
		if !strings.Contains(logs.String(), p) {
			t.Errorf("the removal of %s is not logged with its path; logs:\n%s", p, logs.String())
		}
	}
	for _, p := range kept {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s removed at open: %v", filepath.Base(p), err)
		}
	}
	if _, err := s.Load(t.Context(), "s1"); err != nil {
		t.Fatalf("the saved snapshot is gone: %v", err)
	}
}
