// Package sqlite is the embedded SQLite Store, on the pure-Go driver
// modernc.org/sqlite (no cgo, static binaries).
//
// # Compatibility with the Python runtime
//
// The database has the schema of the Python runtime's SqliteDatabase
// (runs, wait_index, ledger, ledger_heads, commands, command_cursors;
// migrations/001_python_schema.up.sql), so a database written by Python
// opens and works, and the Python columns are kept filled the way Python
// fills them: run_json in Python's json.dumps layout, record_json without
// seq, wait_until only for WAIT_UNTIL waits. Later migrations add what the
// Go store needs (runs.version, runs.wait_key, ledger.completed_key,
// run_claims); schema.sql is the resulting schema. Migrations are
// embedded, numbered and recorded in schema_migrations; they run when the
// store opens. A Python writer knows none of the added columns: triggers
// (migrations 008, 012–014, 016–019 and 022) keep them right for the rows it saves
// into a database this store migrated, using only SQL functions Python's
// older SQLite has; 017 moves a run's version on at each Python save, so
// our versioned commits see a Python write as a conflict. A newer Python
// runtime (after 0.4.28) adds runs columns it derives from run_json
// (paused, run_lifecycle_json, the automation attribution) and writes
// run_json with compact separators: when those columns exist, the open
// (and, in a shared store, the first write after another process changed
// the schema) installs a trigger that sets them to NULL, which that
// Python reads as "not yet back-filled" (it falls back to run_json and
// fills them again when it opens the database), whenever our commit
// changes run_json
// (newer_python.go); migration 018 lets migration 014's paused-run
// triggers match either spacing, and 019 makes them (and 016's) count only
// the boolean true as a pause, as store.Deadline does.
//
// # Pages per commit
//
// In WAL mode a commit costs roughly one page write per b-tree it
// touches, so migration 004 trims what every commit maintains: ledger
// seqs come from the primary key instead of ledger_heads (the store
// raises the heads from MAX(seq) when it opens and when it closes the
// file, since Python 0.4.28 numbers and counts records by them and does
// not rebuild them, so a file this store was killed on must be opened by
// it once before Python 0.4.28 appends to it; a shared store, beside
// which a Python process may be open, keeps them current), the
// index duplicating the ledger's primary key and two runs indexes no
// query of this store uses are dropped, and the parent index only holds
// child runs. A 10-node chain run (start + completion) went from 18.4 to
// 10.3 WAL frames. Python recreates its dropped indexes when it opens the
// database, which is harmless.
//
// # Lists
//
// Lists are most recently updated first. Lists by status or workflow, and
// lists no index's leading column filters, read two indexes on copies of
// status and updated_at (list_status, list_updated_at) that commits leave
// alone and the store brings up to date in batches (migration 008,
// lists.go): moving a run's entries in both indexes on every commit was a
// third of the pages a commit wrote; a list that finds runs stale copies
// their columns first (at most 256 runs: 1–3 ms on the benchmark machine,
// against ~1 ms for the newest 50 runs themselves). No index on the time
// alone is kept,
// so a list that no index's leading column filters (no filter, or only
// root-only or wait reason) is a merge over idx_runs_status_updated: the
// newest rows of each status, read in index order, then the newest of
// those. Lists by session read
// idx_runs_session (migration 005), whose entries are written only when a
// run is created: commits leave the identity columns (workflow, parent,
// session) out of their UPDATE, since SQLite rewrites an index entry
// whenever its column is set, even to the same value. On 100,000 runs the
// newest 50 take ~1.4 ms unfiltered (440 ms as a table scan) and ~0.6 ms
// by session (54 ms).
//
// # Connections and ownership
//
// SQLite allows one writer at a time, so the store keeps one writer
// connection, serialises writes in process, and prepares its statements
// on it once. Write statements run through the driver's own interfaces
// (stmts.go), not database/sql, whose per-call locking and argument
// conversion cost 3–5 % of a W1–W3b run and ~30 allocations per run. Every connection uses journal_mode=WAL, foreign_keys=ON and
// busy_timeout=5000; synchronous is NORMAL unless Config.Synchronous says
// otherwise.
//
// By default the store owns its file (locking_mode=EXCLUSIVE, taken when
// it opens and held until Close): another process cannot open the
// database, so the WAL index lives in process memory, no transaction
// takes a file lock, and reads run on the writer connection, one at a
// time. Owning the file also makes a cache safe: the store keeps the runs and
// ledgers it committed or read last, bounded by Config.CacheBytes, and
// answers RunGet, LedgerList, LedgerCount, LedgerFindCompleted and the
// seq allocation of appends from it; what it hands out has the Go types a
// read from disk would have. A run is kept as its run_json text and
// decoded on each hit (so a hit is a disk read without the disk, and the
// cache holds what it counts, in memory the collector does not scan);
// ledger records are kept decoded (durable.StepRecord.StoredCopy) and
// frozen (internal/frozen: compact, about their JSON size), as ledgers are
// read far more often than written. A commit that leaves a run waiting
// keeps only its state and last seq: the run is idle until its wait
// resolves, and its records, which no write needs, are cached again by
// the next read of its ledger. LedgerFindCompleted on a ledger out of the
// cache (and in a shared store) goes through a separate, bounded index of
// completed keys (keyindex.go) that reads only the rows appended since the
// run's previous look-up, so a run waiting in a long loop is not rescanned
// whole at every turn. Lists and due queries always run SQL.
//
// An owning store also batches its WAL writes (walbuf.go): SQLite writes
// each page of a commit to the WAL with two write calls; a thin VFS over
// SQLite's default one gathers a transaction's WAL writes and hands them
// to the file in one write when the commit frame is complete, before
// SQLite publishes the commit, so a commit is in the file when RunCommit
// returns, as before. On the 2-vCPU VM of docs/benchmarks.md this made
// W1–W3b 22–38 % faster. A shared store writes through SQLite's VFS
// unchanged (other connections read the WAL), and Config.UnbatchedWAL
// makes an owning store do the same.
//
// # Redo log
//
// An owning store with its cache (the default) also records every write
// in a redo log beside the database (<path>-redo; redo.go, redoapply.go),
// so that most commits return before they reach the database file. A
// commit of a run the cache knows (its version and last ledger seq), or
// of a new run (under a random id, store.CommitParams.RandomID, at once;
// under a chosen one after a point query of the database), is checked
// against the cache, written to the log with one write call (plus an
// fdatasync with synchronous=FULL), applied to the cache and queued; a
// goroutine applies the queue in transactions of many commits, beside the
// caller instead of in its way, on the second core where there is one.
// Every other write, and every read the cache cannot answer (lists, due
// queries), applies the queue first and then runs on the database as
// before, its statements recorded in the log in the same order. A read
// queries with the writer turn held, not the log's lock, so commits from
// the cache go on meanwhile; it keeps what it found in the cache only if
// no commit of that run overtook it (reading.keep). A commit
// is as durable when RunCommit returns as a SQLite commit with the same
// synchronous setting: in the page cache with NORMAL (it survives the
// process, not a power cut), on disk with FULL. The database records the
// LSN of the last record it holds (redo_applied, in the transaction that
// applies it), so opening a database replays exactly the records above
// it, whether the process was killed or the power cut lost the database's
// last transactions and not the log's, or the reverse: the database ends
// as a prefix of the writes in their order, as SQLite's WAL promises.
// Records carry a CRC-32C and consecutive LSNs; a torn tail ends the
// replay. Once the database holds the whole log and its WAL is synced, the
// log is rewound (at 4 MB: it stays in the page cache), by the background
// goroutine, which syncs the WAL with no lock held and rewinds only if the
// log did not grow meanwhile, so no caller waits for that sync. Commits
// that never let the queue empty would keep it from rewinding: past 16 MB
// the goroutine applies the queue and syncs the WAL holding the writer
// turn, so commits wait for one sync, and rewinds. A clean close removes
// the log. With FULL the database itself runs with NORMAL (the log is
// what is synced at each commit) and the log's first 5 MB are written
// with zeros when it is created, so each fdatasync writes data, not the
// file's growth; a log found all zeros (a kill or a power cut before its
// header was written) holds nothing to replay. Its directory is synced at
// open too, as SQLite does for its WAL: a file's own syncs do not make
// its directory entry durable. A write through the database that
// committed but whose record could not be synced (nor the WAL instead)
// returns an error that says so, and the store's reads answer the
// committed state. W1 on SQLite NORMAL took ~40 % less time per run, W2
// and W3b ~30 % less (docs/benchmarks.md); Config.NoRedoLog commits
// straight into the database instead.
//
// # Checkpoints
//
// An owning store with synchronous NORMAL folds the WAL back into the
// database file when it has been quiet for Config.IdleCheckpoint (500 ms
// by default): a checkpoint of 10,000 pages took ~60 ms on the benchmark
// machine, a stall that would otherwise fall on one commit of a burst.
// The WAL file is kept for the next burst to write over (cheaper than
// growing it: a W1 burst after a quiet period ran 15–20 % faster than
// after truncating it); SQLite removes it when the store closes. Under load that never pauses, a commit folds it every
// Config.CheckpointPages pages (40,000 by default, so pages many commits
// touch are written back less often). Over 10,000 runs of the benchmark
// workloads, checkpoints included, this made W1 ~10 % and W2 ~14 % faster
// than folding every 10,000 pages at commit. Such a fold first syncs the
// whole WAL (SQLite's rule with NORMAL), so once the WAL holds half of
// Config.CheckpointPages a background goroutine syncs it every few
// megabytes (walbuf.go): the fold then stalls the writer for ~30–100 ms
// instead of ~265 ms, and 10,000-run W1–W3b ran 19–23 % faster. A shared
// store folds every 10,000 pages; with FULL, SQLite's 1,000 pages, where
// a small reused WAL keeps each commit's fsync cheap.
//
// Config.Shared opens the database as Python does: no exclusive lock and
// no cache, reads on a small pool of reader connections beside the writer
// (or on the writer when it is free).
//
// # Time
//
// Timestamps are stored as text in the one UTC form durable.FormatTime
// writes (Python's isoformat(): 2026-11-29T23:12:07.099499+00:00, the
// fraction left out when zero). Text order is then time order (a missing
// fraction sorts before any fraction because '+' < '.'), so the due index
// compares wait_index.next_due_iso with the query time formatted the same
// way, and lists ordered by updated_at order by time. The first open of a
// database written by Python rebuilds wait_index in that form (migration
// 003), adding the WAIT_EVENT timeouts Python does not index. Python
// writes later deadlines as its nodes gave them; the rows in another form
// (an all-zero fraction included) are listed through a partial index
// (migrations 015, 020) and compared by their parsed times.
//
// # Cancellation
//
// A context ends a wait for the writer or a read in progress; once a write
// transaction has begun it runs to its end (a few statements), so that
// writes are never left half-done by a cancelled caller.
package sqlite
