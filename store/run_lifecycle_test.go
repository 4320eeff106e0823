package store_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/store"
)

func lifecycle(ret map[string]any) map[string]any {
	return store.RunLifecycle(map[string]any{store.RunLifecycleKey: map[string]any{"retention": ret}})
}

// TestRunLifecycleKeepsOnlyPositiveTTL guards "a retention object with a
// positive integer ttl_s" (Python: `if number > 0`): 0 and negatives are
// dropped, and with them an otherwise empty retention.
func TestRunLifecycleKeepsOnlyPositiveTTL(t *testing.T) {
	t.Parallel()
	for _, ttl := range []any{0, "0", -5} {
		if got := lifecycle(map[string]any{"ttl_s": ttl}); got != nil {
			t.Errorf("ttl_s %#v: lifecycle = %v, want nil", ttl, got)
		}
	}
}

// TestRunLifecycleTTLFromPaddedNumericString: Python's int(" 3600 ")
// reads 3600 (int() strips whitespace), so list_run_index keeps ttl_s.
func TestRunLifecycleTTLFromPaddedNumericString(t *testing.T) {
	t.Parallel()
	got := lifecycle(map[string]any{"ttl_s": " 3600\n"})
	want := map[string]any{"retention": map[string]any{"ttl_s": int64(3600)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lifecycle = %#v, want %#v", got, want)
	}
}

// TestRunLifecycleTrimsTo240Characters guards "known string keys trimmed
// to 240 characters" (Python: cleaned[:240], code points, not bytes).
func TestRunLifecycleTrimsTo240Characters(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 241)
	got := store.RunLifecycle(map[string]any{store.RunLifecycleKey: map[string]any{"source": long}})
	if s, _ := got["source"].(string); s != strings.Repeat("é", 240) {
		t.Errorf("source trimmed to %d characters, want 240", len([]rune(s)))
	}
}

// TestRunLifecycleReadsCommittedGoTypes: a lifecycle committed in Go types
// a read never gives (map[string]string, an int32 ttl) is sanitised as its
// read-back form would be, so stores that index what the caller committed
// list what stores indexing what they read back list.
func TestRunLifecycleReadsCommittedGoTypes(t *testing.T) {
	t.Parallel()
	got := store.RunLifecycle(map[string]any{store.RunLifecycleKey: map[string]string{"source": "gateway"}})
	if want := map[string]any{"source": "gateway"}; !reflect.DeepEqual(got, want) {
		t.Errorf("map[string]string lifecycle = %#v, want %#v", got, want)
	}
	got = lifecycle(map[string]any{"ttl_s": int32(60)})
	if want := map[string]any{"retention": map[string]any{"ttl_s": int64(60)}}; !reflect.DeepEqual(got, want) {
		t.Errorf("int32 ttl_s lifecycle = %#v, want %#v", got, want)
	}
}
