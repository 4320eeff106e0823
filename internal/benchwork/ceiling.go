package benchwork

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// Ceiling names: what the disk and SQLite allow one writer, measured in
// the data directory's file system.
const (
	// CeilingSQLiteFull is 1-row INSERT transactions per second in WAL
	// mode with synchronous=FULL (an fsync per commit).
	CeilingSQLiteFull = "sqlite_wal_full"
	// CeilingSQLiteNormal is the same with synchronous=NORMAL.
	CeilingSQLiteNormal = "sqlite_wal_normal"
	// CeilingSQLiteOff is the same with synchronous=OFF.
	CeilingSQLiteOff = "sqlite_wal_off"
	// CeilingSQLiteFullExclusive is CeilingSQLiteFull on a connection in
	// locking_mode=EXCLUSIVE, as the SQLite store opens its file: the
	// limit its commits are compared with. (The three above are the
	// Python peer's ceilings, on a shared connection.)
	CeilingSQLiteFullExclusive = "sqlite_wal_full_exclusive"
	// CeilingSQLiteNormalExclusive is the same with synchronous=NORMAL.
	CeilingSQLiteNormalExclusive = "sqlite_wal_normal_exclusive"
	// CeilingFsyncAppend is 200-byte O_APPEND writes each followed by
	// fsync, per second.
	CeilingFsyncAppend = "fsync_append"
	// CeilingFdatasyncAppend is the same with fdatasync.
	CeilingFdatasyncAppend = "fdatasync_append"
	// CeilingFdatasyncInplace is the same 200 bytes rewritten at offset 0
	// of a file that already holds them, each followed by fdatasync: the
	// size never changes, so the sync writes data only. This is what a
	// FULL commit of the SQLite store costs (a redo-log record written
	// into blocks zeroed when the log was created, then fdatasynced:
	// store/sqlite/redo.go).
	CeilingFdatasyncInplace = "fdatasync_inplace"
	// CeilingFileCreate is new 1 KB files per second: create, write,
	// close and rename into place, without fsync (how a JSON store,
	// Python's included, writes a run's first file).
	CeilingFileCreate = "file_create"
	// CeilingPageTouch is fresh anonymous 4 KB pages touched per second:
	// what a process pays the first time it uses memory (a minor page
	// fault each), so page_faults_per_run ÷ this is the time a run spends
	// in those faults. Unix only.
	CeilingPageTouch = "page_first_touch"
)

// Ceilings lists the ceiling measurements in the order they are taken.
// Only the ones this platform can measure are listed (platformCeilings).
var Ceilings = append([]string{CeilingSQLiteFull, CeilingSQLiteNormal, CeilingSQLiteOff,
	CeilingSQLiteFullExclusive, CeilingSQLiteNormalExclusive, CeilingFsyncAppend, CeilingFdatasyncAppend,
	CeilingFdatasyncInplace, CeilingFileCreate}, platformCeilings...)

// ceilingPayload is the 200 bytes each ceiling operation writes.
var ceilingPayload = func() []byte {
	b := make([]byte, 199)
	for i := range b {
		b[i] = 'x'
	}
	return append(b, '\n')
}()

// MeasureCeiling runs one ceiling test for about d in a fresh
// subdirectory of dir (removed afterwards) and returns operations per
// second. A ceiling the platform cannot measure (one not in Ceilings) is
// an error wrapping errors.ErrUnsupported.
func MeasureCeiling(ctx context.Context, name, dir string, d time.Duration) (_ float64, err error) {
	tmp, err := os.MkdirTemp(dir, "ceiling-"+name+"-")
	if err != nil {
		return 0, fmt.Errorf("ceiling %s: %w", name, err)
	}
	defer func() { err = errors.Join(err, os.RemoveAll(tmp)) }()
	var ops int
	var elapsed time.Duration
	switch name {
	case CeilingSQLiteFull:
		ops, elapsed, err = sqliteCeiling(ctx, tmp, "FULL", false, d)
	case CeilingSQLiteNormal:
		ops, elapsed, err = sqliteCeiling(ctx, tmp, "NORMAL", false, d)
	case CeilingSQLiteOff:
		ops, elapsed, err = sqliteCeiling(ctx, tmp, "OFF", false, d)
	case CeilingSQLiteFullExclusive:
		ops, elapsed, err = sqliteCeiling(ctx, tmp, "FULL", true, d)
	case CeilingSQLiteNormalExclusive:
		ops, elapsed, err = sqliteCeiling(ctx, tmp, "NORMAL", true, d)
	case CeilingFsyncAppend:
		ops, elapsed, err = syncCeiling(ctx, tmp, false, (*os.File).Sync, d)
	case CeilingFdatasyncAppend:
		ops, elapsed, err = syncCeiling(ctx, tmp, false, fdatasync, d)
	case CeilingFdatasyncInplace:
		ops, elapsed, err = syncCeiling(ctx, tmp, true, fdatasync, d)
	case CeilingFileCreate:
		ops, elapsed, err = fileCreateCeiling(ctx, tmp, d)
	case CeilingPageTouch:
		ops, elapsed, err = pageTouchCeiling(ctx, d)
	default:
		return 0, fmt.Errorf("unknown ceiling %q", name)
	}
	if err != nil {
		return 0, fmt.Errorf("ceiling %s: %w", name, err)
	}
	return round(float64(ops)/elapsed.Seconds(), 1), nil
}

// sqliteCeiling commits one 1-row INSERT per transaction (BEGIN
// IMMEDIATE, INSERT, COMMIT through prepared statements on one
// connection, as the store writes) with modernc SQLite in WAL mode,
// optionally with the connection holding the file exclusively.
func sqliteCeiling(ctx context.Context, dir, sync string, exclusive bool, d time.Duration) (int, time.Duration, error) {
	db, err := sql.Open("sqlite", filepath.Join(dir, "ceiling.sqlite3"))
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	setup := []string{
		"PRAGMA journal_mode=WAL",
		"PRAGMA synchronous=" + sync,
		"CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB NOT NULL)",
	}
	if exclusive {
		setup = append([]string{"PRAGMA locking_mode=EXCLUSIVE"}, setup...)
	}
	for _, q := range setup {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return 0, 0, fmt.Errorf("%s: %w", q, err)
		}
	}
	var stmts [3]*sql.Stmt
	for i, q := range []string{"BEGIN IMMEDIATE", "INSERT INTO t (v) VALUES (?)", "COMMIT"} {
		if stmts[i], err = conn.PrepareContext(ctx, q); err != nil {
			return 0, 0, fmt.Errorf("%s: %w", q, err)
		}
		defer stmts[i].Close()
	}
	n := 0
	start := time.Now()
	deadline := start.Add(d)
	for {
		if _, err := stmts[0].ExecContext(ctx); err != nil {
			return 0, 0, fmt.Errorf("begin: %w", err)
		}
		if _, err := stmts[1].ExecContext(ctx, ceilingPayload); err != nil {
			return 0, 0, fmt.Errorf("insert: %w", err)
		}
		if _, err := stmts[2].ExecContext(ctx); err != nil {
			return 0, 0, fmt.Errorf("commit: %w", err)
		}
		n++
		if now := time.Now(); !now.Before(deadline) || ctx.Err() != nil {
			return n, now.Sub(start), ctx.Err()
		}
	}
}

// syncCeiling writes 200 bytes and syncs after each write: appended with
// O_APPEND (the file grows), or, inplace, with pwrite at offset 0 of a
// file that was given those bytes (and synced) before the clock starts,
// so that no timed write changes its size.
func syncCeiling(ctx context.Context, dir string, inplace bool, sync func(*os.File) error, d time.Duration) (_ int, _ time.Duration, err error) {
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if inplace {
		flags = os.O_WRONLY | os.O_CREATE
	}
	f, err := os.OpenFile(filepath.Join(dir, "sync.log"), flags, 0o644)
	if err != nil {
		return 0, 0, err
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	write := f.Write
	if inplace {
		write = func(p []byte) (int, error) { return f.WriteAt(p, 0) }
		if _, err := write(ceilingPayload); err != nil {
			return 0, 0, err
		}
		if err := f.Sync(); err != nil {
			return 0, 0, err
		}
	}
	n := 0
	start := time.Now()
	deadline := start.Add(d)
	for {
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		if _, err := write(ceilingPayload); err != nil {
			return 0, 0, err
		}
		if err := sync(f); err != nil {
			return 0, 0, err
		}
		n++
		if now := time.Now(); !now.Before(deadline) {
			return n, now.Sub(start), nil
		}
	}
}

// fileCreateCeiling creates new files of about a run file's size (a
// temporary name, then a rename to the final one), without fsync.
func fileCreateCeiling(ctx context.Context, dir string, d time.Duration) (int, time.Duration, error) {
	payload := bytes.Repeat(ceilingPayload, 6) // 1,200 bytes
	n := 0
	start := time.Now()
	deadline := start.Add(d)
	for {
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		tmp := filepath.Join(dir, fmt.Sprintf("f%d.tmp", n))
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return 0, 0, err
		}
		_, err = f.Write(payload)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return 0, 0, err
		}
		if err := os.Rename(tmp, filepath.Join(dir, fmt.Sprintf("f%d.json", n))); err != nil {
			return 0, 0, err
		}
		n++
		if now := time.Now(); !now.Before(deadline) {
			return n, now.Sub(start), nil
		}
	}
}
