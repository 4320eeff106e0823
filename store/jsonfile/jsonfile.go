// Package jsonfile is a store.Store over the Python gateway's file layout,
// so a data directory can be shared with (or migrated from) the Python
// AbstractGateway:
//
//	<dir>/run_<run_id>.json          RunState, indent 2, non-ASCII raw, atomic temp+rename
//	<dir>/ledger_<run_id>.jsonl      one StepRecord per line, appended with O_APPEND
//	<dir>/commands.jsonl             one CommandRecord per line, including seq
//	<dir>/commands_cursor.json       {"cursor": n, "updated_at": iso} of store.DefaultConsumer
//	<dir>/commands_cursor_<c>.json   the cursor of any other consumer c
//	<dir>/.abstractgateway-store.lock, <dir>/gateway_runner.lock
//	                                 locked while a store is open (below); the files stay
//
// Durability. A new run file is written to run_<id>.json.<32 hex>.tmp in
// the same directory, fsynced, renamed to the target and the directory is
// fsynced; a failed write removes its temp file, and one a killed process
// left is removed by the next open once 10 minutes old (younger, it may
// be a live Python process's write: temps.go). An existing one is
// replaced the same way but through a recycled spare file (.spare-<hex>.tmp,
// see atomicfile.Recycler) that is exchanged with it atomically, since
// creating a file is the dearest part of a save on some file systems; the
// store removes its spares when it closes, and those of a crashed process
// when it opens. Ledger appends write all
// records of one call in a single write(2) on an O_APPEND descriptor, then
// fsync. Config.NoSync skips every fsync (the Python store never syncs:
// process-crash safe, not power-loss safe).
//
// Commit order. RunCommit appends the records first and writes the run
// file second, so the ledger is never behind the state. The two writes are
// not atomic together, so Store does not implement store.AtomicCommitter:
// a crash between them leaves records whose state was never saved, which
// the kernel's replay checks handle. A commit that ends a run is the
// exception: its state is written first under a staged name
// (.commit-<id>.<ledger size>-<size after>-<sum>.<run size>-<run sum>.tmp),
// then the records are appended, then the staged file takes the run
// file's place; the next open finishes such a commit if all its records
// landed and drops it otherwise, or when the run file no longer holds the
// bytes it held at the staging (another process saved the run since:
// staged.go), so a run's end is never half made. A file the open cannot
// read (an I/O error, not a verdict) fails it and leaves the staged name
// for the next one.
//
// One store owns a directory. It holds an exclusive lock (flock, on unix)
// on <dir>/.abstractgateway-store.lock while open, so a second store on
// the same directory, in this process or another, fails to open with
// ErrDirInUse instead of corrupting it; the kernel drops the lock when
// the process ends, however it ends. Python's store takes no such lock,
// but its gateway runner holds one on <dir>/gateway_runner.lock for its
// whole life (spec gateway-api §8.2), so the store locks that file too
// (creating it, and appending a "pid=<n>" line as Python does): it fails
// to open with ErrDirInUse while a Python runner works on the directory,
// and a Python runner started while it is open is refused, so the two
// never tick the same runs. A directory opened read-only takes neither.
// Run versions (store optimistic
// concurrency) are not part of the Python JSON, so they live in memory:
// a run found on disk when the store opens is at version 1 and every
// commit increments it. Indexes (status, wait keys, parent→children,
// deadlines) and the command counter are also built once at open and kept
// up to date by this process's writes. Another process writing the same
// directory (Python without a runner: serve --no-runner, scripts) is not
// serialised with, but the run side notices it: a run file it saved is
// read again (the store knows the identity, modification time, size and
// sum of the file it last wrote or read), and such a read (RunGet, a
// listing that loads the run, a commit) indexes the new state at the next
// version, so a commit of a state read before fails with
// store.ErrConflict, one stat per commit, and the host's save wins; a
// save the store has not read yet is not in the indexes (RunIndex,
// RunListDue), and one landing between a commit's check and its rename
// is still overwritten. A run file another process deleted is forgotten
// (metadata, indexes, cache; not its ledger) once the store finds it
// gone: at a read of the run, in RunIndex and RunListDue (which stat the
// files of the runs they list) and at a create of the same id, which
// then writes it anew. A ledger is checked against its file (identity
// and size) at each use and read again, from where it grew, when another
// process appended to it, or whole when it was deleted or replaced; the
// store's appends start a line of their own after a torn one. Commands
// another process appends are not seen until the next open. Beside
// them, the store keeps the last state and the ledger index (offsets,
// completed keys) of the runs it used most recently, within
// Config.CacheBytes; the rest is read from the files when needed.
//
// Tolerance. Unparsable run files are logged and treated as absent by list
// queries, but RunGet and a create of the same id return an error naming
// the file, so a corrupt file is never silently overwritten. Ledger lines
// holding several concatenated records (racing writers) are recovered;
// unreadable lines, including a torn final line, are skipped with a
// warning and never hide the other records.
package jsonfile

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/atomicfile"
	"github.com/abstractframework/abstractgateway/internal/lru"
	"github.com/abstractframework/abstractgateway/store"
)

// Config configures a Store. The zero value of every field but Dir is a
// usable default.
type Config struct {
	// Dir is the data directory, created (with parents) when missing.
	// Required.
	Dir string
	// NoSync skips fsync of files and of the directory after writes.
	// Default false: every write is synced before it returns.
	NoSync bool
	// CacheBytes bounds what the store keeps in memory of recently used
	// runs, least recently used first out: their last state (counted as
	// its file's size) and the index of their ledger (seq, offsets, the
	// idempotency keys of completed records; an estimate of its size),
	// each within CacheBytes. What is not kept is read from the files
	// again. 0 means DefaultCacheBytes.
	CacheBytes int64
	// Logger receives warnings about unreadable files and lines. Default:
	// discard.
	Logger *slog.Logger
}

// DefaultCacheBytes is Config.CacheBytes when it is 0.
const DefaultCacheBytes = 16 << 20

// Store is the JSON-file store. It is safe for concurrent use by the
// goroutines of one process; see the package documentation for the
// one-process rule.
type Store struct {
	dir    string
	noSync bool
	log    *slog.Logger

	// stripes serialise writes (and ledger reads) per run id; RunGet
	// takes them shared.
	stripes [64]sync.RWMutex

	locks []*os.File // the directory's locks (lockDir), held until Close
	// readOnly tells a directory this process may not write: what other
	// processes left there (staged commits, spares) is not touched.
	readOnly bool

	mu     sync.RWMutex // guards the fields below
	closed bool
	runs   map[string]*runMeta
	idx    runIndex
	spares *atomicfile.Recycler

	cache   *lru.Cache[*cachedRun]   // last states, by run id
	ledgers *lru.Cache[*ledgerState] // ledger indexes, by run id

	cmd commandLog

	// dirUnsynced is set when a write failed after it may have created or
	// renamed a directory entry: the next append syncs the directory even
	// if its own file is not new.
	dirUnsynced atomic.Bool

	// writeForTest, when set, stands in for the one write of an append,
	// so a test can fail it partway as a full disk would.
	writeForTest func(f *os.File, data []byte) (int, error)

	// killForTest, when set, is called at the named points of a terminal
	// commit ("staged", "appended"), so a test can end the process there.
	killForTest func(point string)
}

var (
	_ store.Store        = (*Store)(nil)
	_ store.LedgerFinder = (*Store)(nil)
)

// New opens (creating if needed) the data directory, scans its run files
// once to build the indexes and its command log to rebuild the command
// counter.
func New(cfg Config) (*Store, error) {
	if cfg.Dir == "" {
		return nil, errors.New("jsonfile: config: Dir is required")
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("jsonfile: resolving %s: %w", cfg.Dir, err)
	}
	// 0777 and 0666 (fileOpts, appendFile) under the umask, as Python's
	// mkdir and open give: a group-shared data dir stays writable by the
	// group's other members.
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("jsonfile: creating data dir: %w", err)
	}
	locks, readOnly, err := lockDir(dir)
	if err != nil {
		return nil, fmt.Errorf("jsonfile: %w", err)
	}
	s := &Store{
		locks:    locks,
		readOnly: readOnly,
		dir:      dir,
		noSync:   cfg.NoSync,
		log:      cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)).WithGroup("jsonfile"),
		runs:     map[string]*runMeta{},
		idx:      newRunIndex(),
		cache:    lru.New[*cachedRun](cmp.Or(cfg.CacheBytes, DefaultCacheBytes)),
		ledgers:  lru.New[*ledgerState](cmp.Or(cfg.CacheBytes, DefaultCacheBytes)),
	}
	if err := s.open(); err != nil {
		s.unlock()
		return nil, err
	}
	return s, nil
}

func (s *Store) open() error {
	// A directory this process may only read (lockDir): what another
	// process left there (staged commits, spare files, temp files) is its
	// to finish or remove.
	if !s.readOnly {
		if err := s.recoverStaged(); err != nil {
			return err
		}
	}
	var err error
	if s.spares, err = atomicfile.NewRecycler(s.dir, s.fileOpts(), !s.readOnly); err != nil {
		return fmt.Errorf("jsonfile: %w", err)
	}
	if !s.readOnly {
		s.removeStaleTemps()
	}
	if err := s.loadRuns(); err != nil {
		return err
	}
	return s.loadCommands()
}

// ErrDirInUse reports a data directory another open store holds, or a
// (Python) gateway runner: the error names the lock file found held.
var ErrDirInUse = errors.New("data dir in use by another store or gateway runner")

// lockPath is the lock file of a data directory; Python's layout has no
// file of that name, and its readers ignore it.
func lockPath(dir string) string { return filepath.Join(dir, ".abstractgateway-store.lock") }

// runnerLockPath is the file a Python gateway runner locks for its whole
// life (spec gateway-api §8.2), which the store locks too. None of the
// store's scans (run files, cursors, temps, spares, staged commits) takes
// it for one of its files.
func runnerLockPath(dir string) string { return filepath.Join(dir, "gateway_runner.lock") }

// unlock drops the directory's locks, last taken first.
func (s *Store) unlock() {
	for i := len(s.locks) - 1; i >= 0; i-- {
		unlockFile(s.locks[i])
		_ = s.locks[i].Close()
	}
}

// Close marks the store closed (later calls fail), removes its spare
// files and releases the directory. Between calls it holds no open file
// but the lock. Safe to call twice.
func (s *Store) Close() error {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	s.mu.Unlock()
	if already {
		return nil
	}
	// Writes in flight hold a stripe; wait for them before removing the
	// spares they may be using. A write that takes its lock after this
	// finds the store closed (each checks again under its lock).
	for i := range s.stripes {
		s.stripes[i].Lock()
		//lint:ignore SA2001 a barrier: taking the lock waited for the write holding it
		s.stripes[i].Unlock()
	}
	s.cmd.mu.Lock()
	//lint:ignore SA2001 a barrier, as above
	s.cmd.mu.Unlock()
	defer s.unlock() // last: the spares are this store's until then
	if err := s.spares.Close(); err != nil {
		return fmt.Errorf("jsonfile: closing: %w", err)
	}
	return nil
}

var errClosed = errors.New("jsonfile: store is closed")

func (s *Store) checkOpen() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return errClosed
	}
	return nil
}

// stripe returns the lock serialising writes of one run.
func (s *Store) stripe(runID string) *sync.RWMutex {
	h := fnv.New32a()
	_, _ = h.Write([]byte(runID))
	return &s.stripes[h.Sum32()%uint32(len(s.stripes))]
}

// checkID refuses ids that would escape the directory or make an
// unreadable file name.
func checkID(kind, id string) error {
	if id == "" {
		return fmt.Errorf("jsonfile: %s id is required: %w", kind, store.ErrInvalidID)
	}
	if strings.ContainsAny(id, "/\\\x00") || id == "." || id == ".." {
		return fmt.Errorf("jsonfile: invalid %s id %q: %w", kind, id, store.ErrInvalidID)
	}
	return nil
}

// checkRunID is checkID for a run id, which must also be UTF-8: the run
// file's JSON spells its run_id with U+FFFD for a byte that is not, so
// the file named with the raw bytes would no longer match its run_id
// once read back (after a reopen, the run would be lost). Consumer ids
// name a file only, so checkID alone keeps them byte for byte.
func checkRunID(id string) error {
	if err := checkID("run", id); err != nil {
		return err
	}
	if !utf8.ValidString(id) {
		return fmt.Errorf("jsonfile: invalid run id %q: not UTF-8: %w", id, store.ErrInvalidID)
	}
	return nil
}

// runNameFits and ledgerNameFits report whether run id's run or ledger
// file name fits maxNameLen: no file can exist under a longer one, so
// reads answer "absent" for it, as the other stores do for an unknown id,
// rather than the file system's "file name too long".
func runNameFits(id string) bool    { return len("run_")+len(id)+len(".json") <= maxNameLen }
func ledgerNameFits(id string) bool { return len("ledger_")+len(id)+len(".jsonl") <= maxNameLen }

func (s *Store) runPath(id string) string    { return filepath.Join(s.dir, "run_"+id+".json") }
func (s *Store) ledgerPath(id string) string { return filepath.Join(s.dir, "ledger_"+id+".jsonl") }

// writeNew creates path through a synced temp file (unless NoSync) and
// makes the rename durable with a directory sync; it fails with
// fs.ErrExist, leaving the file alone, when path exists.
func (s *Store) writeNew(path string, data []byte) error {
	err := atomicfile.WriteNew(path, data, s.fileOpts())
	if err != nil {
		s.dirUnsynced.Store(true) // the rename may have happened before a failed directory sync
	}
	return err
}

// replaceFile atomically replaces the file at path, exchanging it with a
// recycled spare file (see atomicfile.Recycler) instead of creating a
// temp file for each write, with the same syncs as writeNew. The
// displaced file is written again later as some other file, so path must
// not be one that another process may hold open to append to
// (commands.jsonl): use writeFile for that.
func (s *Store) replaceFile(path string, data []byte) error {
	err := s.spares.Replace(path, data)
	if err != nil {
		s.dirUnsynced.Store(true)
	}
	return err
}

// writeFile atomically replaces the file at path through a fresh temp
// file and a rename, with the same syncs as writeNew; the displaced file
// is only unlinked, so a write through a descriptor still open on it
// never reaches another file.
func (s *Store) writeFile(path string, data []byte) error {
	err := atomicfile.Write(path, data, s.fileOpts())
	if err != nil {
		s.dirUnsynced.Store(true) // the rename may have happened before a failed directory sync
	}
	return err
}

// filePerm is the mode the store creates files with, under the umask:
// Python's open() gives 0666 there too.
const filePerm = 0o666

func (s *Store) fileOpts() atomicfile.Options {
	return atomicfile.Options{NoSync: s.noSync, SyncDir: true, Perm: filePerm}
}

// syncDir fsyncs the directory so a rename or a new file survives a power
// loss (no-op with NoSync).
func (s *Store) syncDir() error {
	if s.noSync {
		return nil
	}
	s.dirUnsynced.Store(false) // before the sync: an entry made after it sets it again
	if err := atomicfile.SyncDir(s.dir); err != nil {
		s.dirUnsynced.Store(true)
		return err
	}
	return nil
}

// nowTime is the store's clock for the timestamps it fills in itself
// (command ts, cursor updated_at).
func nowTime() durable.Time { return durable.NewTime(time.Now()) }
