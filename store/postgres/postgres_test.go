package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/crashtest"
	"github.com/abstractframework/abstractgateway/store/e2etest"
	"github.com/abstractframework/abstractgateway/store/postgres"
	"github.com/abstractframework/abstractgateway/store/storetest"
)

// skipMessage says how to enable the tests.
const skipMessage = "set TEST_POSTGRES_URL=postgres://… to run the PostgreSQL store tests; " +
	"CI starts a server with .ci/postgres.sh"

// testURL returns TEST_POSTGRES_URL or skips the test.
func testURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv("TEST_POSTGRES_URL")
	if url == "" {
		t.Skip(skipMessage)
	}
	return url
}

// testSchema creates a fresh schema test_<random> and drops it when the
// test ends.
func testSchema(t testing.TB) string {
	t.Helper()
	url := testURL(t)
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := "test_" + hex.EncodeToString(b[:])
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connecting to TEST_POSTGRES_URL: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("creating schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		if err := postgres.DropSchema(context.Background(), url, schema); err != nil {
			t.Error(err)
		}
	})
	return schema
}

// testLogger routes the store's warnings to t.Log.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// openSchema opens a Store on schema; it is closed when the test ends
// (before the schema is dropped).
func openSchema(t testing.TB, schema string) *postgres.Store {
	t.Helper()
	s, err := postgres.New(t.Context(), postgres.Config{URL: testURL(t), Schema: schema,
		Logger: testLogger(t), MaxConns: 4})
	if err != nil {
		t.Fatalf("New(schema %s): %v", schema, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// newStore is the storetest factory: a Store on a fresh schema.
func newStore(t *testing.T) store.Store {
	return openSchema(t, testSchema(t))
}

func TestStore(t *testing.T) {
	testURL(t)
	t.Parallel()
	storetest.Run(t, newStore)
}

func TestE2E(t *testing.T) {
	testURL(t)
	t.Parallel()
	e2etest.Run(t, newStore)
}

func TestCrash(t *testing.T) {
	testURL(t)
	t.Parallel()
	crashtest.Run(t, func(t *testing.T) crashtest.Opener {
		schema := testSchema(t)
		// Each open is a new Store (a restarted process) on the same schema.
		return func(t *testing.T) (store.Store, func()) {
			s, err := postgres.New(t.Context(), postgres.Config{URL: testURL(t), Schema: schema,
				Logger: testLogger(t), MaxConns: 2})
			if err != nil {
				t.Fatalf("New(schema %s): %v", schema, err)
			}
			return s, func() { _ = s.Close() }
		}
	})
}

func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) store.Store {
		return openSchema(b, testSchema(b))
	})
}
