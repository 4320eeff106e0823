package e2etest_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/e2etest"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/offload"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

func TestMemory(t *testing.T) {
	t.Parallel()
	e2etest.Run(t, func(t *testing.T) store.Store { return memory.New() })
}

func TestMemoryHashChained(t *testing.T) {
	t.Parallel()
	e2etest.Run(t, func(t *testing.T) store.Store { return hashchain.Wrap(memory.New()) })
}

func TestJSONFile(t *testing.T) {
	t.Parallel()
	e2etest.Run(t, func(t *testing.T) store.Store {
		st, err := jsonfile.New(jsonfile.Config{Dir: t.TempDir(), NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	})
}

// openSQLite is the e2e factory of SQLite stores with cfg (Path set
// here), closed when the test ends.
func openSQLite(t *testing.T, cfg sqlite.Config) *sqlite.Store {
	cfg.Path = filepath.Join(t.TempDir(), "db.sqlite3")
	st, err := sqlite.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestSQLite(t *testing.T) {
	t.Parallel()
	e2etest.Run(t, func(t *testing.T) store.Store { return openSQLite(t, sqlite.Config{}) })
}

// TestSQLiteShared runs the scenarios on a store that lets other
// processes at its file (no cache, the list columns copied in the same
// transaction).
func TestSQLiteShared(t *testing.T) {
	t.Parallel()
	e2etest.Run(t, func(t *testing.T) store.Store { return openSQLite(t, sqlite.Config{Shared: true}) })
}

// TestSQLiteDecorated runs the scenarios through the decorator stack a
// gateway uses: subscriptions over offloading over a hash chain over
// SQLite (nothing in them is large enough to offload: the stack must
// pass claims, atomic commits and look-ups through).
func TestSQLiteDecorated(t *testing.T) {
	t.Parallel()
	e2etest.Run(t, func(t *testing.T) store.Store {
		st := openSQLite(t, sqlite.Config{})
		return observe.Wrap(offload.Wrap(hashchain.Wrap(st), artifact.NewMemory(), offload.Config{}))
	})
}
