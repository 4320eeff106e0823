package store_test

// Differential tests: store.RunLifecycle (the run_lifecycle
// member of index rows) against Python's
// abstractruntime.core.run_lifecycle.sanitize_run_lifecycle, as
// list_run_index returns it on every Python store.

import (
	"reflect"
	"testing"

	"github.com/abstractframework/abstractgateway/store"
)

// Python sanitize_run_lifecycle reads retention.ttl_s with int(raw), so a
// numeric string counts: a run saved with
// vars={"_run_lifecycle": {"source": "x", "retention": {"ttl_s": "3600"}}}
// was listed by InMemoryRunStore / JsonFileRunStore / SqliteRunStore
// .list_run_index() with
// 'run_lifecycle': {'source': 'x', 'retention': {'ttl_s': 3600}}.
func TestDiffStoreLifecycleTTLFromNumericString(t *testing.T) {
	got := store.RunLifecycle(map[string]any{store.RunLifecycleKey: map[string]any{
		"source":    "x",
		"retention": map[string]any{"ttl_s": "3600"},
	}})
	want := map[string]any{"source": "x", "retention": map[string]any{"ttl_s": int64(3600)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RunLifecycle with ttl_s \"3600\": got %#v, Python list_run_index gives %#v", got, want)
	}
}
