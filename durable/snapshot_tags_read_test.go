package durable_test

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// Python's JsonSnapshotStore.load reads tags=list(data.get("tags") or [])
// and save writes them back with asdict: every element is kept. Tags
// holds the strings (what a tag filter matches), and a snapshot loaded and
// saved again writes the list as read until Tags is changed.
func TestSnapshotNonStringTagsKeptOnRewrite(t *testing.T) {
	t.Parallel()
	m, err := pyjson.DecodeObject([]byte(`{"snapshot_id": "s", "run_id": "r", "step_id": null, "name": "n", "description": null, "tags": ["a", 2, null, "b"], "created_at": "2026-01-01T00:00:00+00:00", "updated_at": "2026-01-01T00:00:00+00:00", "run_state": {}}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := durable.SnapshotFromJSON(m)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tags) != 2 || s.Tags[0] != "a" || s.Tags[1] != "b" {
		t.Errorf("Tags = %q, want [a b]", s.Tags)
	}
	m["tags"].([]any)[1] = 3 // the caller's map is not kept
	c := *s
	got, err := pyjson.Marshal(c.JSONValue(), pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"tags": ["a", 2, null, "b"]`) {
		t.Errorf("tags lost on rewrite: %s", got)
	}
	s.Tags = append(s.Tags, "c")
	got, err = pyjson.Marshal(s.JSONValue(), pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"tags": ["a", "b", "c"]`) {
		t.Errorf("tags set: %s", got)
	}
}

// Tags a caller replaces with as many other strings replace the list read
// with non-string elements: tagsRead is written only while Tags still
// holds its strings, in order. Would break: rawTags comparing the count
// of strings alone, writing the old tags back over the new ones.
func TestSnapshotTagsReplacedOverNonStringReadAreWritten(t *testing.T) {
	t.Parallel()
	m, err := pyjson.DecodeObject([]byte(`{"snapshot_id": "s", "run_id": "r", "tags": ["a", 2, "b"]}`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := durable.SnapshotFromJSON(m)
	if err != nil {
		t.Fatal(err)
	}
	s.Tags = []string{"x", "y"}
	got, err := pyjson.Marshal(s.JSONValue(), pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"tags": ["x", "y"]`) {
		t.Errorf("tags replaced with as many strings not written: %s", got)
	}
}
