package jsonfile_test

import (
	"log/slog"
	"testing"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

// testLogger routes the store's logs to t.Log.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

func open(t testing.TB, dir string, noSync bool) *jsonfile.Store {
	t.Helper()
	s, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: noSync, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("jsonfile.New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, t.TempDir(), true) })
}

func TestStoreSynced(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("fsync on every write is slow")
	}
	storetest.Run(t, func(t *testing.T) store.Store { return open(t, t.TempDir(), false) })
}

func BenchmarkStore(b *testing.B) {
	b.Run("NoSync", func(b *testing.B) {
		storetest.Bench(b, func(b *testing.B) store.Store { return open(b, b.TempDir(), true) })
	})
	b.Run("Sync", func(b *testing.B) {
		storetest.Bench(b, func(b *testing.B) store.Store { return open(b, b.TempDir(), false) })
	})
}
