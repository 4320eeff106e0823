package snapshot_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/snapshot"
)

// TestMemoryStoreKeepsItsOwnCopyOfTypedContainers checks the promise
// of snapshot.Store (snapshot.go): Save — "The store keeps its own copy";
// Load — "returns a private copy of a snapshot"; MemoryStore — "an
// in-process Store keeping deep copies".
//
// clone copies the RunState with pyjson.CloneObject, which copies
// map[string]any and []any only: a typed Go container in the run state
// ([]string, map[string]string, as Go code puts in vars) is shared
// between the caller and the store. A caller changing it after Save
// changes the saved snapshot, and a caller changing a loaded snapshot
// changes what the next Load returns. The JSON store keeps the value as
// saved.
func TestMemoryStoreKeepsItsOwnCopyOfTypedContainers(t *testing.T) {
	ctx := context.Background()
	st := snapshot.NewMemory()
	list := []string{"saved"}
	tags := map[string]string{"k": "saved"}
	s := &durable.Snapshot{SnapshotID: "s1", RunID: "r",
		RunState: map[string]any{"vars": map[string]any{"list": list, "tags": tags}}}
	if err := st.Save(ctx, s); err != nil {
		t.Fatal(err)
	}
	list[0] = "changed after save"
	tags["k"] = "changed after save"
	got, err := st.Load(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if v := textOf(got.RunState, "list"); v != "saved" {
		t.Errorf("after the caller changed its []string, the saved snapshot's list holds %q", v)
	}
	if v := textOf(got.RunState, "tags"); v != "saved" {
		t.Errorf("after the caller changed its map[string]string, the saved snapshot's map holds %q", v)
	}

	// A loaded snapshot is the caller's: changing it must not reach the store.
	again := &durable.Snapshot{SnapshotID: "s2", RunID: "r",
		RunState: map[string]any{"vars": map[string]any{"list": []string{"saved"}}}}
	if err := st.Save(ctx, again); err != nil {
		t.Fatal(err)
	}
	loaded, err := st.Load(ctx, "s2")
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := loaded.RunState["vars"].(map[string]any)["list"].([]string); ok {
		l[0] = "changed in a loaded copy"
	} else if l, ok := loaded.RunState["vars"].(map[string]any)["list"].([]any); ok {
		l[0] = "changed in a loaded copy"
	}
	reloaded, err := st.Load(ctx, "s2")
	if err != nil {
		t.Fatal(err)
	}
	if v := textOf(reloaded.RunState, "list"); v != "saved" {
		t.Errorf("after a caller changed a loaded snapshot, Load returns list %q", v)
	}
}

// textOf returns the first string of vars[key], a list or an object of
// strings in whatever Go type the store returns it.
func textOf(state map[string]any, key string) string {
	v := reflect.ValueOf(state["vars"].(map[string]any)[key])
	switch v.Kind() {
	case reflect.Slice:
		if v.Len() > 0 {
			return reflect.ValueOf(v.Index(0).Interface()).String()
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			return reflect.ValueOf(v.MapIndex(k).Interface()).String()
		}
	}
	return ""
}
