package crashtest_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/crashtest"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/store/offload"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

func TestCrashMemory(t *testing.T) {
	t.Parallel()
	crashtest.Run(t, func(t *testing.T) crashtest.Opener {
		st := memory.New() // one "disk" per kill scenario, shared by both lives
		return func(t *testing.T) (store.Store, func()) { return st, func() {} }
	})
}

func TestCrashJSONFile(t *testing.T) {
	t.Parallel()
	crashtest.Run(t, func(t *testing.T) crashtest.Opener {
		dir := t.TempDir()
		return func(t *testing.T) (store.Store, func()) {
			st, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			return st, func() { st.Close() }
		}
	})
}

func TestCrashSQLite(t *testing.T) {
	t.Parallel()
	crashtest.Run(t, func(t *testing.T) crashtest.Opener {
		path := filepath.Join(t.TempDir(), "runtime.sqlite3")
		return func(t *testing.T) (store.Store, func()) {
			st, err := sqlite.New(context.Background(), sqlite.Config{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			return st, func() { st.Close() }
		}
	})
}

// TestCrashDecoratedStack: the decorators of spec §4.10 (observe, offload
// with a small threshold, above the 71-byte creation digest a restart
// compares, hash chain) over SQLite,
// killed at every persistence point like the bare backends.
func TestCrashDecoratedStack(t *testing.T) {
	t.Parallel()
	crashtest.Run(t, func(t *testing.T) crashtest.Opener {
		path := filepath.Join(t.TempDir(), "runtime.sqlite3")
		arts := artifact.NewMemory() // survives the "restart", as the file does
		return func(t *testing.T) (store.Store, func()) {
			st, err := sqlite.New(context.Background(), sqlite.Config{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			stack := observe.Wrap(offload.Wrap(hashchain.Wrap(st), arts, offload.Config{MaxInlineBytes: 100}))
			return stack, func() { st.Close() }
		}
	})
}
