package store_test

import (
	"reflect"
	"testing"

	"github.com/abstractframework/abstractgateway/store"
)

// The run index's lifecycle
// keeps retention.ttl_s when Python's int(raw) reads a positive number
// (AbstractRuntime core/run_lifecycle.py sanitize_run_lifecycle:
// `number = int(raw)` then `if number > 0`). Python's int() of a string
// takes underscores between digits ("86_400" is 86400) and Unicode decimal
// digits ("３６００" is 3600), as pyval.ToInt implements it; store/convert.go
// positiveInt read a string with strconv.ParseInt, which refused both, so
// every store's RunIndex dropped a ttl_s that Python's list_run_index keeps
// (and a retention that held only it).
func TestLifecycleTTLReadAsPythonInt(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]int64{"86_400": 86400, "３６００": 3600} {
		got := store.RunLifecycle(map[string]any{store.RunLifecycleKey: map[string]any{
			"retention": map[string]any{"ttl_s": raw}}})
		w := map[string]any{"retention": map[string]any{"ttl_s": want}}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("ttl_s %q: lifecycle = %#v, want %#v (Python int(%q) = %d)", raw, got, w, raw, want)
		}
	}
}
