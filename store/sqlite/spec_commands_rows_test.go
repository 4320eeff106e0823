package sqlite_test

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// TestSpecCommandAndCursorRows pins spec §4.4/§4.5 for the SQLite
// command store: a command is a commands row (seq, command_id, run_id,
// type, payload_json, ts, client_id) whose seq is the AUTOINCREMENT rowid,
// and the cursor store of consumer "gateway_runner" upserts
// command_cursors(consumer_id, cursor, updated_at).
func TestSpecCommandAndCursorRows(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "runtime.sqlite3")
	s, err := sqlite.New(ctx, sqlite.Config{Path: path, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*durable.CommandRecord{
		{CommandID: "c1", RunID: "r1", Type: "pause", Payload: map[string]any{"reason": "é"}, ClientID: "web"},
		{CommandID: "c2", RunID: "r1", Type: "resume", Payload: map[string]any{}},
	} {
		if res, err := s.CommandAppend(ctx, c); err != nil || !res.Accepted {
			t.Fatalf("CommandAppend(%s) = %+v, %v", c.CommandID, res, err)
		}
	}
	if err := s.CursorSave(ctx, store.DefaultConsumer, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.CursorSave(ctx, store.DefaultConsumer, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	db := rawDB(t, path)
	defer db.Close()
	rows, err := db.Query(`SELECT seq, command_id, run_id, type, payload_json, ts, client_id FROM commands ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type row struct {
		seq                       int64
		id, run, typ, payload, ts string
		client                    sql.NullString
	}
	var got []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.seq, &r.id, &r.run, &r.typ, &r.payload, &r.ts, &r.client); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].seq != 1 || got[1].seq != 2 || got[0].id != "c1" || got[1].id != "c2" ||
		got[0].run != "r1" || got[0].typ != "pause" || got[1].typ != "resume" ||
		got[0].client != (sql.NullString{String: "web", Valid: true}) || got[1].client.Valid {
		t.Fatalf("commands rows = %+v", got)
	}
	var payload map[string]any
	if err := json.Unmarshal([]byte(got[0].payload), &payload); err != nil || payload["reason"] != "é" {
		t.Errorf("payload_json %q (%v); want the payload object", got[0].payload, err)
	}
	for _, r := range got {
		if _, err := durable.ParseTime(r.ts); err != nil {
			t.Errorf("ts %q of %s is not an ISO time: %v", r.ts, r.id, err)
		}
	}
	var seqName string
	var seqVal int64
	if err := db.QueryRow(`SELECT name, seq FROM sqlite_sequence WHERE name = 'commands'`).Scan(&seqName, &seqVal); err != nil || seqVal != 2 {
		t.Errorf("sqlite_sequence of commands = %d, %v; want 2 (AUTOINCREMENT)", seqVal, err)
	}

	var n int
	var cursor int64
	var updated string
	if err := db.QueryRow(`SELECT COUNT(*), MAX(cursor), MAX(updated_at) FROM command_cursors WHERE consumer_id = 'gateway_runner'`).
		Scan(&n, &cursor, &updated); err != nil {
		t.Fatal(err)
	}
	if n != 1 || cursor != 2 {
		t.Errorf("command_cursors rows of gateway_runner: %d, cursor %d; want one row, cursor 2", n, cursor)
	}
	if _, err := durable.ParseTime(updated); err != nil {
		t.Errorf("command_cursors.updated_at %q is not an ISO time: %v", updated, err)
	}
}
