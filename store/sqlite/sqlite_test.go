package sqlite_test

import (
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/sqlite"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

// testLogger routes the store's logs to t.Log.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

// open opens a store on path and closes it when the test ends.
func open(t testing.TB, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.New(t.Context(), sqlite.Config{Path: path, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("New(%s): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		return open(t, filepath.Join(t.TempDir(), "runtime.sqlite3"))
	})
}

func BenchmarkStore(b *testing.B) {
	for _, sync := range []string{"NORMAL", "FULL"} {
		b.Run(sync, func(b *testing.B) {
			storetest.Bench(b, func(b *testing.B) store.Store {
				s, err := sqlite.New(b.Context(), sqlite.Config{
					Path: filepath.Join(b.TempDir(), "runtime.sqlite3"), Synchronous: sync})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = s.Close() })
				return s
			})
		})
	}
}
