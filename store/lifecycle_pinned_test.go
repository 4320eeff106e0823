package store_test

import (
	"reflect"
	"testing"

	"github.com/abstractframework/abstractgateway/store"
)

// TestRunLifecycleTTLFloatTruncates: a float ttl_s is read as Python's
// int() reads it, truncated toward zero: 3600.9 keeps 3600, and 0.9 (int
// 0, not positive) is dropped with its otherwise empty retention.
func TestRunLifecycleTTLFloatTruncates(t *testing.T) {
	t.Parallel()
	got := lifecycle(map[string]any{"ttl_s": 3600.9})
	if ret, _ := got["retention"].(map[string]any); ret == nil || ret["ttl_s"] != int64(3600) {
		t.Errorf("ttl_s 3600.9: lifecycle = %v, want retention.ttl_s 3600", got)
	}
	if got := lifecycle(map[string]any{"ttl_s": 0.9}); got != nil {
		t.Errorf("ttl_s 0.9: lifecycle = %v, want nil (int(0.9) is 0)", got)
	}
}

// TestRunLifecycleKeepsEveryKnownKey: the sanitised lifecycle keeps each
// known string key (bundle_version included) and the retention's mode,
// expires_at and ttl_s, as Python's run index lists them.
func TestRunLifecycleKeepsEveryKnownKey(t *testing.T) {
	t.Parallel()
	src := map[string]any{"source": "s", "purpose": "p", "visibility": "v", "run_mode": "m", "editor_session_id": "e",
		"flow_id": "f", "bundle_id": "b", "bundle_version": "1.2",
		"retention": map[string]any{"mode": "ttl", "expires_at": "2030-01-01T00:00:00+00:00", "ttl_s": 60}}
	got := store.RunLifecycle(map[string]any{store.RunLifecycleKey: src})
	want := map[string]any{"source": "s", "purpose": "p", "visibility": "v", "run_mode": "m", "editor_session_id": "e",
		"flow_id": "f", "bundle_id": "b", "bundle_version": "1.2",
		"retention": map[string]any{"mode": "ttl", "expires_at": "2030-01-01T00:00:00+00:00", "ttl_s": int64(60)}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lifecycle = %v, want %v", got, want)
	}
}

// TestRunIndexRootOnlyTreatsBlankParentAsRoot: RootOnly keeps a run whose
// parent id is blank once trimmed, as Python's in-memory and JSON stores
// do, and leaves out one with a real parent.
func TestRunIndexRootOnlyTreatsBlankParentAsRoot(t *testing.T) {
	t.Parallel()
	p := &store.RunIndexParams{RootOnly: true}
	if !p.Matches(&store.RunIndexRow{RunID: "r1", ParentRunID: " \t"}) {
		t.Error("RootOnly left out a run whose parent id is whitespace")
	}
	if p.Matches(&store.RunIndexRow{RunID: "r2", ParentRunID: "p1"}) {
		t.Error("RootOnly kept a child run")
	}
}
