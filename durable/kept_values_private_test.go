package durable

import (
	"reflect"
	"testing"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// keptValuesRecord is a record built from the caller's maps, as a foreign
// writer's: a payload that is a list, an unknown effect member, an attempt
// that is a list, all kept as read. It returns the caller's maps too.
func keptValuesRecord(t *testing.T) (*StepRecord, []any, map[string]any, []any) {
	t.Helper()
	payload, meta, attempt := []any{"p0", 1.5}, map[string]any{"k": "v"}, []any{2, map[string]any{"k": "v"}}
	rec, err := RecordFromJSON(map[string]any{
		"run_id": "r", "step_id": "s", "node_id": "n", "status": "completed",
		"effect":  map[string]any{"type": "emit_event", "payload": payload, "result_key": nil, "meta": meta},
		"attempt": attempt,
	})
	if err != nil {
		t.Fatal(err)
	}
	return rec, payload, meta, attempt
}

func recordText(t *testing.T, s *StepRecord) string {
	t.Helper()
	b, err := MarshalRecord(s, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCopiesOwnTheValuesKeptAsRead: StoredCopy and Clone of a record or a
// run built from the caller's maps share nothing with them, and a stored
// copy holds those values in the decoder's types, as a read from disk.
func TestCopiesOwnTheValuesKeptAsRead(t *testing.T) {
	t.Parallel()
	rec, payload, meta, attempt := keptValuesRecord(t)
	stored, err := rec.StoredCopy()
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := rec.roundTrip(); !reflect.DeepEqual(stored, want) {
		t.Errorf("StoredCopy = %#v\n round trip = %#v", stored, want)
	}
	clone := rec.Clone()
	want := recordText(t, rec)
	payload[0], meta["k"], attempt[1].(map[string]any)["k"] = "CALLER", "CALLER", "CALLER"
	if got := recordText(t, stored); got != want {
		t.Errorf("StoredCopy changed with the caller's maps:\n got  %s\n want %s", got, want)
	}
	if got := recordText(t, clone); got != want {
		t.Errorf("Clone changed with the caller's maps:\n got  %s\n want %s", got, want)
	}

	output := []any{"first", map[string]any{"k": "v"}}
	run, err := RunFromJSON(map[string]any{"run_id": "r", "status": "completed", "output": output})
	if err != nil {
		t.Fatal(err)
	}
	runText := func(r *RunState) string {
		b, err := MarshalRun(r, pyjson.Line)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	storedRun, err := run.StoredCopy()
	if err != nil {
		t.Fatal(err)
	}
	cloneRun, wantRun := run.Clone(), runText(run)
	output[1].(map[string]any)["k"] = "CALLER"
	if got := runText(storedRun); got != wantRun {
		t.Errorf("run StoredCopy changed with the caller's output:\n got  %s\n want %s", got, wantRun)
	}
	if got := runText(cloneRun); got != wantRun {
		t.Errorf("run Clone changed with the caller's output:\n got  %s\n want %s", got, wantRun)
	}
}

// TestJSONValueCopiesTheValuesKeptAsRead: the wire object of a record
// hands out copies of the values it keeps as read (copies of the record
// share them), so a change to it leaves the record as it was.
func TestJSONValueCopiesTheValuesKeptAsRead(t *testing.T) {
	t.Parallel()
	rec, err := UnmarshalRecord([]byte(`{"run_id": "r", "step_id": "s", "node_id": "n", "status": "completed",
 "effect": {"type": "emit_event", "payload": ["p0"], "result_key": null, "meta": {"k": "v"}},
 "attempt": [2, {"k": "v"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := recordText(t, rec)
	for _, kv := range rec.JSONValue(true) {
		switch kv.Key {
		case "effect":
			e := kv.Value.(pyjson.Ordered)
			e[1].Value.([]any)[0] = "READER"
			e[3].Value.(map[string]any)["k"] = "READER"
		case "attempt":
			kv.Value.([]any)[1].(map[string]any)["k"] = "READER"
		}
	}
	if got := recordText(t, rec); got != want {
		t.Errorf("a change to the wire object changed the record:\n got  %s\n want %s", got, want)
	}
}

// A run's StoredCopy and Clone share nothing with the caller's maps a
// wait's values kept as read came from: choices that are not a list (an
// object here) or a resume_to_node that is not a string, each on its own
// (RunState.Clone and WaitState.Clone promise a deep copy). Would break:
// RunFromJSON keeping the caller's own value, which copies of the wait
// share, or StoredHead sharing such a value (dropping the plainRead
// check of either): a change to the caller's map after the copy would
// change what the copy writes.
func TestRunCopiesOwnTheWaitValuesKeptAsRead(t *testing.T) {
	t.Parallel()
	copies := map[string]func(*RunState) (*RunState, error){
		"StoredCopy": (*RunState).StoredCopy,
		"Clone":      func(r *RunState) (*RunState, error) { return r.Clone(), nil },
	}
	for how, copyOf := range copies {
		for _, member := range []string{"choices", "resume_to_node"} {
			kept := map[string]any{"k": "v"}
			run, err := RunFromJSON(map[string]any{"run_id": "r", "status": "waiting",
				"waiting": map[string]any{"reason": "user", member: kept}})
			if err != nil {
				t.Fatal(err)
			}
			c, err := copyOf(run)
			if err != nil {
				t.Fatal(err)
			}
			want, err := MarshalRun(run, pyjson.Line)
			if err != nil {
				t.Fatal(err)
			}
			kept["k"] = "CALLER"
			if got, _ := MarshalRun(c, pyjson.Line); string(got) != string(want) {
				t.Errorf("%s, %s: the copy changed with the caller's map:\n got  %s\n want %s", how, member, got, want)
			}
		}
	}
}
