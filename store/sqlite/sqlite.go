package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	msqlite "modernc.org/sqlite"

	"github.com/abstractframework/abstractgateway/store"
)

// Config configures a Store.
type Config struct {
	// Path is the database file; it is created when missing, its
	// directory too. Required.
	// SQLite URIs and in-memory databases are not supported (the reader
	// connections must see the writer's file).
	Path string
	// Synchronous is the PRAGMA synchronous of the writer: "NORMAL"
	// (default; in WAL mode a commit survives a process crash, not a
	// power cut), "FULL" (fsync on every commit) or "OFF".
	Synchronous string
	// Shared lets other connections use the database while the store has
	// it open: other processes (a second runner, the sqlite3 shell, a
	// Python tool) and, in this process, a pool of reader connections.
	// By default the store owns the file: it holds SQLite's exclusive
	// lock from New to Close (a second process opening the file fails),
	// runs every statement on one connection, and serves recently
	// committed runs and ledgers from memory (see CacheBytes).
	Shared bool
	// CacheBytes bounds the memory cache of a store that owns its file,
	// counted as the JSON size of the cached runs and records: 0 means
	// DefaultCacheBytes, negative turns the cache off. A shared store has
	// no cache (another process may change any row). Runs are kept as
	// their JSON text; ledger records are kept decoded, which takes 2 to
	// 2.5 times their JSON size on the Go heap (measured on the benchmark
	// records).
	CacheBytes int64
	// CheckpointPages is the WAL size, in pages, at which a commit folds
	// the WAL back into the database file (PRAGMA wal_autocheckpoint):
	// 0 means DefaultCheckpointPages, 10,000 for a shared store, or
	// SQLite's own 1,000 with synchronous FULL. A larger WAL is
	// checkpointed less often, and a page that many commits change (an
	// index leaf) is written back once instead of once per checkpoint;
	// the price is a bigger WAL file and a longer pause at each
	// checkpoint. With FULL every commit fsyncs the
	// WAL, and while the WAL file still grows each of those fsyncs also
	// commits its new size: a small WAL, soon reused, is cheaper there.
	CheckpointPages int
	// IdleCheckpoint is how long a store that owns its file waits after
	// its last write before it folds the WAL back into the database file,
	// in the background (the WAL file is kept for the next writes to go
	// over, see checkpoint.go): 0 means DefaultIdleCheckpoint,
	// negative turns it off. Checkpoints then happen when the store is
	// quiet instead of stalling a commit in the middle of a burst, and
	// CheckpointPages bounds the WAL under load that never pauses. With
	// synchronous FULL (whose WAL stays small) and in a shared store,
	// checkpoints are left to SQLite.
	IdleCheckpoint time.Duration
	// UnbatchedWAL makes a store that owns its file write the WAL through
	// SQLite's own VFS, two write calls per page, instead of one write
	// call per commit (walbuf.go). Commits are as durable either way;
	// this is a way out should the batching VFS misbehave with some
	// platform or driver version. A shared store never batches.
	UnbatchedWAL bool
	// NoRedoLog makes a store that owns its file commit every write
	// straight into the database, as a shared store does, instead of
	// recording it in the redo log and applying it in the background
	// (redoapply.go). Commits are as durable either way; this is the way
	// out should the redo log misbehave. A redo log left by a killed
	// process is replayed at open either way.
	NoRedoLog bool
	// ListenEvery is how often a shared store's ListenLedger looks for
	// the ledger appends and deletes other processes made: 0 means
	// DefaultListenEvery. Each look is one read transaction of three
	// indexed queries.
	ListenEvery time.Duration
	// Logger receives the store's few log lines (migrations applied,
	// unreadable rows skipped). Nil discards them.
	Logger *slog.Logger
}

// DefaultCheckpointPages is the CheckpointPages of a zero Config with
// synchronous NORMAL or OFF: forty times SQLite's default, a WAL of up to
// about 160 MB with 4 KB pages under load that never pauses (a quiet
// store folds it sooner, see IdleCheckpoint; from half that size it is
// synced in the background, see walbuf.go). Over 10,000
// runs of the benchmark workloads it made W1 12-14 % and W2 6-13 %
// faster than 10,000 pages, which was itself 10-15 % faster than
// SQLite's 1,000.
const DefaultCheckpointPages = 40000

// fullCheckpointPages is the default with synchronous FULL (see
// Config.CheckpointPages): SQLite's own.
const fullCheckpointPages = 1000

// DefaultListenEvery is the Config.ListenEvery of a zero Config.
const DefaultListenEvery = 50 * time.Millisecond

// sharedCheckpointPages is the default of a shared store, whose WAL other
// processes read and which has no idle checkpoints.
const sharedCheckpointPages = 10000

// readers is the size of the reader connection pool of a shared store.
const readers = 4

// busyTimeoutMS is the PRAGMA busy_timeout of every connection, as in the
// Python runtime.
const busyTimeoutMS = 5000

// Store is the SQLite store. Create it with New; it is safe for
// concurrent use.
type Store struct {
	path string
	log  *slog.Logger

	wdb   *sql.DB       // the one writer connection's pool
	wconn *sql.Conn     // the writer connection, pinned
	wsem  chan struct{} // held while a goroutine uses wconn (the writer turn)
	w     writerStmts
	rw    readerStmts // the read statements, prepared on wconn
	// ledgerGrown is set, in the writer turn, once a ledger record is
	// inserted: an owning store's Close raises ledger_heads only then
	// (the open raised them already).
	ledgerGrown bool
	// closed is set by Close while it holds wsem.
	closed bool

	// shared: rdb and r are the reader pool; otherwise every read takes
	// the writer turn, and cache (nil when turned off) serves hot reads.
	shared          bool
	checkpointPages int
	batchWAL        bool // owned and not Config.UnbatchedWAL: open through walbuf.go's VFS
	rdb             *sql.DB
	r               readerStmts
	cache           *hotCache
	keys            *keyIndex         // completed keys of ledgers out of the cache (keyindex.go)
	ckpt            *idleCheckpointer // nil when checkpoints are SQLite's
	redo            *redoLog          // nil in a shared store, without a cache, or with NoRedoLog

	// The list columns' bookkeeping (lists.go), owned by the writer turn:
	// listMarked holds the runs this store has created or recorded in
	// runs_list_dirty since the last flush (nil in a shared store, where
	// another process may flush), listPending those of the transaction in
	// progress, listDirty counts the stale runs, and listFlushAt is the
	// count at which a commit's writer turn flushes.
	listMarked             map[string]struct{}
	listPending            []string
	listDirty, listFlushAt int

	// listenEvery and own serve ListenLedger (listen.go).
	listenEvery time.Duration
	own         ownWrites

	// schemaSeen is the schema_version a shared store's last committed
	// transaction saw (sharedTx), owned by the writer turn.
	schemaSeen int64

	// findRows counts the ledger rows the keyIndex has read and findScans
	// the look-ups that scanned a run's whole ledger (scanCompleted), for
	// the tests that check a look-up does not rescan a long ledger.
	findRows, findScans atomic.Int64

	closeOnce sync.Once
	closeErr  error
}

var (
	_ store.Store           = (*Store)(nil)
	_ store.AtomicCommitter = (*Store)(nil)
	_ store.LedgerFinder    = (*Store)(nil)
	_ store.RunClaimer      = (*Store)(nil)
	_ store.LedgerListener  = (*Store)(nil)
)

// errClosed is returned by writes on a closed store.
var errClosed = errors.New("sqlite: store is closed")

// New opens (creating when missing) the database at cfg.Path, applies the
// pending migrations, back-fills ledger_heads and prepares the
// statements.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Path == "" {
		return nil, errors.New("sqlite: config: path is required")
	}
	if strings.ContainsRune(cfg.Path, '?') || strings.HasPrefix(cfg.Path, "file:") || cfg.Path == ":memory:" {
		return nil, fmt.Errorf("sqlite: config: path %q: URIs and in-memory databases are not supported", cfg.Path)
	}
	syncMode := strings.ToUpper(cmp.Or(cfg.Synchronous, "NORMAL"))
	switch syncMode {
	case "NORMAL", "FULL", "OFF":
	default:
		return nil, fmt.Errorf("sqlite: config: synchronous %q: want NORMAL, FULL or OFF", cfg.Synchronous)
	}
	// As Python's SqliteDatabase does: a new data dir needs no mkdir first.
	if err := os.MkdirAll(filepath.Dir(cfg.Path), 0o755); err != nil {
		return nil, fmt.Errorf("sqlite: creating the directory of %s: %w", cfg.Path, err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.CheckpointPages < 0 {
		return nil, fmt.Errorf("sqlite: config: checkpoint pages %d: want 0 (default) or more", cfg.CheckpointPages)
	}
	s := &Store{path: cfg.Path, log: log.With("component", "store/sqlite"), wsem: make(chan struct{}, 1),
		shared: cfg.Shared, checkpointPages: cfg.CheckpointPages, batchWAL: !cfg.Shared && !cfg.UnbatchedWAL,
		listFlushAt: defaultListFlushRuns, listenEvery: cmp.Or(cfg.ListenEvery, DefaultListenEvery)}
	if !cfg.Shared {
		s.listMarked = make(map[string]struct{})
	}
	if s.checkpointPages == 0 {
		switch {
		case syncMode == "FULL":
			s.checkpointPages = fullCheckpointPages
		case cfg.Shared:
			s.checkpointPages = sharedCheckpointPages
		default:
			s.checkpointPages = DefaultCheckpointPages
		}
	}
	if !cfg.Shared && cfg.CacheBytes >= 0 {
		s.cache = newHotCache(cmp.Or(cfg.CacheBytes, DefaultCacheBytes))
	}
	s.keys = newKeyIndex()
	if err := s.open(ctx, syncMode, !cfg.NoRedoLog); err != nil {
		if s.redo != nil {
			s.stopApplying()
			_ = s.redo.file.close() // the log stays, for the next open
		}
		_ = s.closeAll()
		return nil, readOnlyHint(s.path, err)
	}
	if idle := cmp.Or(cfg.IdleCheckpoint, DefaultIdleCheckpoint); !cfg.Shared && syncMode != "FULL" && idle > 0 {
		s.startIdleCheckpoints(idle)
	}
	return s, nil
}

func (s *Store) open(ctx context.Context, syncMode string, redo bool) error {
	drv := &msqlite.Driver{}
	var pragmas []string
	if !s.shared {
		// Before the first access, so that SQLite keeps the WAL index in
		// process memory and takes no file lock per transaction.
		pragmas = append(pragmas, "PRAGMA locking_mode=EXCLUSIVE")
	}
	pragmas = append(pragmas,
		fmt.Sprintf("PRAGMA busy_timeout=%d", busyTimeoutMS),
		"PRAGMA journal_mode=WAL",
		"PRAGMA synchronous="+syncMode,
		"PRAGMA foreign_keys=ON",
		fmt.Sprintf("PRAGMA wal_autocheckpoint=%d", s.checkpointPages),
	)
	wpath := s.path
	if s.batchWAL {
		// Owned: batch the WAL writes of each commit (walbuf.go).
		if err := registerWALVFS(); err != nil {
			return err
		}
		wpath += "?vfs=" + walVFSName
	}
	s.wdb = sql.OpenDB(&connector{drv: drv, path: wpath, pragmas: pragmas})
	s.wdb.SetMaxOpenConns(1)
	s.wdb.SetMaxIdleConns(1)
	s.wdb.SetConnMaxLifetime(0)
	s.wdb.SetConnMaxIdleTime(0)
	var err error
	if s.wconn, err = s.wdb.Conn(ctx); err != nil {
		return fmt.Errorf("sqlite: opening %s: %w", s.path, s.lockedHint(err))
	}
	// From here on the store names the file SQLite opened: absolute, with
	// symlinks followed. The WAL the redo log syncs and the redo log itself
	// sit beside that file, whatever path reached it, and later opens
	// (readers, the redo log's removal at Close) do not depend on the
	// working directory.
	if s.path, err = s.databaseFile(ctx); err != nil {
		return fmt.Errorf("sqlite: opening %s: %w", s.path, err)
	}
	if err := s.migrate(ctx); err != nil {
		return fmt.Errorf("sqlite: migrating %s: %w", s.path, s.lockedHint(err))
	}
	if err := s.indexPythonRows(ctx); err != nil {
		return fmt.Errorf("sqlite: indexing rows Python wrote to %s: %w", s.path, err)
	}
	if err := s.backfillLedgerHeads(ctx); err != nil {
		return fmt.Errorf("sqlite: back-filling ledger heads of %s: %w", s.path, err)
	}
	if s.batchWAL && syncMode == "NORMAL" { // FULL syncs every commit, OFF never
		if err := s.presyncLargeWAL(ctx); err != nil {
			return fmt.Errorf("sqlite: opening %s: %w", s.path, err)
		}
	}
	if err := s.w.prepare(ctx, s.wconn); err != nil {
		return fmt.Errorf("sqlite: preparing writer statements: %w", err)
	}
	if err := s.rw.prepare(ctx, s.wconn); err != nil {
		return fmt.Errorf("sqlite: preparing read statements: %w", err)
	}
	// Writes a killed process left in the redo log go to the database
	// first, then runs left recorded by it, or written by Python, get
	// their list entries.
	if err := s.openRedo(ctx, redo && s.cache != nil, syncMode); err != nil {
		return err
	}
	if err := s.dropStaleDeadlines(ctx); err != nil {
		return fmt.Errorf("sqlite: opening %s: %w", s.path, err)
	}
	if err := s.flushLists(ctx); err != nil {
		return err
	}
	if !s.shared {
		return nil
	}
	s.rdb = sql.OpenDB(&connector{drv: drv, path: s.path, pragmas: []string{
		"PRAGMA foreign_keys=ON",
		fmt.Sprintf("PRAGMA busy_timeout=%d", busyTimeoutMS),
		"PRAGMA query_only=ON",
	}})
	s.rdb.SetMaxOpenConns(readers)
	s.rdb.SetMaxIdleConns(readers)
	s.rdb.SetConnMaxLifetime(0)
	s.rdb.SetConnMaxIdleTime(0)
	if err := s.r.prepare(ctx, s.rdb); err != nil {
		return fmt.Errorf("sqlite: preparing reader statements: %w", err)
	}
	return nil
}

// dropStaleDeadlines deletes the wait_index rows of runs that are not
// waiting. Every writer (this store, and Python's) keeps wait_index in
// step with runs in the transaction that saves a run, so there should be
// none; the due-run query relies on it and reads wait_index alone, its
// index only, rather than each listed run's row (which a W3b poll of
// 100 runs paid in page reads). A row left by a hand edit would
// otherwise be listed as due at every poll. The cost at open is one run
// lookup per deadline, not one per poll.
func (s *Store) dropStaleDeadlines(ctx context.Context) error {
	_, err := s.wconn.ExecContext(ctx, `DELETE FROM wait_index WHERE NOT EXISTS
		(SELECT 1 FROM runs r WHERE r.run_id = wait_index.run_id AND r.status = 'waiting')`)
	if err != nil {
		return fmt.Errorf("deleting the deadlines of runs no longer waiting: %w", err)
	}
	return nil
}

// presyncLargeWAL has the WAL synced in the background once it holds half
// the pages at which a commit folds it (walFile.presync): a checkpoint
// under sustained load then stalls the writer for the copy, not for
// writing out the whole WAL first.
func (s *Store) presyncLargeWAL(ctx context.Context) error {
	file := s.path
	var pageSize int64
	if err := s.wconn.QueryRowContext(ctx, "PRAGMA page_size").Scan(&pageSize); err != nil {
		return fmt.Errorf("reading the page size: %w", err)
	}
	if !setWALPresync(file, int64(s.checkpointPages)*(pageSize+walFrameHeader)/2) {
		// Left unwrapped (walVFSOpen ran out of table slots): it neither
		// batches nor presyncs, and works as SQLite's own.
		s.log.WarnContext(ctx, "database file not open through the WAL-batching VFS", "file", file)
	}
	return nil
}

// databaseFile returns the name of the file SQLite opened for the main
// database (PRAGMA database_list).
func (s *Store) databaseFile(ctx context.Context) (string, error) {
	var seq int
	var schema, file string
	if err := s.wconn.QueryRowContext(ctx, "PRAGMA database_list").Scan(&seq, &schema, &file); err != nil {
		return "", fmt.Errorf("reading the database's file name: %w", err)
	}
	if file == "" {
		return "", errors.New("the database has no file name")
	}
	return file, nil
}

// AtomicCommit reports that RunCommit writes records and state in one
// transaction.
func (s *Store) AtomicCommit() bool { return true }

// Close waits for a write in progress, then closes the statements and
// connections. It is safe to call twice.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.ckpt != nil {
			s.ckpt.stop()
		}
		if s.redo != nil {
			s.stopApplying()
		}
		s.wsem <- struct{}{}
		var redoErr error
		if s.redo != nil {
			redoErr = s.closeRedoLocked(context.Background())
		}
		if s.listDirty > 0 && s.w.conn != nil {
			// Not needed for correctness (the next open does it): leaves
			// the file's list indexes complete for other readers.
			if err := s.flushLists(context.Background()); err != nil {
				s.log.Warn("bringing run lists up to date at close failed", "error", err)
			}
		}
		if !s.shared && s.wconn != nil && s.ledgerGrown {
			// An owning store leaves ledger_heads behind (doc.go, "Pages
			// per commit"), but Python 0.4.28 numbers the records it
			// appends from them and counts a run's records by them, and
			// does not rebuild them when it opens the file: after a clean
			// close the file is Python's to use as is.
			if err := s.backfillLedgerHeads(context.Background()); err != nil {
				s.log.Warn("bringing ledger heads up to date at close failed", "error", err)
			}
		}
		s.closed = true
		s.closeErr = errors.Join(redoErr, s.closeAll())
		<-s.wsem
	})
	return s.closeErr
}

func (s *Store) closeAll() error {
	var errs []error
	errs = append(errs, s.w.close(), s.rw.close(), s.r.close())
	if s.wconn != nil {
		errs = append(errs, s.wconn.Close())
	}
	if s.wdb != nil {
		errs = append(errs, s.wdb.Close())
	}
	if s.rdb != nil {
		errs = append(errs, s.rdb.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sqlite: closing %s: %w", s.path, err)
	}
	return nil
}

// write runs fn in one IMMEDIATE transaction on the writer connection and
// commits it, or rolls it back when fn fails. Only one write runs at a
// time; ctx ends the wait for that turn, but fn and the commit run with
// ctx's values and without its cancellation, so a transaction that has
// begun is never cut short (and modernc needs no watcher goroutine per
// statement).
func (s *Store) write(ctx context.Context, fn func(ctx context.Context) error) error {
	return s.writeThen(ctx, fn, nil)
}

// writeThen is write, then committed (when not nil, and only when the
// store has a cache) once the transaction has committed, still in the
// writer turn: where the cache learns what the file now holds. It also
// settles the transaction's stale-list records and flushes the list
// columns when enough runs are stale (lists.go). A transaction that
// committed but whose redo record failed to sync returns that error, yet
// the cache and the list records still follow it: reads must answer what
// the database holds.
func (s *Store) writeThen(ctx context.Context, fn func(ctx context.Context) error, committed func()) error {
	if err := s.takeTurn(ctx); err != nil {
		return err
	}
	defer func() { <-s.wsem }()
	unlock, err := s.lockRedo(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	wctx := context.WithoutCancel(ctx)
	var done bool
	if s.redo == nil {
		err = s.inTx(wctx, fn)
		done = err == nil
	} else {
		done, err = s.recordedTx(wctx, fn)
	}
	s.settleListMarks(done)
	s.own.settle(done)
	if !done {
		return err
	}
	if committed != nil && s.cache != nil {
		committed()
	}
	s.afterWrite(wctx)
	return err
}

// afterWrite follows a committed write, in its writer turn: the list
// columns are brought up to date once enough runs are stale, and the idle
// checkpointer learns of the write.
func (s *Store) afterWrite(ctx context.Context) {
	if s.listDirty >= s.listFlushAt {
		// Logged, not returned: the commit stands, and the runs stay
		// recorded for the next flush.
		if err := s.flushLists(ctx); err != nil {
			s.log.WarnContext(ctx, "bringing run lists up to date failed", "error", err)
		}
	}
	if s.ckpt != nil {
		s.ckpt.wrote()
	}
}

// inTx runs fn in one IMMEDIATE transaction on the writer connection and
// commits it, or rolls it back when fn fails. The caller holds the writer
// turn.
func (s *Store) inTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if s.shared {
		return s.sharedTx(ctx, fn)
	}
	return s.w.run(func() error {
		if _, err := s.w.begin.exec(ctx); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		return s.finishTx(ctx, fn)
	})
}

// finishTx runs fn in the transaction begun on the writer connection and
// commits it, or rolls it back when fn or the commit fails. It runs
// inside writerStmts.run.
func (s *Store) finishTx(ctx context.Context, fn func(ctx context.Context) error) error {
	if err := fn(ctx); err != nil {
		// The notes of the writes undone go first: once the rollback
		// frees the database, another process may write the same rows.
		s.own.settle(false)
		s.rollback(ctx)
		return err
	}
	if _, err := s.w.commit.exec(ctx); err != nil {
		s.own.settle(false)
		s.rollback(ctx)
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// sharedTx is inTx for a shared store, whose schema another process may
// change while it is open: a newer Python runtime adds its derived runs
// columns when it opens the database, usually after our gateway has
// started, and until syncNewerPythonTrigger sees them our commits would
// leave them stale (a pause we lift stays paused = 1 for that Python). So
// each transaction first reads PRAGMA schema_version (one statement) and,
// when it has moved since the last one this store saw, brings the trigger
// up to date in the same transaction, before fn writes. An owned store
// holds its file exclusively (locking_mode=EXCLUSIVE): no other process
// can change its schema, so it skips the check and pays nothing for it.
func (s *Store) sharedTx(ctx context.Context, fn func(ctx context.Context) error) error {
	var version int64
	var changed bool
	err := s.w.run(func() error {
		if _, err := s.w.begin.exec(ctx); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		v, err := s.w.schemaVersion.queryInt64(ctx)
		if err != nil {
			s.rollback(ctx)
			return fmt.Errorf("reading the schema version: %w", err)
		}
		version, changed = v, v != s.schemaSeen
		return nil
	})
	if err != nil {
		return err
	}
	if changed {
		// Through database/sql, so outside writerStmts.run, but still in
		// the transaction begun above. The trigger's own DDL moves the
		// version on: the value read after it is the one to remember.
		err := syncNewerPythonTrigger(ctx, s.wconn)
		if err == nil {
			err = s.wconn.QueryRowContext(ctx, "PRAGMA schema_version").Scan(&version)
		}
		if err != nil {
			_ = s.w.run(func() error { s.rollback(ctx); return nil })
			return fmt.Errorf("updating the newer Python runtime's trigger after a schema change: %w", err)
		}
	}
	return s.w.run(func() error {
		if err := s.finishTx(ctx, fn); err != nil {
			return err
		}
		// Only once committed: a rolled-back transaction took its DDL
		// with it, so the next one must look again.
		s.schemaSeen = version
		return nil
	})
}

// takeTurn waits for the writer turn (ctx ends the wait). On a closed
// store it hands the turn back and returns errClosed.
func (s *Store) takeTurn(ctx context.Context) error {
	select {
	case s.wsem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	if s.closed {
		<-s.wsem
		return errClosed
	}
	return nil
}

// querier runs ad-hoc queries: the writer connection or the reader pool.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// reading is one read's turn: the statements and the connection it runs
// on, and the cache when the read may use it (nil otherwise). release
// must be called once the read's rows are closed.
//
// A store that owns its file reads with the writer turn held, so neither
// a write nor the redo log's goroutine changes the database meanwhile;
// but commits made from the cache (see redoapply.go) go on, as they need
// only the redo log's lock, which the read does not hold while it
// queries. The cache is therefore read through cached and filled through
// keep.
type reading struct {
	*readerStmts
	db      querier
	cache   *hotCache
	redo    *redoLog // the store's redo log, nil without one
	release func()
}

// cached runs fn on the cache (under the redo log's lock), if the read
// may use one.
func (rd *reading) cached(fn func(c *hotCache)) {
	if rd.cache == nil {
		return
	}
	if rd.redo != nil {
		rd.redo.mu.Lock()
		defer rd.redo.mu.Unlock()
	}
	fn(rd.cache)
}

// keep runs fn on the cache to keep what the read found of run id, unless
// a commit of that run went into the redo log since the read's turn
// began: the rows read predate it, and the cache holds what it made.
func (rd *reading) keep(id string, fn func(c *hotCache)) {
	if rd.cache == nil {
		return
	}
	if rd.redo != nil {
		if hook := rd.redo.beforeKeepForTest; hook != nil {
			hook()
		}
		rd.redo.mu.Lock()
		defer rd.redo.mu.Unlock()
		if rd.redo.queuedRuns[id] > 0 {
			return
		}
	}
	fn(rd.cache)
}

// read returns the turn of a read. A store that owns its file reads on
// the writer connection, waiting for its turn, and may use its cache
// then. A shared store reads there too when no write holds it (its page
// cache holds what was just written), else on the reader pool.
func (s *Store) read(ctx context.Context) (*reading, error) {
	return s.readRun(ctx, "")
}

// readRun is read for a read of one run's rows (see lockRedoFor); "" reads
// anything.
func (s *Store) readRun(ctx context.Context, runID string) (*reading, error) {
	if !s.shared {
		if err := s.takeTurn(ctx); err != nil {
			return nil, err
		}
		unlock, err := s.lockRedoFor(ctx, runID)
		if err != nil {
			<-s.wsem
			return nil, err
		}
		unlock() // the database holds what the read needs; see reading
		return &reading{readerStmts: &s.rw, db: s.wconn, cache: s.cache, redo: s.redo, release: func() { <-s.wsem }}, nil
	}
	select {
	case s.wsem <- struct{}{}:
		if !s.closed {
			return &reading{readerStmts: &s.rw, db: s.wconn, release: func() { <-s.wsem }}, nil
		}
		<-s.wsem
	default:
	}
	return &reading{readerStmts: &s.r, db: s.rdb, release: func() {}}, nil
}

// lockedHint explains SQLITE_BUSY at open: another process has the file
// (an exclusive store), or held a write transaction past the busy
// timeout (a shared one).
func (s *Store) lockedHint(err error) error {
	if err == nil || !strings.Contains(err.Error(), "SQLITE_BUSY") {
		return err
	}
	if s.shared {
		return fmt.Errorf("%w (another process held a write transaction longer than the busy timeout (%d ms); opening again may succeed)", err, busyTimeoutMS)
	}
	return fmt.Errorf("%w: %w (another process has the database open; a store opens its database exclusively unless Config.Shared is set)", ErrDatabaseInUse, err)
}

// ErrDatabaseInUse is wrapped by the error of New when another process
// has the database open and the store, which opens it exclusively (not
// Config.Shared), cannot take it.
var ErrDatabaseInUse = errors.New("database in use by another process")

// rollback ends a failed transaction. A failed COMMIT may already have
// ended it, so "no transaction is active" is not worth reporting.
func (s *Store) rollback(ctx context.Context) {
	if _, err := s.w.rollback.exec(ctx); err != nil && !strings.Contains(err.Error(), "no transaction") {
		s.log.WarnContext(ctx, "rollback failed", "error", err)
	}
}

// connector opens modernc connections on a plain file path and runs the
// given pragmas on each new connection.
type connector struct {
	drv     *msqlite.Driver
	path    string
	pragmas []string
}

// Connect implements driver.Connector.
func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.path)
	if err != nil {
		return nil, err
	}
	ex, ok := conn.(driver.ExecerContext)
	if !ok {
		_ = conn.Close()
		return nil, errors.New("driver connection cannot execute statements")
	}
	for _, p := range c.pragmas {
		if _, err := ex.ExecContext(ctx, p, nil); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return conn, nil
}

// Driver implements driver.Connector.
func (c *connector) Driver() driver.Driver { return c.drv }

// nullString maps "" to SQL NULL.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
