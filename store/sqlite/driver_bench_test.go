package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The driver benchmarks measure raw SQLite commit cost through
// database/sql, independent of this package's schema, to choose between
// modernc.org/sqlite (pure Go, registered as "sqlite") and
// github.com/mattn/go-sqlite3 (cgo, registered as "sqlite3"; compiled in
// only with -tags sqlitecgo, see driver_cgo_bench_test.go).
//
//	go test -run '^$' -bench BenchmarkDriver ./store/sqlite/
//	CGO_ENABLED=1 go test -tags sqlitecgo -run '^$' -bench BenchmarkDriver ./store/sqlite/

// benchDriver names a registered database/sql driver to compare.
type benchDriver struct {
	name   string // label in benchmark names
	driver string // database/sql driver name
}

// benchDrivers lists the drivers compiled into this test binary.
var benchDrivers = []benchDriver{{name: "modernc", driver: "sqlite"}}

// openBenchDB opens path with one connection and the runtime's pragmas.
func openBenchDB(b *testing.B, driver, path, sync string) *sql.DB {
	b.Helper()
	db, err := sql.Open(driver, path)
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	b.Cleanup(func() { _ = db.Close() })
	for _, p := range []string{"PRAGMA journal_mode=WAL", "PRAGMA synchronous=" + sync,
		"PRAGMA foreign_keys=ON", "PRAGMA busy_timeout=5000"} {
		if _, err := db.Exec(p); err != nil {
			b.Fatalf("%s: %v", p, err)
		}
	}
	return db
}

// BenchmarkDriver compares the drivers on (a) one single-row INSERT per
// transaction and (b) a realistic run commit: a 1 KB run_json upsert and
// two ledger inserts in one transaction, with prepared statements on one
// pinned connection.
func BenchmarkDriver(b *testing.B) {
	for _, d := range benchDrivers {
		for _, sync := range []string{"NORMAL", "FULL"} {
			b.Run(fmt.Sprintf("%s/insert/%s", d.name, sync), func(b *testing.B) {
				benchInsert(b, d.driver, sync)
			})
			b.Run(fmt.Sprintf("%s/runcommit/%s", d.name, sync), func(b *testing.B) {
				benchRunCommit(b, d.driver, sync)
			})
		}
	}
}

func benchInsert(b *testing.B, driver, sync string) {
	db := openBenchDB(b, driver, filepath.Join(b.TempDir(), "bench.sqlite3"), sync)
	if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)"); err != nil {
		b.Fatal(err)
	}
	ins, err := db.Prepare("INSERT INTO t (v) VALUES (?)")
	if err != nil {
		b.Fatal(err)
	}
	defer ins.Close()
	payload := strings.Repeat("x", 200)
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		if _, err := ins.Exec(payload); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "txn/s")
}

func benchRunCommit(b *testing.B, driver, sync string) {
	ctx := context.Background()
	db := openBenchDB(b, driver, filepath.Join(b.TempDir(), "bench.sqlite3"), sync)
	for _, q := range []string{
		`CREATE TABLE runs (run_id TEXT PRIMARY KEY, workflow_id TEXT NOT NULL, status TEXT NOT NULL,
			updated_at TEXT, run_json TEXT NOT NULL, version INTEGER NOT NULL DEFAULT 0)`,
		`CREATE TABLE ledger (run_id TEXT NOT NULL, seq INTEGER NOT NULL, record_json TEXT NOT NULL,
			PRIMARY KEY (run_id, seq))`,
	} {
		if _, err := db.Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	prep := func(q string) *sql.Stmt {
		s, err := conn.PrepareContext(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = s.Close() })
		return s
	}
	begin := prep("BEGIN IMMEDIATE")
	commit := prep("COMMIT")
	upsert := prep(`INSERT INTO runs (run_id, workflow_id, status, updated_at, run_json, version)
		VALUES (?, 'wf', 'running', ?, ?, 1)
		ON CONFLICT(run_id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at,
		run_json = excluded.run_json, version = runs.version + 1`)
	ledger := prep("INSERT INTO ledger (run_id, seq, record_json) VALUES (?, ?, ?)")
	runJSON := strings.Repeat("r", 1024)
	recJSON := strings.Repeat("l", 512)
	b.ReportAllocs()
	start := time.Now()
	var seq int64
	for i := 0; b.Loop(); i++ {
		runID := fmt.Sprintf("run-%d", i%100)
		if _, err := begin.Exec(); err != nil {
			b.Fatal(err)
		}
		if _, err := upsert.Exec(runID, time.Now().UTC().Format(time.RFC3339Nano), runJSON); err != nil {
			b.Fatal(err)
		}
		for range 2 {
			seq++
			if _, err := ledger.Exec(runID, seq, recJSON); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := commit.Exec(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "txn/s")
}
