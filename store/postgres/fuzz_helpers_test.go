package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/abstractframework/abstractgateway/internal/testlog"
	"github.com/abstractframework/abstractgateway/store/postgres"
)

// pfFuzzEnv is what one fuzz process shares between its execs: a schema of
// its own (prefix fuzz_, dropped when the fuzz target ends), a Store on
// it logging to logs, and a plain connection for the foreign writer.
type pfFuzzEnv struct {
	schema string
	st     *postgres.Store
	logs   *testlog.Recorder
	raw    *pgx.Conn
}

// pfFuzzSetup sets the environment up lazily, in the first exec (the
// coordinator process of a fuzz run never runs the fuzz function, so it
// creates nothing). It skips, with the package's skip message, when
// TEST_POSTGRES_URL is unset.
func pfFuzzSetup(f *testing.F) func(t *testing.T) *pfFuzzEnv {
	url := testURL(f)
	var (
		once sync.Once
		env  *pfFuzzEnv
		err  error
	)
	f.Cleanup(func() {
		if env == nil {
			return
		}
		if env.raw != nil {
			_ = env.raw.Close(context.Background())
		}
		if env.st != nil {
			_ = env.st.Close()
		}
		if derr := postgres.DropSchema(context.Background(), url, env.schema); derr != nil {
			f.Error(derr)
		}
	})
	return func(t *testing.T) *pfFuzzEnv {
		once.Do(func() {
			var b [8]byte
			_, _ = rand.Read(b[:])
			env = &pfFuzzEnv{schema: "fuzz_" + hex.EncodeToString(b[:]), logs: &testlog.Recorder{}}
			ctx := context.Background()
			env.st, err = postgres.New(ctx, postgres.Config{URL: url, Schema: env.schema,
				Logger: slog.New(env.logs), MaxConns: 3})
			if err != nil {
				return
			}
			env.raw, err = pgx.Connect(ctx, url)
		})
		if err != nil {
			t.Fatalf("fuzz setup: %v", err)
		}
		return env
	}
}

// table is the schema-qualified name of one of the store's tables.
func (e *pfFuzzEnv) table(name string) string { return pgx.Identifier{e.schema, name}.Sanitize() }

// exec runs q on the foreign writer's connection.
func (e *pfFuzzEnv) exec(t *testing.T, ctx context.Context, q string, args ...any) int64 {
	t.Helper()
	tag, err := e.raw.Exec(ctx, q, args...)
	if err != nil {
		t.Fatalf("foreign writer: %s: %v", q, err)
	}
	return tag.RowsAffected()
}

// wipe empties the store's tables (the schema is this fuzz process's own
// and execs run one at a time), so the database does not grow.
func (e *pfFuzzEnv) wipe(t *testing.T) {
	for _, tb := range []string{"runs", "ledger", "commands", "command_cursors", "run_claims"} {
		if _, err := e.raw.Exec(context.Background(), "DELETE FROM "+e.table(tb)); err != nil {
			t.Errorf("wiping %s: %v", tb, err)
		}
	}
}

// pgText is s as a foreign writer can store it in a text column: PostgreSQL
// refuses NUL and bytes that are not UTF-8.
func pgText(s string) string {
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "\uFFFD")
}
