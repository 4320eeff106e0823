package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/abstractframework/abstractgateway/store"
)

// Config configures a Store.
type Config struct {
	// URL is the connection string (postgres://user@host:port/db?…, or
	// the key=value form). Required.
	URL string
	// Schema holds the store's tables; it is created when missing.
	// Default "public".
	Schema string
	// Logger receives the store's few log lines (migrations applied,
	// unreadable rows skipped). Nil discards them.
	Logger *slog.Logger
	// MaxConns caps the connection pool; 0 keeps pgxpool's default
	// (the larger of 4 and the number of CPUs).
	MaxConns int32
	// NotifyAppends makes every ledger append, and every delete of a
	// ledger that has records, send a notification, so that followers in
	// other processes (ListenLedger, observe.Follow) learn of it as it
	// commits. Off by default: PostgreSQL serialises
	// the commits that notify (a lock held through the commit's flush),
	// which caps the commit rate of many runners; set it on every runner
	// of a deployment whose gateways stream ledgers.
	NotifyAppends bool
	// WriteTimeout bounds a write once it has begun (lock waits
	// included); past it the store asks the server to cancel the write
	// and reports the server's answer, so a write reported failed never
	// commits later. It also bounds how long the server keeps a
	// transaction of ours whose client went silent between statements
	// (idle_in_transaction_session_timeout, unless the URL sets it).
	// 0 means 30 s.
	WriteTimeout time.Duration
	// ListenHeartbeat is how long a ledger listener's connection
	// (ListenLedger) may stay silent before the listener pings the
	// server; a ping unanswered within the same time ends the listening
	// with an error, so that observe.Follow connects again. Without it a
	// network path that drops packets silently would leave followers
	// unwoken until TCP gives up on the connection, which with pgx's
	// keep-alive settings takes most of an hour. 0 means 30 s.
	ListenHeartbeat time.Duration
}

// Store is the PostgreSQL store. Create it with New; it is safe for
// concurrent use, and several Stores (in several processes) may share one
// database and schema.
type Store struct {
	pool         *pgxpool.Pool
	schema       string
	writeTimeout time.Duration
	origin       string        // this Store value in append notifications (listen.go)
	notify       bool          // Config.NotifyAppends
	heartbeat    time.Duration // Config.ListenHeartbeat
	log          *slog.Logger

	closeOnce sync.Once
}

var (
	_ store.Store           = (*Store)(nil)
	_ store.AtomicCommitter = (*Store)(nil)
	_ store.LedgerFinder    = (*Store)(nil)
	_ store.RunClaimer      = (*Store)(nil)
	_ store.LedgerListener  = (*Store)(nil)
)

// New connects to cfg.URL, creates cfg.Schema when missing and applies
// the pending migrations.
func New(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.URL == "" {
		return nil, errors.New("postgres: config: url is required")
	}
	if cfg.MaxConns < 0 {
		return nil, fmt.Errorf("postgres: config: max conns %d is negative", cfg.MaxConns)
	}
	schema := cmp.Or(cfg.Schema, "public")
	pcfg, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("postgres: config: parsing url: %w", err)
	}
	if cfg.MaxConns > 0 {
		pcfg.MaxConns = cfg.MaxConns
	}
	// Every connection resolves the unqualified table names in schema.
	pcfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{schema}.Sanitize()
	// A context that ends during a statement asks the server to cancel
	// it and waits for the server's answer (pgx's default closes the
	// connection at once). The server may have the whole of a write, its
	// commit included, and would commit it after the client gave up:
	// waiting makes the reported outcome the true one (a statement still
	// waiting on a lock fails with 57014 and the write rolls back), and
	// keeps the connection. The connection is dropped only when the
	// server does not answer within cancelAnswerWait.
	pcfg.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: cancelAnswerWait}
	}
	// Every transaction of ours runs at READ COMMITTED, whatever the
	// database, the role or the URL defaults to: the version checks, the
	// ledger's MAX(seq)+1 and the migration lock count on each statement
	// seeing what committed before it. Under REPEATABLE READ or
	// SERIALIZABLE a lost race would fail with a serialization error
	// instead of store.ErrConflict, and a second opener would fail on the
	// schema the first created. A startup parameter outranks database and
	// role defaults and also covers the pipelined batches, which cannot
	// say BEGIN ISOLATION LEVEL.
	pcfg.ConnConfig.RuntimeParams["default_transaction_isolation"] = "read committed"
	writeTimeout := cmp.Or(cfg.WriteTimeout, defaultWriteTimeout)
	// A transaction of ours never waits on its client for long between
	// statements. One whose client stopped answering (its machine lost,
	// the process frozen) would otherwise keep its locks, the command
	// inbox's counter among them, until TCP gives up on the connection,
	// hours later; the server ends it after the write bound instead. A
	// URL that sets the parameter keeps its own value.
	if _, set := pcfg.ConnConfig.RuntimeParams[idleInTxParam]; !set {
		pcfg.ConnConfig.RuntimeParams[idleInTxParam] = strconv.FormatInt(writeTimeout.Milliseconds(), 10)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Store{schema: schema, writeTimeout: writeTimeout, origin: newOrigin(), notify: cfg.NotifyAppends, heartbeat: cmp.Or(cfg.ListenHeartbeat, defaultListenHeartbeat), log: log.With("component", "store/postgres", "schema", schema)}
	if s.pool, err = pgxpool.NewWithConfig(ctx, pcfg); err != nil {
		return nil, fmt.Errorf("postgres: connecting: %w", err)
	}
	if err := s.migrate(ctx); err != nil {
		s.pool.Close()
		return nil, fmt.Errorf("postgres: migrating schema %s: %w", schema, err)
	}
	return s, nil
}

// Schema returns the schema holding the store's tables.
func (s *Store) Schema() string { return s.schema }

// AtomicCommit reports that RunCommit writes records and state in one
// transaction.
func (s *Store) AtomicCommit() bool { return true }

// Close closes the pool, waiting for the connections in use to be
// returned. It is safe to call twice.
func (s *Store) Close() error {
	s.closeOnce.Do(s.pool.Close)
	return nil
}

// defaultWriteTimeout bounds a write once it has begun (see writing):
// long enough for any lock wait a commit meets, short enough that a
// server that stopped answering does not hold a caller for ever.
const defaultWriteTimeout = 30 * time.Second

// defaultListenHeartbeat is Config.ListenHeartbeat's default: well under
// the minutes a silent loss could otherwise last, and one empty statement
// per listener per half minute costs the server nothing.
const defaultListenHeartbeat = 30 * time.Second

// cancelAnswerWait is how long a statement whose context ended waits for
// the server's answer to the cancel request before the connection is
// dropped.
const cancelAnswerWait = 10 * time.Second

// writing returns the context a write runs under. The caller's
// cancellation counts only until the write begins: PostgreSQL commits a
// transaction whose commit it has received even when the client gives up
// on it (pgx then drops the connection and reports the cancellation), so
// a write abandoned midway could report a failure and take effect a
// moment later, after the caller acted on the failure (a cancelled
// parent's listing of its children missed a child created that way).
// Waiting for the server's answer keeps every write's reported outcome
// true; the SQLite store does the same once it has its writer turn. The
// write's own bound (Config.WriteTimeout, counted from the call) cancels
// it on the server, and the server's answer is what is reported (see
// New). It returns the pool connection the write runs on, the context to
// run it under, and the function that ends both.
func (s *Store) writing(ctx context.Context) (*pgxpool.Conn, context.Context, func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, err
	}
	deadline := time.Now().Add(s.writeTimeout)
	// Waiting for a connection is before the write begins: the caller's
	// cancellation still counts (a runner shutting down with every
	// connection busy).
	actx, acancel := context.WithDeadline(ctx, deadline)
	conn, err := s.pool.Acquire(actx)
	acancel()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("waiting for a connection: %w", err)
	}
	wctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	return conn, wctx, func() { cancel(); conn.Release() }, nil
}

// inTx runs fn in one READ COMMITTED transaction and commits it, or rolls
// it back when fn fails.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, fn)
}

// idleInTxParam is the server setting that ends a transaction whose client
// has sent nothing for that many milliseconds.
const idleInTxParam = "idle_in_transaction_session_timeout"

// lock names a transaction-level advisory lock: a kind ("migrate",
// "ledger", "commands") scoped to the store's schema, so stores in other
// schemas do not wait on each other, and a name within it (a run id).
type lock struct{ space, name string }

func (s *Store) lockOn(kind, name string) lock {
	return lock{space: s.schema + "/" + kind, name: name}
}

// advisoryLockSQL takes a lock until the transaction commits or rolls
// back. The two 32-bit keys are hashes, so distinct locks may collide:
// that only makes unrelated writers wait for each other.
const advisoryLockSQL = `SELECT pg_advisory_xact_lock(hashtext($1), hashtext($2))`

// advisoryLock takes l until tx commits or rolls back.
func advisoryLock(ctx context.Context, tx pgx.Tx, l lock) error {
	if _, err := tx.Exec(ctx, advisoryLockSQL, l.space, l.name); err != nil {
		return fmt.Errorf("advisory lock: %w", err)
	}
	return nil
}

// nullString maps "" to SQL NULL.
func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// DropSchema removes schema and everything in it (the tables of a Store
// whose Config.Schema it was) from the database at url. Tests use it to
// clean up; it is also how a deployment's data is torn down.
func DropSchema(ctx context.Context, url, schema string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("postgres: dropping schema %s: %w", schema, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		return fmt.Errorf("postgres: dropping schema %s: %w", schema, err)
	}
	return nil
}
