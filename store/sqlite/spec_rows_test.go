package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// TestSpecRunsColumnsAndWaitIndexRow pins spec §4.4's runs.save: status is
// the enum string, wait_reason the waiting reason or NULL, wait_until the
// until only for `until` waits (else NULL), and a waiting/until run has
// the wait_index row (run_id, next_due_iso=until,
// updated_at_iso=run.updated_at, status='waiting_until'), which a later
// save that ends the wait, or a delete, removes; the database is in WAL
// mode.
func TestSpecRunsColumnsAndWaitIndexRow(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s, err := sqlite.New(ctx, sqlite.Config{Path: path, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	until := durable.NewTime(t0.Add(time.Hour))
	upd := durable.NewTime(t0.Add(time.Minute))
	mk := func(id string, w *durable.WaitState) *durable.RunState {
		r := testRun(id)
		r.Status, r.Waiting, r.UpdatedAt = durable.RunWaiting, w, upd
		return r
	}
	runs := []*durable.RunState{
		mk("u", &durable.WaitState{Reason: durable.WaitUntil, Until: until, ResumeToNode: "n"}),
		mk("e", &durable.WaitState{Reason: durable.WaitEvent, WaitKey: "evt:k", Until: until, ResumeToNode: "n"}),
		mk("h", &durable.WaitState{Reason: durable.WaitUser, WaitKey: "user:h", ResumeToNode: "n"}),
		mk("gone", &durable.WaitState{Reason: durable.WaitUntil, Until: until, ResumeToNode: "n"}),
		mk("ends", &durable.WaitState{Reason: durable.WaitUntil, Until: until, ResumeToNode: "n"}),
	}
	for _, r := range runs {
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	ends := runs[4]
	ends.Status, ends.Waiting = durable.RunCompleted, nil
	if err := s.RunCommit(ctx, &store.CommitParams{Run: ends}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.RunDelete(ctx, "gone"); err != nil || !ok {
		t.Fatalf("RunDelete = %v, %v", ok, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	db := rawDB(t, path)
	defer db.Close()
	type cols struct{ status, reason, until sql.NullString }
	want := map[string]cols{
		"u":    {sql.NullString{String: "waiting", Valid: true}, sql.NullString{String: "until", Valid: true}, sql.NullString{String: until.String(), Valid: true}},
		"e":    {sql.NullString{String: "waiting", Valid: true}, sql.NullString{String: "event", Valid: true}, sql.NullString{}},
		"h":    {sql.NullString{String: "waiting", Valid: true}, sql.NullString{String: "user", Valid: true}, sql.NullString{}},
		"ends": {sql.NullString{String: "completed", Valid: true}, sql.NullString{}, sql.NullString{}},
	}
	for id, w := range want {
		var got cols
		if err := db.QueryRow(`SELECT status, wait_reason, wait_until FROM runs WHERE run_id = ?`, id).
			Scan(&got.status, &got.reason, &got.until); err != nil {
			t.Fatalf("runs row %s: %v", id, err)
		}
		if got != w {
			t.Errorf("runs row %s: (status, wait_reason, wait_until) = %v, want %v", id, got, w)
		}
	}
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM runs WHERE run_id = 'gone'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("runs rows of a deleted run: %d, %v", n, err)
	}
	var next, updated, status string
	if err := db.QueryRow(`SELECT next_due_iso, updated_at_iso, status FROM wait_index WHERE run_id = 'u'`).
		Scan(&next, &updated, &status); err != nil {
		t.Fatalf("wait_index row of the until run: %v", err)
	}
	if next != until.String() || updated != upd.String() || status != "waiting_until" {
		t.Errorf("wait_index row of the until run = (%s, %s, %s); want (%s, %s, waiting_until)", next, updated, status, until, upd)
	}
	for _, id := range []string{"h", "gone", "ends"} {
		if err := db.QueryRow(`SELECT COUNT(*) FROM wait_index WHERE run_id = ?`, id).Scan(&n); err != nil || n != 0 {
			t.Errorf("wait_index rows of run %s: %d, %v; want none", id, n, err)
		}
	}
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
}

// TestSpecIndexToleratesNoneWaitUntil pins spec §4.1: a run index row
// read with wait_until stored as the string "None" (the Python in-memory
// and JSON stores' quirk) is read as no deadline, not an error.
func TestSpecIndexToleratesNoneWaitUntil(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s := openShared(t, path)
	r := testRun("r")
	r.Status, r.Waiting = durable.RunWaiting, &durable.WaitState{Reason: durable.WaitUser, WaitKey: "user:r", ResumeToNode: "n"}
	if err := s.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
		t.Fatal(err)
	}
	db := rawDB(t, path)
	defer db.Close()
	if _, err := db.Exec(`UPDATE runs SET wait_until = 'None' WHERE run_id = 'r'`); err != nil {
		t.Fatal(err)
	}
	rows, err := s.RunIndex(ctx, &store.RunIndexParams{})
	if err != nil || len(rows) != 1 {
		t.Fatalf("RunIndex = %+v, %v", rows, err)
	}
	if rows[0].RunID != "r" || rows[0].WaitReason != durable.WaitUser || !rows[0].WaitUntil.IsZero() {
		t.Errorf("row = %+v; want run r, reason user, no until", rows[0])
	}
}
