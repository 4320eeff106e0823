package sqlite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// TestCommitWhoseWALHeaderFlushFailsIsAnError: after a checkpoint that
// restarts the WAL, the next commit first writes the WAL header (gathered)
// and syncs it: walSync hands the header to the file through flushedWAL.
// When that write fails (a full disk), the commit must fail. If flushedWAL
// ignored the failed flush, the sync would go on, the commit's frames would
// follow a header that was never written, the commit would be acknowledged
// and be gone after a reopen (its frames' salts match no header). The
// store stays usable once the disk has room again, the failed commit is
// not there after a kill or a reopen, and the commit before it is.
func TestCommitWhoseWALHeaderFlushFailsIsAnError(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "walhdr.sqlite3")
	s, err := New(ctx, Config{Path: path, IdleCheckpoint: time.Hour, NoRedoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	r := redoRun(strings.Repeat("h", 32))
	commitSteps(t, s, r, durable.RunRunning, true, "a") // version 1
	// A list read brings the list columns up to date, so that the
	// checkpoint below has no list flush to write first.
	if _, err := s.RunList(ctx, &store.RunListParams{}); err != nil {
		t.Fatal(err)
	}
	s.checkpointNow(ctx) // RESTART: the next commit rewrites the WAL header

	failNextWALWrites(t, path, 1)
	failed := *r
	failed.Vars = map[string]any{"lost": "never committed"}
	err = s.RunCommit(ctx, &store.CommitParams{Run: &failed,
		Records: []*durable.StepRecord{{RunID: r.RunID, StepID: "b", Status: durable.StepCompleted}}})
	if err == nil {
		t.Fatal("the commit whose WAL header could not be written was acknowledged")
	}
	if n := walKept(t, path); n != 0 {
		t.Errorf("%d bytes of the failed transaction kept gathered", n)
	}
	if got, err := s.RunGet(ctx, r.RunID); err != nil || got.Version != 1 || got.Vars["lost"] != nil {
		t.Fatalf("after the failed commit the store reads %+v, %v; want version 1", got, err)
	}

	commitSteps(t, s, r, durable.RunCompleted, false, "c") // the disk has room again: version 2
	got, steps, _ := crashImageState(t, s, path, Config{CacheBytes: -1}, r.RunID)
	if got.Version != 2 || got.Vars["lost"] != nil || steps != "1:a 2:c " {
		t.Fatalf("after a kill the database reopens with run version %d, vars %v, ledger %q; want version 2, "+
			"ledger \"1:a 2:c \" and not the failed commit", got.Version, got.Vars, steps)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	c := openImage(t, Config{Path: path})
	if got, err := c.RunGet(ctx, r.RunID); err != nil || got.Version != 2 || got.Vars["lost"] != nil ||
		ledgerSteps(t, c, r.RunID) != "1:a 2:c " {
		t.Fatalf("after a reopen the store reads %+v, %v, ledger %q; want version 2, ledger \"1:a 2:c \"",
			got, err, ledgerSteps(t, c, r.RunID))
	}
}

// rawVFSFiles opens a database file and its WAL through the WAL-batching
// VFS the way SQLite does (the main file first, so the WAL is linked to
// it), without SQLite: tests call the wrapped methods directly. Both are
// closed when the test ends unless a test closed them.
type rawVFSFiles struct {
	tls        *libc.TLS
	path       string
	main, wal  uintptr // sqlite3_file
	mainClosed bool
	walClosed  bool
	mem        []uintptr // C memory to free
}

func openRawVFSFiles(t *testing.T) *rawVFSFiles {
	t.Helper()
	if err := registerWALVFS(); err != nil {
		t.Fatal(err)
	}
	f := &rawVFSFiles{tls: libc.NewTLS(), path: filepath.Join(t.TempDir(), "raw.sqlite3")}
	t.Cleanup(f.close)
	open := func(name string, flags int32) uintptr {
		// SQLite's file names end in several NULs (URI parameters follow).
		z, err := libc.CString(name + "\x00\x00\x00")
		if err != nil {
			t.Fatal(err)
		}
		p := f.alloc(int(walVFS.FszOsFile))
		f.mem = append(f.mem, z)
		out := f.alloc(4)
		if rc := walVFSOpen(f.tls, uintptr(unsafe.Pointer(&walVFS)), z, p,
			flags|sqlite3.SQLITE_OPEN_READWRITE|sqlite3.SQLITE_OPEN_CREATE, out); rc != sqlite3.SQLITE_OK {
			t.Fatalf("opening %s: code %d", name, rc)
		}
		return p
	}
	f.main = open(f.path, sqlite3.SQLITE_OPEN_MAIN_DB)
	f.wal = open(f.path+"-wal", sqlite3.SQLITE_OPEN_WAL)
	if w := openWALOf(t, f.path); w.file != f.wal {
		t.Fatal("the WAL opened is not the one linked to the database")
	}
	return f
}

// alloc returns n zeroed bytes of C memory, freed by close.
func (f *rawVFSFiles) alloc(n int) uintptr {
	p := libc.Xcalloc(f.tls, 1, uint64(n))
	f.mem = append(f.mem, p)
	return p
}

func methods(pFile uintptr) *sqlite3.Tsqlite3_io_methods {
	return (*sqlite3.Tsqlite3_io_methods)(cptr((*sqlite3.Tsqlite3_file)(cptr(pFile)).FpMethods))
}

// gather writes n bytes at off to the WAL: not a frame header, so they
// stay gathered.
func (f *rawVFSFiles) gather(t *testing.T, n int32, off int64) {
	t.Helper()
	buf := f.alloc(int(n))
	if rc := fn[fnFileIO](methods(f.wal).FxWrite)(f.tls, f.wal, buf, n, off); rc != sqlite3.SQLITE_OK {
		t.Fatalf("gathering a write: code %d", rc)
	}
	if k := walKept(t, f.path); k != int(n) {
		t.Fatalf("%d bytes gathered, want %d", k, n)
	}
}

func (f *rawVFSFiles) closeWAL() int32 {
	f.walClosed = true
	return fn[fnFile](methods(f.wal).FxClose)(f.tls, f.wal)
}

func (f *rawVFSFiles) close() {
	if !f.walClosed {
		f.closeWAL()
	}
	if !f.mainClosed {
		f.mainClosed = true
		fn[fnFile](methods(f.main).FxClose)(f.tls, f.main)
	}
	for _, p := range f.mem {
		libc.Xfree(f.tls, p)
	}
	f.tls.Close()
}

// TestWALOperationsReportAFailedFlush: every operation on the WAL other
// than a write (read, truncate, sync, size, file control, close) and the
// main file's end of commit first hand what is gathered to the file; when
// that write fails, the operation must return its code to SQLite, not go
// on as if the bytes were in the file (SQLite would then sync, size or
// read a WAL that lacks them and acknowledge a commit that is not there).
// The bytes are dropped, never written later, and the next operation works.
func TestWALOperationsReportAFailedFlush(t *testing.T) {
	ops := []struct {
		name string
		call func(f *rawVFSFiles) int32
	}{
		{"read", func(f *rawVFSFiles) int32 {
			return fn[fnFileIO](methods(f.wal).FxRead)(f.tls, f.wal, f.alloc(8), 8, 0)
		}},
		{"truncate", func(f *rawVFSFiles) int32 {
			return fn[fnFileSize](methods(f.wal).FxTruncate)(f.tls, f.wal, 0)
		}},
		{"sync", func(f *rawVFSFiles) int32 {
			return fn[fnFileInt](methods(f.wal).FxSync)(f.tls, f.wal, sqlite3.SQLITE_SYNC_NORMAL)
		}},
		{"size", func(f *rawVFSFiles) int32 {
			return fn[fnFilePtr](methods(f.wal).FxFileSize)(f.tls, f.wal, f.alloc(8))
		}},
		{"filecontrol", func(f *rawVFSFiles) int32 {
			return fn[fnFileControl](methods(f.wal).FxFileControl)(f.tls, f.wal, sqlite3.SQLITE_FCNTL_HAS_MOVED, f.alloc(8))
		}},
		{"commit-phase-two", func(f *rawVFSFiles) int32 {
			rc := fn[fnFileControl](methods(f.main).FxFileControl)(f.tls, f.main, sqlite3.SQLITE_FCNTL_COMMIT_PHASETWO, 0)
			if rc == sqlite3.SQLITE_NOTFOUND { // the unix VFS does not handle it; SQLite reads it as OK
				rc = sqlite3.SQLITE_OK
			}
			return rc
		}},
		{"close", (*rawVFSFiles).closeWAL},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			f := openRawVFSFiles(t)
			f.gather(t, 100, 0)
			failNextWALWrites(t, f.path, 1)
			if rc := op.call(f); rc != sqlite3.SQLITE_IOERR_WRITE {
				t.Fatalf("%s with a gathered write that fails returned code %d; want %d (SQLITE_IOERR_WRITE)",
					op.name, rc, sqlite3.SQLITE_IOERR_WRITE)
			}
			if op.name == "close" {
				if st, err := os.Stat(f.path + "-wal"); err != nil || st.Size() != 0 {
					t.Fatalf("after the failed flush the WAL is %v, %v; want empty", st, err)
				}
				return
			}
			if n := walKept(t, f.path); n != 0 {
				t.Errorf("%d bytes kept gathered after the failed write", n)
			}
			if rc := op.call(f); rc != sqlite3.SQLITE_OK && !(op.name == "read" && rc == sqlite3.SQLITE_IOERR_SHORT_READ) {
				t.Errorf("%s once the write works again returned code %d", op.name, rc)
			}
			if rc := f.closeWAL(); rc != sqlite3.SQLITE_OK {
				t.Errorf("closing the WAL: code %d", rc)
			}
			if st, err := os.Stat(f.path + "-wal"); err != nil || st.Size() != 0 {
				t.Fatalf("the WAL holds %v, %v; want nothing (the failed bytes dropped)", st, err)
			}
		})
	}
}
