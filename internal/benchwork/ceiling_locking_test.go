package benchwork

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestExclusiveCeilingsHoldTheFileExclusively: the *_exclusive SQLite
// ceilings are the ones go_vs_ceiling divides by because they open the
// file as the SQLite store does, in locking_mode=EXCLUSIVE; the others
// are the peer's, on a shared connection. In WAL mode an exclusive
// connection keeps its wal-index in heap memory, so no -shm file appears
// beside the database while it runs; a shared one has it. Measuring an
// _exclusive ceiling on a shared connection would compare the store with
// the wrong limit.
func TestExclusiveCeilingsHoldTheFileExclusively(t *testing.T) {
	if testing.Short() {
		t.Skip("measures SQLite ceilings")
	}
	for _, tc := range []struct {
		name    string
		wantShm bool
	}{
		{CeilingSQLiteNormalExclusive, false},
		{CeilingSQLiteFullExclusive, false},
		{CeilingSQLiteNormal, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			done := make(chan error, 1)
			go func() {
				_, err := MeasureCeiling(context.Background(), tc.name, dir, 400*time.Millisecond)
				done <- err
			}()
			sawDB, sawShm := false, false
		poll:
			for {
				select {
				case err := <-done:
					if err != nil {
						t.Fatal(err)
					}
					break poll
				case <-time.After(2 * time.Millisecond):
				}
				dbs, _ := filepath.Glob(filepath.Join(dir, "ceiling-*", "ceiling.sqlite3"))
				for _, db := range dbs {
					sawDB = true
					if _, err := os.Stat(db + "-shm"); err == nil {
						sawShm = true
					}
				}
			}
			if !sawDB {
				t.Fatal("setup: never saw the ceiling's database file")
			}
			if sawShm != tc.wantShm {
				t.Errorf("%s: a -shm file beside the database: %v, want %v (exclusive locking keeps none)", tc.name, sawShm, tc.wantShm)
			}
		})
	}
}

// TestFileCreateCeilingCountsItsFiles: file_create writes 1,200-byte
// files (about a run file) and reports files per second: the files seen
// during the measurement are at most the rate times the call's wall
// time, and each holds 1,200 bytes. A rate in another unit (per ms)
// or a smaller file would publish a ceiling the JSON stores are not
// compared fairly with.
func TestFileCreateCeilingCountsItsFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("measures a ceiling")
	}
	dir := t.TempDir()
	const d = 300 * time.Millisecond
	type result struct {
		ops float64
		err error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		ops, err := MeasureCeiling(context.Background(), CeilingFileCreate, dir, d)
		done <- result{ops, err}
	}()
	seen, size := 0, int64(-1)
	for {
		select {
		case r := <-done:
			if r.err != nil {
				t.Fatal(r.err)
			}
			if seen == 0 {
				t.Fatal("setup: never saw a created file")
			}
			if size != 1200 {
				t.Errorf("file_create wrote %d-byte files, want 1200", size)
			}
			// The files made are the rate times the time measured, which
			// the call's whole wall time bounds however slow the machine.
			if wall := time.Since(start); float64(seen) > r.ops*wall.Seconds()+1 {
				t.Errorf("file_create reported %v ops/s, but %d files were created in %v", r.ops, seen, wall)
			}
			return
		case <-time.After(5 * time.Millisecond):
		}
		files, _ := filepath.Glob(filepath.Join(dir, "ceiling-*", "f*.json"))
		seen = max(seen, len(files))
		if size < 0 && len(files) > 0 {
			if fi, err := os.Stat(files[0]); err == nil {
				size = fi.Size()
			}
		}
	}
}
