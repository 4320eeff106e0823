package storetest_test

// Differential tests: the same store calls on every backend (memory, JSON
// files, SQLite owned in several cache/redo modes and shared, PostgreSQL
// when TEST_POSTGRES_URL is set), the answers compared with the in-memory
// store's. Memory is the reference: docs/writing-a-store.md gives no
// backend precedence, and memory implements store.Deadline and
// durable.RunState.HostPaused directly.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/postgres"
	"github.com/abstractframework/abstractgateway/store/sqlite"
)

// namedStore is one backend of the comparison.
type namedStore struct {
	name string
	st   store.Store
}

// diffSchemaN numbers the PostgreSQL schemas of one test process.
var diffSchemaN int

// diffBackends opens every backend, each empty, closed at the end of t.
func diffBackends(t *testing.T) []namedStore {
	t.Helper()
	ctx := context.Background()
	var bs []namedStore
	add := func(name string, st store.Store, err error) {
		if err != nil {
			t.Fatalf("open %s: %v", name, err)
		}
		t.Cleanup(func() { _ = st.Close() })
		bs = append(bs, namedStore{name, st})
	}
	add("memory", memory.New(), nil)
	js, err := jsonfile.New(jsonfile.Config{Dir: t.TempDir(), NoSync: true})
	add("jsonfile", js, err)
	js, err = jsonfile.New(jsonfile.Config{Dir: t.TempDir(), NoSync: true, CacheBytes: 1})
	add("jsonfile-tiny-cache", js, err)
	for name, cfg := range map[string]sqlite.Config{
		"sqlite":                  {},
		"sqlite-shared":           {Shared: true},
		"sqlite-tiny-cache":       {CacheBytes: 1},
		"sqlite-no-cache":         {CacheBytes: -1},
		"sqlite-no-redo":          {NoRedoLog: true},
		"sqlite-no-redo-no-cache": {NoRedoLog: true, CacheBytes: -1},
	} {
		cfg.Path = filepath.Join(t.TempDir(), "runtime.sqlite3")
		sq, err := sqlite.New(ctx, cfg)
		add(name, sq, err)
	}
	if url := os.Getenv("TEST_POSTGRES_URL"); url != "" {
		diffSchemaN++
		schema := fmt.Sprintf("agw_diff_%d_%d", os.Getpid(), diffSchemaN)
		pg, err := postgres.New(ctx, postgres.Config{URL: url, Schema: schema, MaxConns: 2})
		t.Cleanup(func() { _ = postgres.DropSchema(context.Background(), url, schema) })
		add("postgres", pg, err)
	}
	return bs
}

// errText names err by the store sentinel it wraps (errClassOf), else by
// its text.
func errText(err error) string {
	if c, ok := errClassOf(err); ok {
		return c
	}
	return "err(" + err.Error() + ")"
}

// errClassOf names err by the store sentinel it wraps; ok is false for an
// error that wraps none.
func errClassOf(err error) (class string, ok bool) {
	switch {
	case err == nil:
		return "ok", true
	case errors.Is(err, store.ErrNotFound):
		return "notfound", true
	case errors.Is(err, store.ErrConflict):
		return "conflict", true
	case errors.Is(err, store.ErrAlreadyExists):
		return "exists", true
	case errors.Is(err, store.ErrInvalidID):
		return "invalidid", true
	case errors.Is(err, store.ErrInvalidCommand):
		return "invalidcmd", true
	}
	return "", false
}

// answers runs f on every backend and returns its answer by backend name.
func answers(bs []namedStore, f func(s store.Store) string) map[string]string {
	out := map[string]string{}
	for _, b := range bs {
		out[b.name] = f(b.st)
	}
	return out
}

// reportDiffering logs every backend's answer and fails t when one
// differs from memory's.
func reportDiffering(t *testing.T, what string, m map[string]string) {
	t.Helper()
	ref := m["memory"]
	var names []string
	differ := false
	for k, v := range m {
		names = append(names, k)
		differ = differ || v != ref
	}
	if !differ {
		return
	}
	sort.Strings(names)
	var sb strings.Builder
	for _, n := range names {
		fmt.Fprintf(&sb, "\n  %-24s %s", n, m[n])
	}
	t.Errorf("backends disagree with memory on %s:%s", what, sb.String())
}

// TestDueWithNonBooleanPauseOnEveryBackend: RunListDue lists the waiting
// runs whose deadline is at or before Now, and store.Deadline keeps a run
// out only when a host paused it, i.e. vars._runtime.control.paused is the
// boolean true (durable.RunState.HostPaused; Python's
// `control.get("paused") is True`). A run whose control.paused is the
// number 1, "true", false or null is due, whatever its other vars hold:
// SQLite's triggers for Python's writes once dropped it from the due index
// when another var held {"paused": true} (migration 019).
func TestDueWithNonBooleanPauseOnEveryBackend(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	bs := diffBackends(t)
	var ids []string
	for i, v := range []any{1, json.Number("1"), 1.0, json.Number("1.0"), "true", false, nil} {
		for _, other := range []bool{false, true} {
			id := fmt.Sprintf("p%d-%v", i, other)
			ids = append(ids, id)
			for _, b := range bs {
				r := &durable.RunState{RunID: id, WorkflowID: "wf", Status: durable.RunWaiting, CurrentNode: "a",
					Waiting:   &durable.WaitState{Reason: durable.WaitUntil, Until: durable.NewTime(t0), ResumeToNode: "x"},
					Vars:      map[string]any{"_runtime": map[string]any{"control": map[string]any{"paused": v}}},
					CreatedAt: durable.NewTime(t0), UpdatedAt: durable.NewTime(t0)}
				if other {
					r.Vars["player"] = map[string]any{"paused": true}
				}
				if err := b.st.RunCommit(ctx, &store.CommitParams{Run: r, Create: true}); err != nil {
					t.Fatalf("%s: create %s: %v", b.name, id, err)
				}
			}
		}
	}
	m := answers(bs, func(s store.Store) string {
		ds, err := s.RunListDue(ctx, &store.RunListDueParams{Now: t0})
		var xs []string
		for _, d := range ds {
			xs = append(xs, d.RunID)
		}
		next, err2 := s.RunNextDue(ctx)
		return fmt.Sprintf("%s due=%s next=%s %s", errText(err), strings.Join(xs, ","), next.UTC().Format(time.RFC3339), errText(err2))
	})
	if want := "ok due=" + strings.Join(ids, ",") + " next=" + t0.Format(time.RFC3339) + " ok"; m["memory"] != want {
		t.Fatalf("reference (memory) = %s, want %s", m["memory"], want)
	}
	reportDiffering(t, "RunListDue/RunNextDue of runs whose control.paused is not true", m)
}
