package durable

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// genericLine is the encoding AppendRecord and AppendRun wrote before they
// had a Line fast path: the wire object through the generic encoder.
func genericLine(v pyjson.Ordered) (string, error) {
	b, err := pyjson.Append(nil, v, pyjson.Line, "")
	return string(b), err
}

// sameLine checks that the fast path gives the generic encoder's bytes,
// or its error, and leaves the buffer's prefix alone.
func sameLine(t *testing.T, name string, fast func([]byte) ([]byte, error), generic pyjson.Ordered) {
	t.Helper()
	want, wantErr := genericLine(generic)
	got, err := fast([]byte("prefix"))
	switch {
	case (err == nil) != (wantErr == nil):
		t.Errorf("%s: error %v, generic encoder's %v", name, err, wantErr)
	case err != nil:
		if err.Error() != wantErr.Error() {
			t.Errorf("%s: error %q, generic encoder's %q", name, err, wantErr)
		}
		if string(got) != "prefix" {
			t.Errorf("%s: failed encoding left %q in the buffer", name, got)
		}
	case string(got) != "prefix"+want:
		t.Errorf("%s:\n got %s\nwant prefix%s", name, got, want)
	}
}

func lineValues() map[string]any {
	return map[string]any{
		"nil":     nil,
		"map":     map[string]any{"b": 1, "a": []any{"x", 2.5, json.Number("3"), nil, true}, "é\"\n": "ü\x01"},
		"empty":   map[string]any{},
		"nilmap":  map[string]any(nil),
		"list":    []any{map[string]any{"k": "v"}, []any{}},
		"ordered": pyjson.Ordered{{Key: "z", Value: 1}, {Key: "a", Value: "b"}},
		"typed":   map[string]any{"s": []string{"a"}, "m": map[string]int{"k": 1}, "i": int64(-7)},
		"badutf8": "a\xffb",
		"nan":     map[string]any{"x": []any{1, math.NaN()}},
		"func":    map[string]any{"f": func() {}},
	}
}

// The Line fast paths write exactly what the generic encoder writes for
// JSONValue, errors (and the paths they name) included.
func TestLineEncoding_SameAsGeneric(t *testing.T) {
	t.Parallel()
	at := NewTime(time.Date(2026, 11, 30, 7, 0, 0, 123456000, time.UTC))
	whole := NewTime(time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC))
	for name, v := range lineValues() {
		m, _ := v.(map[string]any)
		recs := []*StepRecord{
			{RunID: "r", StepID: "s", NodeID: "n", Status: StepCompleted, Result: v, StartedAt: at, EndedAt: whole},
			{RunID: "r\"é", StepID: "s", Status: StepStarted, Attempt: 3, Error: "boom\n", ActorID: "a", SessionID: "s",
				IdempotencyKey: "k", PrevHash: "p", RecordHash: "h", Signature: "sig",
				Effect: &Effect{Type: EffectEmitEvent, Payload: m, ResultKey: "rk"}},
			{RunID: "r", Effect: &Effect{Type: EffectAskUser}, Extra: map[string]any{"zz": v, "a\"b": 1, "é": "x", "k\xff": 2}},
			{RunID: "r", Extra: m},
		}
		for _, rec := range recs {
			sameLine(t, name+"/record", func(b []byte) ([]byte, error) { return appendRecordLine(b, rec) }, rec.JSONValue(true))
		}
		runs := []*RunState{
			{RunID: "r", WorkflowID: "w", Status: RunRunning, CurrentNode: "n", Vars: m, CreatedAt: at, UpdatedAt: whole},
			{RunID: "r", Status: RunWaiting, Vars: map[string]any{"v": v}, Output: m, Error: "e", ActorID: "a",
				SessionID: "s", ParentRunID: "p",
				Waiting: &WaitState{Reason: WaitUser, WaitKey: "k", Until: at, ResumeToNode: "n", ResultKey: "rk",
					Prompt: "p?", Choices: []string{"a", "b\""}, AllowFreeText: true, Details: m}},
			{RunID: "r", Status: RunWaiting, Waiting: &WaitState{Reason: WaitUntil, Choices: []string{}}},
			{RunID: "r", Status: RunCompleted, Output: map[string]any{}},
		}
		for _, r := range runs {
			sameLine(t, name+"/run", func(b []byte) ([]byte, error) { return appendRunLine(b, r) }, r.JSONValue())
		}
	}
}

// FuzzLineEncoding: any record or run the decoder accepts encodes the
// same through the fast path as through the generic encoder.
func FuzzLineEncoding(f *testing.F) {
	for _, seed := range []string{
		`{"run_id": "r", "step_id": "s", "status": "completed", "result": {"a": [1, 2.5, null]}, "extra": "x"}`,
		`{"run_id": "r", "workflow_id": "w", "status": "waiting", "current_node": "n", "vars": {"k": "é"},
		  "waiting": {"reason": "user", "wait_key": "k", "choices": ["a"], "details": {"d": 1}}}`,
		`{"effect": {"type": "ask_user", "payload": null}, "ended_at": "2026-11-30T07:00:00Z"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if rec, err := UnmarshalRecord(data); err == nil {
			sameLine(t, "record", func(b []byte) ([]byte, error) { return appendRecordLine(b, rec) }, rec.JSONValue(true))
		}
		if r, err := UnmarshalRun(data); err == nil {
			sameLine(t, "run", func(b []byte) ([]byte, error) { return appendRunLine(b, r) }, r.JSONValue())
		}
	})
}

// At the encoder's nesting limit the fast paths refuse exactly the values
// the generic encoder refuses: members keep their depth in the object.
func TestLineEncoding_NestingLimit(t *testing.T) {
	t.Parallel()
	for _, levels := range []int{9997, 9998, 9999, 10000} {
		var v any = "leaf"
		for range levels {
			v = []any{v}
		}
		m := map[string]any{"v": v}
		rec := &StepRecord{RunID: "r", Result: v, Effect: &Effect{Type: EffectEmitEvent, Payload: m}}
		sameLine(t, "record", func(b []byte) ([]byte, error) { return appendRecordLine(b, rec) }, rec.JSONValue(true))
		r := &RunState{RunID: "r", Vars: m, Waiting: &WaitState{Reason: WaitUser, Details: m}}
		sameLine(t, "run", func(b []byte) ([]byte, error) { return appendRunLine(b, r) }, r.JSONValue())
	}
}

// outputRead keeps a non-object output Python stored "while Output stays
// nil": once the runtime sets Output, that is what every style writes, the
// Line fast path included.
func TestOutputSetAfterNonObjectReadIsWrittenInEveryStyle(t *testing.T) {
	t.Parallel()
	in := `{"run_id": "r", "workflow_id": "wf", "status": "completed", "current_node": "end", "vars": {}, "output": "done"}`
	run, err := UnmarshalRun([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := MarshalRun(run, pyjson.Line); !strings.Contains(string(b), `"output": "done"`) {
		t.Fatalf("the output read is not written back: %s", b)
	}
	run.Output = map[string]any{"x": json.Number("1")}
	for _, st := range []pyjson.Style{pyjson.Line, pyjson.Canonical, pyjson.Pretty} {
		b, err := MarshalRun(run, st)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Join(strings.Fields(string(b)), "")
		if !strings.Contains(got, `"output":{"x":1}`) || strings.Contains(got, `"done"`) {
			t.Errorf("style %+v: the output set is not what is written: %s", st, b)
		}
	}
	sameLine(t, "run", func(b []byte) ([]byte, error) { return appendRunLine(b, run) }, run.JSONValue())
}

// Members a newer writer added to an effect are written back by the Line
// fast path exactly as by the generic encoder: names that need escaping
// stay valid JSON, and their values keep their depth in the record (the
// nesting limit is the generic encoder's).
func TestLineEncodingOfEffectExtraMembers(t *testing.T) {
	t.Parallel()
	in := `{"run_id": "r", "step_id": "s", "node_id": "n", "status": "started", ` +
		`"effect": {"type": "emit_event", "payload": {}, "result_key": null, "a\"b": 1, "new\nline": {"x": [1]}, "é": "ü"}}`
	rec, err := UnmarshalRecord([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	sameLine(t, "effect extra names", func(b []byte) ([]byte, error) { return appendRecordLine(b, rec) }, rec.JSONValue(true))
	b, err := MarshalRecord(rec, pyjson.Line)
	if err != nil {
		t.Fatal(err)
	}
	back, err := UnmarshalRecord(b)
	if err != nil {
		t.Fatalf("the Line encoding of effect extra members does not decode: %v\n%s", err, b)
	}
	if got := back.Effect.Map(); got["a\"b"] == nil || got["new\nline"] == nil || got["é"] != "ü" {
		t.Errorf("effect extra members after a round trip: %#v", got)
	}

	for _, levels := range []int{pyjson.MaxDepth - 3, pyjson.MaxDepth - 2, pyjson.MaxDepth - 1} {
		var v any = "leaf"
		for range levels {
			v = []any{v}
		}
		deep := &StepRecord{RunID: "r", Effect: &Effect{Type: EffectEmitEvent, extra: map[string]any{"deep": v}}}
		_, lineErr := appendRecordLine(nil, deep)
		_, genericErr := genericLine(deep.JSONValue(true))
		if (lineErr == nil) != (genericErr == nil) {
			t.Errorf("%d levels in an effect extra member: Line fast path error %v, generic encoder's error %v",
				levels, lineErr != nil, genericErr != nil)
		}
	}
}

// The Line fast path gives the generic encoder's errors, paths included:
// a bad value in an effect's extra member is named under "effect." (it
// was not, before; Effect.extra only ever holds decoded JSON today, so no
// exported call reached it).
func TestLineEncodingEffectExtraErrorPathHasEffectPrefix(t *testing.T) {
	t.Parallel()
	rec := &StepRecord{RunID: "r", Effect: &Effect{Type: EffectEmitEvent, extra: map[string]any{"x": map[string]any{"f": func() {}}}}}
	sameLine(t, "effect extra error", func(b []byte) ([]byte, error) { return appendRecordLine(b, rec) }, rec.JSONValue(true))
}

// At the encoder's nesting limit (MaxDepth) itself the fast paths refuse
// exactly what the generic encoder refuses: each member keeps its depth in
// the object (a record's result and a run's vars and output one level
// down, a wait's details and an effect's payload two). Would break: any of
// those members passed to AppendMember at another depth, accepting or
// refusing a document one level deeper than the generic encoder does
// (TestLineEncoding_NestingLimit nests far past the limit, where both
// refuse whatever the depth).
func TestLineEncodingNestingLimitAtMaxDepth(t *testing.T) {
	t.Parallel()
	for levels := pyjson.MaxDepth - 3; levels <= pyjson.MaxDepth; levels++ {
		var v any = "leaf"
		for range levels {
			v = []any{v}
		}
		m := map[string]any{"v": v}
		recs := []*StepRecord{
			{RunID: "r", Result: v},
			{RunID: "r", Effect: &Effect{Type: EffectEmitEvent, Payload: m}},
		}
		for _, rec := range recs {
			sameLine(t, "record", func(b []byte) ([]byte, error) { return appendRecordLine(b, rec) }, rec.JSONValue(true))
		}
		runs := []*RunState{
			{RunID: "r", Vars: m},
			{RunID: "r", Output: m},
			{RunID: "r", Waiting: &WaitState{Reason: WaitUser, Details: m}},
		}
		for _, r := range runs {
			sameLine(t, "run", func(b []byte) ([]byte, error) { return appendRunLine(b, r) }, r.JSONValue())
		}
	}
}
