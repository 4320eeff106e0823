package benchwork

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/postgres"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// Store kinds, as named on the command line and in the JSON lines.
const (
	// StoreMemory is the in-process store (no durability).
	StoreMemory = "memory"
	// StoreJSON is the JSON-file store without fsync, as Python's
	// JsonFileRunStore + JsonlLedgerStore (process-crash safe only).
	StoreJSON = "json"
	// StoreJSONFsync is the JSON-file store with its default fsyncs (file
	// and directory after every write). Not part of the Python set.
	StoreJSONFsync = "json_fsync"
	// StoreSQLite is SQLite in WAL mode with synchronous=NORMAL, Python's
	// default.
	StoreSQLite = "sqlite"
	// StoreSQLiteFull is SQLite in WAL mode with synchronous=FULL: an
	// fsync per commit.
	StoreSQLiteFull = "sqlite_full"
	// StoreSQLiteShared is StoreSQLite opened shared (sqlite.Config.Shared),
	// as Python opens its database: no exclusive lock, a reader pool, no
	// cache. Not part of the Python set; it shows what owning the file
	// buys.
	StoreSQLiteShared = "sqlite_shared"
	// StorePostgres is the PostgreSQL store on the database named by
	// $AGW_BENCH_POSTGRES_URL, in a fresh schema per store (dropped at
	// Close). Durability is the server's (synchronous_commit). Not part of
	// the Python set.
	StorePostgres = "postgres"
)

// PostgresURLEnv names the variable giving the postgres store's database.
const PostgresURLEnv = "AGW_BENCH_POSTGRES_URL"

// StoreKinds lists every store kind, the default set first.
var StoreKinds = []string{StoreMemory, StoreJSON, StoreSQLite, StoreSQLiteFull, StoreJSONFsync, StoreSQLiteShared, StorePostgres}

// DefaultStores is the set the Python peer measures.
var DefaultStores = []string{StoreMemory, StoreJSON, StoreSQLite, StoreSQLiteFull}

// ValidStore reports whether kind is a known store kind.
func ValidStore(kind string) bool { return slices.Contains(StoreKinds, kind) }

// Fsync reports whether a store kind syncs every commit to the disk.
func Fsync(kind string) bool { return kind == StoreJSONFsync || kind == StoreSQLiteFull }

// OpenStore opens a fresh store of the given kind in dir (which must be
// empty or absent; memory ignores it).
func OpenStore(ctx context.Context, kind, dir string) (store.Store, error) {
	switch kind {
	case StoreMemory:
		return memory.New(), nil
	case StoreJSON, StoreJSONFsync:
		st, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: kind == StoreJSON})
		if err != nil {
			return nil, fmt.Errorf("opening %s store in %s: %w", kind, dir, err)
		}
		return st, nil
	case StoreSQLite, StoreSQLiteFull, StoreSQLiteShared:
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("creating %s: %w", dir, err)
		}
		sync := "NORMAL"
		if kind == StoreSQLiteFull {
			sync = "FULL"
		}
		st, err := sqlite.New(ctx, sqlite.Config{Path: filepath.Join(dir, "runtime.sqlite3"), Synchronous: sync,
			Shared: kind == StoreSQLiteShared})
		if err != nil {
			return nil, fmt.Errorf("opening %s store in %s: %w", kind, dir, err)
		}
		return st, nil
	case StorePostgres:
		return openPostgres(ctx)
	}
	return nil, fmt.Errorf("unknown store kind %q (want one of %v)", kind, StoreKinds)
}

// openPostgres opens a PostgreSQL store in a fresh schema of the bench
// database; Close drops the schema.
func openPostgres(ctx context.Context) (store.Store, error) {
	url := os.Getenv(PostgresURLEnv)
	if url == "" {
		return nil, fmt.Errorf("the postgres store needs $%s: a database the bench may create and drop schemas in", PostgresURLEnv)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "agw_bench_" + hex.EncodeToString(b[:])
	st, err := postgres.New(ctx, postgres.Config{URL: url, Schema: schema})
	if err != nil {
		return nil, fmt.Errorf("opening the postgres store: %w", err)
	}
	return &droppedAtClose{Store: st, url: url, schema: schema}, nil
}

// droppedAtClose is a PostgreSQL store whose schema Close drops.
type droppedAtClose struct {
	*postgres.Store
	url, schema string
}

func (d *droppedAtClose) Close() error {
	err := d.Store.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return errors.Join(err, postgres.DropSchema(ctx, d.url, d.schema))
}

// Env is one store instance with the runtime and scheduler that drive it:
// what a workload runs on. Steps counts node executions of the bench
// workflows run through it.
type Env struct {
	Kind      string
	Store     *Counting
	Runtime   *runtime.Runtime
	Scheduler *scheduler.Scheduler
	steps     atomic.Int64
}

// NewEnv opens a store of the given kind in dir and builds a Runtime
// (default configuration, the bench workflows registered) and a
// Scheduler (batch size 100) over it.
func NewEnv(ctx context.Context, kind, dir string) (*Env, error) {
	st, err := OpenStore(ctx, kind, dir)
	if err != nil {
		return nil, err
	}
	return envOn(kind, st)
}

// envOn builds an Env over st, which it closes on error.
func envOn(kind string, st store.Store) (*Env, error) {
	wrapped, counting := Wrap(st)
	e := &Env{Kind: kind, Store: counting}
	reg, err := runtime.NewRegistry(Workflows(&e.steps)...)
	if err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("registering the bench workflows: %w", err)
	}
	if e.Runtime, err = runtime.New(runtime.Config{Store: wrapped, Registry: reg}); err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("creating the runtime: %w", err)
	}
	if e.Scheduler, err = scheduler.New(scheduler.Config{Runtime: e.Runtime, BatchSize: 100}); err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("creating the scheduler: %w", err)
	}
	return e, nil
}

// Steps returns the node executions so far.
func (e *Env) Steps() int64 { return e.steps.Load() }

// Close closes the store.
func (e *Env) Close() error { return e.Store.Close() }
