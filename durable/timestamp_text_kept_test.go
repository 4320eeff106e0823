package durable_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// pyRoundTripRun reads Go-written run text the way AbstractRuntime 0.4.28's
// JsonFileRunStore._load_from_path does and writes it back as save does.
func pyRoundTripRun(t *testing.T, text string) string {
	t.Helper()
	src := os.Getenv("PEER_SRC")
	if src == "" {
		src = "/work/peer/src"
	}
	if _, err := os.Stat(filepath.Join(src, "abstractruntime", "storage", "json_files.py")); err != nil {
		t.Skipf("the Python AbstractRuntime source is not at %s (set PEER_SRC): %v", src, err)
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "run_x.json"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `
import sys, json, importlib.util, types
from dataclasses import asdict
root = sys.argv[2] + "/abstractruntime"
pkg = types.ModuleType("abstractruntime"); pkg.__path__ = [root]; sys.modules["abstractruntime"] = pkg
for sub in ("core", "storage"):
    m = types.ModuleType("abstractruntime." + sub); m.__path__ = [root + "/" + sub]; sys.modules["abstractruntime." + sub] = m
import abstractruntime.core.models as models
import abstractruntime.storage.json_files as jf
st = jf.JsonFileRunStore(sys.argv[1])
run = st.load("x")
sys.stdout.write(json.dumps(asdict(run), ensure_ascii=False, indent=2))
`
	out, err := exec.Command(py, "-c", script, dir, src).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	return string(out)
}

// TestRunTimestampTextIsKeptAsRead: AbstractRuntime 0.4.28's
// JsonFileRunStore._load_from_path (storage/json_files.py) reads
// created_at/updated_at with data.get(...) and keeps whatever string is
// there; save writes it back unchanged (asdict). So a run whose
// created_at is text that is no ISO time (written by another writer, a
// hand edit, a JS toUTCString()) loads, resumes and is cancellable in
// Python. Here too the run reads (CreatedAt zero) and writes the text
// back, as the record's started_at/ended_at and the wait's until do: a
// run must never become unreadable.
func TestRunTimestampTextIsKeptAsRead(t *testing.T) {
	in := `{
  "run_id": "x",
  "workflow_id": "wf",
  "status": "running",
  "current_node": "n",
  "vars": {},
  "waiting": null,
  "output": null,
  "error": null,
  "created_at": "Thu, 01 Jan 2026 10:00:00 GMT",
  "updated_at": "2026-01-01T10:00:00+00:00",
  "actor_id": null,
  "session_id": null,
  "parent_run_id": null
}`
	want := pyRoundTripRun(t, in) // Python reads it and writes it back as given
	if strings.TrimSpace(want) != strings.TrimSpace(in) {
		t.Fatalf("Python does not write the run back unchanged:\n%s", want)
	}
	r, err := durable.UnmarshalRun([]byte(in))
	if err != nil {
		t.Fatalf("a run Python loads is unreadable here: %v", err)
	}
	b, err := durable.MarshalRun(r, pyjson.Pretty)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(b)) != strings.TrimSpace(want) {
		t.Errorf("written back:\n%s\nPython writes:\n%s", b, want)
	}
}

// TestSnapshotTimestampTextIsKeptAsRead: AbstractRuntime's
// storage/snapshots.py JsonSnapshotStore.load/list build the Snapshot
// with created_at=data.get("created_at") or utc_now_iso() (same for
// updated_at): any non-empty string is kept and written back by save
// (asdict). Here too the snapshot reads and writes the text back.
func TestSnapshotTimestampTextIsKeptAsRead(t *testing.T) {
	m := map[string]any{
		"snapshot_id": "s1", "run_id": "r1", "step_id": nil, "name": "n", "description": nil,
		"tags": []any{}, "created_at": "Thu, 01 Jan 2026 10:00:00 GMT",
		"updated_at": "2026-01-01T10:00:00+00:00", "run_state": map[string]any{},
	}
	s, err := durable.SnapshotFromJSON(m)
	if err != nil {
		t.Fatalf("a snapshot Python loads is unreadable here: %v", err)
	}
	b, err := pyjson.Marshal(s.JSONValue(), pyjson.Style{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"created_at": "Thu, 01 Jan 2026 10:00:00 GMT"`) {
		t.Errorf("created_at not written back as read: %s", b)
	}
}

// TestRunTimestampTextEncodersAndCopies: both encoders of a run, and the
// copies a store keeps, write the text while the Time stays zero; once a
// commit assigns UpdatedAt, the time is written and CreatedAt keeps its
// text.
func TestRunTimestampTextEncodersAndCopies(t *testing.T) {
	const text = "Thu, 01 Jan 2026 10:00:00 GMT"
	in := `{"run_id": "x", "workflow_id": "wf", "status": "running", "current_node": "n", "vars": {},
		"created_at": "` + text + `", "updated_at": "not a time"}`
	r, err := durable.UnmarshalRun([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if !r.CreatedAt.IsZero() || !r.UpdatedAt.IsZero() {
		t.Fatalf("times read from text: %v %v", r.CreatedAt, r.UpdatedAt)
	}
	stored, err := r.StoredCopy()
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*durable.RunState{"run": r, "Clone": r.Clone(), "StoredCopy": stored} {
		for _, st := range []pyjson.Style{pyjson.Line, pyjson.Pretty, {}} {
			b, err := durable.MarshalRun(c, st)
			if err != nil {
				t.Fatal(err)
			}
			back, err := durable.UnmarshalRun(b)
			if err != nil {
				t.Fatalf("%s: written run unreadable: %v", name, err)
			}
			v := back.JSONValue()
			if got := member(v, "created_at"); got != text {
				t.Errorf("%s %v: created_at %v, want %q", name, st, got, text)
			}
			if got := member(v, "updated_at"); got != "not a time" {
				t.Errorf("%s %v: updated_at %v, want the text read", name, st, got)
			}
		}
	}

	now := durable.NewTime(time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC))
	r.UpdatedAt = now // as a commit does
	stored, err = r.StoredCopy()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []*durable.RunState{r, stored} {
		b, err := durable.MarshalRun(c, pyjson.Line)
		if err != nil {
			t.Fatal(err)
		}
		if s := string(b); !strings.Contains(s, `"updated_at": "2026-02-03T04:05:06+00:00"`) ||
			!strings.Contains(s, `"created_at": "`+text+`"`) {
			t.Errorf("after a commit: %s", s)
		}
	}
	if v := stored.JSONValue(); member(v, "updated_at") != "2026-02-03T04:05:06+00:00" {
		t.Errorf("StoredCopy after a commit: updated_at %v", member(v, "updated_at"))
	}
}

func member(o pyjson.Ordered, k string) any {
	for _, m := range o {
		if m.Key == k {
			return m.Value
		}
	}
	return nil
}
