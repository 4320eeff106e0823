package sqlite

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// The WAL-batching VFS.
//
// SQLite appends a transaction to the WAL with two write calls per page
// (the 24-byte frame header, then the page); on this kind of VM a write
// call costs about 2 µs whatever its size, so a commit of 7 pages spends
// ~30 µs entering the kernel. The VFS below wraps SQLite's default one
// and, for WAL files only, gathers the contiguous writes of a transaction
// in memory and hands them to the file in one write once the commit frame
// is complete, before SQLite publishes the commit in its WAL index. Every
// other operation on the WAL (read, sync, size, truncate, file control,
// close) writes out what is gathered first, so SQLite never sees the file
// differ from what it wrote. The main database file is wrapped only to
// hear of each commit's end (SQLITE_FCNTL_COMMIT_PHASETWO), where
// anything still gathered is written out: a commit never returns with its
// frames in memory.
//
// Only a store that owns its file uses it: another connection reading the
// WAL could otherwise see a commit in the shared WAL index whose frames
// are not written yet. A process killed mid-commit leaves at most a
// partial transaction at the WAL's end, which SQLite's recovery discards
// by its checksums, as it does a torn write of its own.
//
// Functions are plugged into SQLite's tables the way the transpiled code
// stores C function pointers (a Go func value in a uintptr field), as
// modernc.org/sqlite/vfs does.

// walVFSName is the name the VFS is registered under.
const walVFSName = "agw-walbatch"

const (
	walFrameHeader = 24
	// walBatchMax bounds the memory of one gathered write, which the file
	// keeps for its life: a larger transaction (a list flush, a migration,
	// a big back-fill) is written in pieces. A commit of a run is 5–30
	// frames (20–120 KB).
	walBatchMax = 256 << 10
	// maxWrite is the largest write SQLite's unix VFS takes in one call
	// (it masks the length with 0x1ffff).
	maxWrite = 0x1ffff &^ 4095
	// maxPresyncStep bounds what a WAL in presync range may gather unsynced
	// between two background syncs (see walFile.presync).
	maxPresyncStep = 8 << 20
)

var (
	walVFSOnce sync.Once
	walVFSErr  error
	walVFS     sqlite3.Tsqlite3_vfs // registered; lives for the process
	baseVFS    uintptr              // the default VFS it wraps
	baseOpen   uintptr              // its xOpen

	wrapMu sync.Mutex
	// The wrapper tables, one per original io-methods table (SQLite's
	// default VFS uses one or two). They are package variables: SQLite
	// holds them by address, and the transpiled code's pointer arithmetic
	// must not land in the Go heap (the race detector's checkptr refuses
	// that).
	walTables, mainTables wrapperTables
	// open maps a wrapped file (sqlite3_file address) to its state.
	openFiles sync.Map
	// mainByName links a main database file to its WAL, which SQLite opens
	// under the main file's name plus "-wal".
	mainByName = map[string]*mainFile{}

	// Counters for tests: WAL writes gathered, gathered writes handed to
	// the file, and commits whose frames were still gathered when the
	// commit ended (the commit frame went unrecognised).
	walGathered, walFlushes, walLateFlushes atomic.Int64
)

// registerWALVFS registers the VFS once per process.
func registerWALVFS() error {
	walVFSOnce.Do(func() {
		tls := libc.NewTLS()
		defer tls.Close()
		baseVFS = sqlite3.Xsqlite3_vfs_find(tls, 0)
		if baseVFS == 0 {
			walVFSErr = errors.New("sqlite: no default VFS")
			return
		}
		walVFS = *(*sqlite3.Tsqlite3_vfs)(cptr(baseVFS))
		baseOpen = walVFS.FxOpen
		name, err := libc.CString(walVFSName)
		if err != nil {
			walVFSErr = fmt.Errorf("sqlite: naming the WAL VFS: %w", err)
			return
		}
		walVFS.FzName = name
		walVFS.FpNext = 0
		setFn[fnOpen](&walVFS.FxOpen, walVFSOpen)
		if rc := sqlite3.Xsqlite3_vfs_register(tls, uintptr(unsafe.Pointer(&walVFS)), 0); rc != sqlite3.SQLITE_OK {
			walVFSErr = fmt.Errorf("sqlite: registering the WAL VFS: code %d", rc)
		}
	})
	return walVFSErr
}

// walFile is the state of one open WAL file.
type walFile struct {
	mu   sync.Mutex
	orig *sqlite3.Tsqlite3_io_methods
	file uintptr   // its sqlite3_file
	main *mainFile // the database it belongs to, or nil
	buf  []byte
	off  int64 // file offset of buf[0]
	// commitHeader is the offset of the header of a commit frame whose
	// page has not been written yet, or -1.
	commitHeader int64

	path       string         // the WAL's path, for presync
	unsynced   int64          // bytes written since SQLite or presync last synced the file
	presyncing atomic.Bool    // a presync goroutine is running
	presyncs   sync.WaitGroup // the presync goroutine, waited for by walClose
}

// presyncLimits returns the WAL size from which w is synced in the
// background, and the most it may gather unsynced meanwhile (0, 0: never).
func (w *walFile) presyncLimits() (from, step int64) {
	if w.main == nil {
		return 0, 0
	}
	from = w.main.presyncFrom.Load()
	return from, min(from/10, maxPresyncStep)
}

// mainFile is the state of one open main database file.
type mainFile struct {
	orig *sqlite3.Tsqlite3_io_methods
	name string
	wal  atomic.Pointer[walFile] // its open WAL, if any
	// presyncFrom is the WAL size from which the WAL is synced in the
	// background (0: never); see setWALPresync. presyncCount counts the
	// background syncs started, for tests.
	presyncFrom, presyncCount atomic.Int64
}

// setWALPresync makes the WAL of the open database file name (as SQLite
// names it: PRAGMA database_list) sync in the background once it holds
// from bytes. It reports whether the file is open through this VFS.
func setWALPresync(name string, from int64) bool {
	wrapMu.Lock()
	defer wrapMu.Unlock()
	m := mainByName[name]
	if m == nil {
		return false
	}
	m.presyncFrom.Store(from)
	return true
}

func walVFSOpen(tls *libc.TLS, pVfs, zName, pFile uintptr, flags int32, pOutFlags uintptr) int32 {
	rc := callOpen(baseOpen, tls, baseVFS, zName, pFile, flags, pOutFlags)
	file := (*sqlite3.Tsqlite3_file)(cptr(pFile))
	if rc != sqlite3.SQLITE_OK || file.FpMethods == 0 || zName == 0 {
		return rc
	}
	orig := (*sqlite3.Tsqlite3_io_methods)(cptr(file.FpMethods))
	name := libc.GoString(zName)
	wrapMu.Lock()
	defer wrapMu.Unlock()
	switch {
	case flags&sqlite3.SQLITE_OPEN_WAL != 0:
		t := walTables.tableFor(orig, wireWAL)
		if t == nil {
			return rc
		}
		w := &walFile{orig: orig, file: pFile, commitHeader: -1, main: mainByName[strings.TrimSuffix(name, "-wal")],
			path: name}
		if w.main != nil {
			w.main.wal.Store(w)
		}
		openFiles.Store(pFile, w)
		file.FpMethods = uintptr(unsafe.Pointer(t))
	case flags&sqlite3.SQLITE_OPEN_MAIN_DB != 0:
		t := mainTables.tableFor(orig, wireMain)
		if t == nil {
			return rc
		}
		m := &mainFile{orig: orig, name: name}
		mainByName[name] = m
		openFiles.Store(pFile, m)
		file.FpMethods = uintptr(unsafe.Pointer(t))
	}
	return rc
}

// wrapperTables holds the wrapper tables built so far.
type wrapperTables struct {
	orig  [4]uintptr
	table [4]sqlite3.Tsqlite3_io_methods
	n     int
}

// tableFor returns the wrapper table built from orig (under wrapMu), or
// nil when all slots are taken (the file is then left unwrapped).
func (ts *wrapperTables) tableFor(orig *sqlite3.Tsqlite3_io_methods, wire func(*sqlite3.Tsqlite3_io_methods)) *sqlite3.Tsqlite3_io_methods {
	key := uintptr(unsafe.Pointer(orig))
	for i := range ts.n {
		if ts.orig[i] == key {
			return &ts.table[i]
		}
	}
	if ts.n == len(ts.table) {
		return nil
	}
	t := &ts.table[ts.n]
	*t = *orig // the methods not wired below call the originals
	wire(t)
	ts.orig[ts.n] = key
	ts.n++
	return t
}

type (
	fnFile        = func(*libc.TLS, uintptr) int32
	fnFileInt     = func(*libc.TLS, uintptr, int32) int32
	fnFilePtr     = func(*libc.TLS, uintptr, uintptr) int32
	fnFileIO      = func(*libc.TLS, uintptr, uintptr, int32, int64) int32
	fnFileSize    = func(*libc.TLS, uintptr, int64) int32
	fnFileControl = func(*libc.TLS, uintptr, int32, uintptr) int32
	fnOpen        = func(*libc.TLS, uintptr, uintptr, uintptr, int32, uintptr) int32
)

// cptr turns an address SQLite hands over into a pointer (the
// reinterpretation keeps vet's uintptr check quiet; the memory is SQLite's
// or one of the tables above, never moved).
func cptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

func setFn[F any](slot *uintptr, f F) { *(*F)(unsafe.Pointer(slot)) = f }

func fn[F any](p uintptr) F { return *(*F)(unsafe.Pointer(&p)) }

func callOpen(p uintptr, tls *libc.TLS, vfs, name, file uintptr, flags int32, out uintptr) int32 {
	return fn[fnOpen](p)(tls, vfs, name, file, flags, out)
}

func wireWAL(t *sqlite3.Tsqlite3_io_methods) {
	setFn[fnFile](&t.FxClose, walClose)
	setFn[fnFileIO](&t.FxRead, walRead)
	setFn[fnFileIO](&t.FxWrite, walWrite)
	setFn[fnFileSize](&t.FxTruncate, walTruncate)
	setFn[fnFileInt](&t.FxSync, walSync)
	setFn[fnFilePtr](&t.FxFileSize, walFileSize)
	setFn[fnFileControl](&t.FxFileControl, walFileControl)
}

func wireMain(t *sqlite3.Tsqlite3_io_methods) {
	setFn[fnFile](&t.FxClose, mainClose)
	setFn[fnFileControl](&t.FxFileControl, mainFileControl)
}

func walOf(pFile uintptr) *walFile {
	v, _ := openFiles.Load(pFile)
	return v.(*walFile)
}

func mainOf(pFile uintptr) *mainFile {
	v, _ := openFiles.Load(pFile)
	return v.(*mainFile)
}

// flush writes out what is gathered (under w.mu). What is gathered is
// always the current transaction's (a commit is flushed when its commit
// frame is complete), and SQLite abandons a transaction whose write fails
// and never writes its frames again: on failure the bytes are dropped, as
// SQLite's own failed write would leave them unwritten. Kept, a later
// flush would write a rolled-back transaction after the last commit, with
// a valid checksum chain, for the next recovery to take as committed.
func (w *walFile) flush(tls *libc.TLS, pFile uintptr) int32 {
	w.commitHeader = -1
	if len(w.buf) == 0 {
		return sqlite3.SQLITE_OK
	}
	write := fn[fnFileIO](w.orig.FxWrite)
	for done := 0; done < len(w.buf); {
		n := min(len(w.buf)-done, maxWrite)
		if rc := write(tls, pFile, uintptr(unsafe.Pointer(&w.buf[done])), int32(n), w.off+int64(done)); rc != sqlite3.SQLITE_OK {
			w.buf = w.buf[:0]
			return rc
		}
		done += n
	}
	end := w.off + int64(len(w.buf))
	w.unsynced += int64(len(w.buf))
	w.buf = w.buf[:0]
	walFlushes.Add(1)
	if from, step := w.presyncLimits(); from > 0 && end >= from && w.unsynced >= step &&
		w.presyncing.CompareAndSwap(false, true) {
		w.unsynced = 0
		w.presyncs.Add(1)
		w.main.presyncCount.Add(1)
		go w.presync()
	}
	return sqlite3.SQLITE_OK
}

// presync flushes the WAL to disk through a descriptor of its own, beside
// the writer. With synchronous NORMAL, SQLite syncs the WAL only when it
// checkpoints, and that sync then writes out everything appended since
// the last one while the writer waits: 160–220 ms of a ~265 ms stall for
// a 40,000-page WAL on the benchmark VM. Once the WAL is large enough
// that a checkpoint under load is near (setWALPresync), this goroutine
// syncs it every few megabytes, so the checkpoint's own sync finds little
// left to write (10–85 ms there), and sustained load (10,000-run W1, W2,
// W3b) ran 19–23 % faster. Smaller WALs are left alone: a burst that ends
// before a checkpoint is due has its WAL written out by the idle
// checkpoint, off the writer's path, whereas a concurrent sync costs the
// writer some 5 % on a 2-vCPU machine (1,000-run W2 and W3b, whose WAL
// passes half-way). Durability is unchanged: SQLite still syncs whenever
// it needs to, so errors here are ignored (a WAL truncated or removed
// meanwhile is not this goroutine's concern).
func (w *walFile) presync() {
	defer w.presyncs.Done()
	defer w.presyncing.Store(false)
	f, err := os.Open(w.path)
	if err != nil {
		return
	}
	_ = f.Sync()
	_ = f.Close()
}

func walWrite(tls *libc.TLS, pFile, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	w := walOf(pFile)
	w.mu.Lock()
	defer w.mu.Unlock()
	data := unsafe.Slice((*byte)(cptr(zBuf)), iAmt)
	walGathered.Add(1)
	end := w.off + int64(len(w.buf))
	switch {
	case len(w.buf) == 0:
		w.off = iOfst
		w.buf = append(w.buf, data...)
	case iOfst == end:
		w.buf = append(w.buf, data...)
	case iOfst >= w.off && iOfst+int64(iAmt) <= end:
		copy(w.buf[iOfst-w.off:], data) // a frame of this transaction rewritten
	default:
		if rc := w.flush(tls, pFile); rc != sqlite3.SQLITE_OK {
			return rc
		}
		w.off = iOfst
		w.buf = append(w.buf, data...)
	}
	switch {
	case iAmt == walFrameHeader && binary.BigEndian.Uint32(data[4:8]) != 0:
		// A frame header with the database size set: the commit frame.
		w.commitHeader = iOfst
	case w.commitHeader >= 0 && iOfst == w.commitHeader+walFrameHeader:
		// The commit frame is complete: write the transaction out before
		// SQLite publishes it.
		return w.flush(tls, pFile)
	case len(w.buf) >= walBatchMax:
		return w.flush(tls, pFile)
	}
	return sqlite3.SQLITE_OK
}

// flushedWAL writes out what pFile's WAL has gathered, before another
// operation on the file, and returns its state locked (the caller
// unlocks); on a write error it returns the code, unlocked.
func flushedWAL(tls *libc.TLS, pFile uintptr) (*walFile, int32) {
	w := walOf(pFile)
	w.mu.Lock()
	if rc := w.flush(tls, pFile); rc != sqlite3.SQLITE_OK {
		w.mu.Unlock()
		return nil, rc
	}
	return w, sqlite3.SQLITE_OK
}

func walRead(tls *libc.TLS, pFile, zBuf uintptr, iAmt int32, iOfst int64) int32 {
	w, rc := flushedWAL(tls, pFile)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	defer w.mu.Unlock()
	return fn[fnFileIO](w.orig.FxRead)(tls, pFile, zBuf, iAmt, iOfst)
}

func walTruncate(tls *libc.TLS, pFile uintptr, size int64) int32 {
	w, rc := flushedWAL(tls, pFile)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	defer w.mu.Unlock()
	return fn[fnFileSize](w.orig.FxTruncate)(tls, pFile, size)
}

func walSync(tls *libc.TLS, pFile uintptr, flags int32) int32 {
	w, rc := flushedWAL(tls, pFile)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	defer w.mu.Unlock()
	rc = fn[fnFileInt](w.orig.FxSync)(tls, pFile, flags)
	if rc == sqlite3.SQLITE_OK {
		w.unsynced = 0
	}
	return rc
}

func walFileSize(tls *libc.TLS, pFile, pSize uintptr) int32 {
	w, rc := flushedWAL(tls, pFile)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	defer w.mu.Unlock()
	return fn[fnFilePtr](w.orig.FxFileSize)(tls, pFile, pSize)
}

func walFileControl(tls *libc.TLS, pFile uintptr, op int32, pArg uintptr) int32 {
	w, rc := flushedWAL(tls, pFile)
	if rc != sqlite3.SQLITE_OK {
		return rc
	}
	defer w.mu.Unlock()
	return fn[fnFileControl](w.orig.FxFileControl)(tls, pFile, op, pArg)
}

func walClose(tls *libc.TLS, pFile uintptr) int32 {
	w := walOf(pFile)
	w.mu.Lock()
	rc := w.flush(tls, pFile)
	w.mu.Unlock()
	w.presyncs.Wait()
	if w.main != nil {
		w.main.wal.CompareAndSwap(w, nil)
	}
	openFiles.Delete(pFile)
	(*sqlite3.Tsqlite3_file)(cptr(pFile)).FpMethods = uintptr(unsafe.Pointer(w.orig))
	if rc2 := fn[fnFile](w.orig.FxClose)(tls, pFile); rc == sqlite3.SQLITE_OK {
		rc = rc2
	}
	return rc
}

func mainFileControl(tls *libc.TLS, pFile uintptr, op int32, pArg uintptr) int32 {
	m := mainOf(pFile)
	if op == sqlite3.SQLITE_FCNTL_COMMIT_PHASETWO {
		if w := m.wal.Load(); w != nil {
			w.mu.Lock()
			if len(w.buf) > 0 {
				walLateFlushes.Add(1)
			}
			rc := w.flush(tls, w.file)
			w.mu.Unlock()
			if rc != sqlite3.SQLITE_OK {
				return rc
			}
		}
	}
	return fn[fnFileControl](m.orig.FxFileControl)(tls, pFile, op, pArg)
}

func mainClose(tls *libc.TLS, pFile uintptr) int32 {
	m := mainOf(pFile)
	wrapMu.Lock()
	if mainByName[m.name] == m {
		delete(mainByName, m.name)
	}
	wrapMu.Unlock()
	openFiles.Delete(pFile)
	(*sqlite3.Tsqlite3_file)(cptr(pFile)).FpMethods = uintptr(unsafe.Pointer(m.orig))
	return fn[fnFile](m.orig.FxClose)(tls, pFile)
}
