package history

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// Durations round as Python's round((end-start).total_seconds()*1000, 2)
// does (values checked against CPython 3.11).
func TestDurationMS(t *testing.T) {
	start := durable.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		us   int64
		want float64
	}{
		{1125, 1.12}, // an exact tie: half to even
		{1135, 1.14},
		{2675, 2.67},
		{1, 0.0},
		{15, 0.02}, // 0.015000000000000001
		{999995, 1000.0},
		{123456789, 123456.79},
		{-5, 0}, // an end before the start
	} {
		end := durable.NewTime(start.Add(time.Duration(tc.us) * time.Microsecond))
		if got := durationMS(start, end); got != tc.want {
			t.Errorf("%dµs: %v, want %v", tc.us, got, tc.want)
		}
	}
}

func TestSplitEnvelope(t *testing.T) {
	for _, tc := range []struct {
		in, text string
		meta     map[string]any
	}{
		{"  plain  ", "plain", nil},
		{"<RUNTIME_METADATA> {\"a\": 1} </runtime_metadata>\n hi ", "hi", map[string]any{"a": json.Number("1")}},
		{"<runtime_metadata>[1]</runtime_metadata>hi", "hi", nil},                                           // not an object
		{"<runtime_metadata>{oops</runtime_metadata> hi", "hi", nil},                                        // not JSON
		{"say <runtime_metadata>{}</runtime_metadata>", "say <runtime_metadata>{}</runtime_metadata>", nil}, // not leading
		{"<runtime_metadata>{\"a\":\n2}</runtime_metadata>", "", map[string]any{"a": json.Number("2")}},
	} {
		text, meta := splitEnvelope(tc.in)
		if text != tc.text || !reflect.DeepEqual(meta, tc.meta) {
			t.Errorf("%q: (%q, %v), want (%q, %v)", tc.in, text, meta, tc.text, tc.meta)
		}
	}
}

func TestParseUsage(t *testing.T) {
	for _, tc := range []struct {
		in   map[string]any
		want *usage
	}{
		{map[string]any{"input_tokens": json.Number("3"), "output_tokens": json.Number("4")}, &usage{3, 4, 7}},
		{map[string]any{"prompt_tokens": "5", "completion_tokens": 2.9, "total_tokens": json.Number("9")}, &usage{5, 2, 9}},
		{map[string]any{"input_tokens": nil, "in": 1, "out": 1, "total": true}, &usage{1, 1, 2}}, // a bool is no total
		{map[string]any{"input_tokens": true, "output_tokens": "x"}, nil},
		{map[string]any{"total_tokens": -3, "input_tokens": 2}, &usage{2, 0, 0}},
		{map[string]any{}, nil},
	} {
		if got := parseUsage(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v: %+v, want %+v", tc.in, got, tc.want)
		}
	}
	// usage, token_usage or tokens, at the top or under output.
	// As Python's `a or b or c`: an empty object is passed over, but an
	// empty last one is still an object and hides output's.
	nested := map[string]any{"usage": map[string]any{}, "tokens": map[string]any{},
		"output": map[string]any{"tokens": map[string]any{"total": 8}}}
	if got := recordUsage(nested); got != nil {
		t.Errorf("an empty tokens object: %+v", got)
	}
	delete(nested, "tokens")
	if got := recordUsage(nested); !reflect.DeepEqual(got, &usage{0, 0, 8}) {
		t.Errorf("output.tokens: %+v", got)
	}
}

func TestClassifyTurn(t *testing.T) {
	chat := map[string]any{"context": map[string]any{"messages": []any{}}}
	for _, tc := range []struct {
		wf   string
		vars map[string]any
		want string
	}{
		{"__session_memory__", chat, TurnInternal},
		{"__catalog__v2__flow", nil, TurnInternal}, // the spec's rule: any "__" prefix
		{"scheduled:x", chat, TurnScheduled},
		{"w", map[string]any{"_meta": map[string]any{"schedule": map[string]any{}}, "context": chat["context"]}, TurnScheduled},
		{"w", map[string]any{"_meta": map[string]any{"schedule": "daily"}}, TurnRun},
		{"w", chat, TurnChat},
		{"w", map[string]any{"context": map[string]any{"messages": "no"}}, TurnRun},
	} {
		if got := classifyTurn(tc.wf, tc.vars); got != tc.want {
			t.Errorf("%s %v: %s, want %s", tc.wf, tc.vars, got, tc.want)
		}
	}
}

func TestAnswerFromLedger(t *testing.T) {
	answer := &durable.StepRecord{Status: durable.StepCompleted,
		Effect: &durable.Effect{Type: durable.EffectAnswerUser, Payload: map[string]any{"message": "", "text": "from text"}},
		Result: map[string]any{"level": "message"}}
	completion := &durable.StepRecord{Status: durable.StepCompleted,
		Result: map[string]any{"completed": true, "output": map[string]any{"response": 42, "meta": map[string]any{"m": 1}}}}
	status := &durable.StepRecord{Status: durable.StepCompleted,
		Effect: &durable.Effect{Type: durable.EffectEmitEvent}, Result: map[string]any{"emitted": true}}

	// The latest record with an answer wins: the completion's output.
	if text, meta := answerFromLedger([]*durable.StepRecord{answer, completion, status}); text != "42" ||
		!reflect.DeepEqual(meta, map[string]any{"m": 1}) {
		t.Fatalf("(%q, %v)", text, meta)
	}
	// Without it, the ANSWER_USER payload (message is blank: text).
	if text, meta := answerFromLedger([]*durable.StepRecord{answer, status}); text != "from text" || meta != nil {
		t.Fatalf("(%q, %v)", text, meta)
	}
	if text, _ := answerFromLedger([]*durable.StepRecord{status}); text != "" {
		t.Fatalf("answer from a status event: %q", text)
	}
}

func TestBoundString(t *testing.T) {
	s := ""
	for range 2001 {
		s += "ü"
	}
	if got := boundString(s); got != s[:2*2000]+"#TRUNCATION" {
		t.Fatalf("cut at %d bytes", len(got))
	}
	if got := boundString(s[:4000]); got != s[:4000] {
		t.Fatal("2000 code points were cut")
	}
}

// blankToNil promises Python's `str(x).strip() or None`. Python's
// str.strip() also removes the information separators U+001C..U+001F
// (str.isspace is true for them); strings.TrimSpace does not, so a value
// made only of them is kept (Python: None) and a value ending with one
// keeps it (Python drops it). The runtime was fixed for the same
// difference in 7dec20e (pyval.Strip); history still uses TrimSpace.
func TestBlankToNilStripsAsPython(t *testing.T) {
	if got := blankToNil("\x1f"); got != nil {
		t.Errorf(`blankToNil("\x1f") = %q, want nil (Python: "\x1f".strip() or None is None)`, got)
	}
	if got := blankToNil("done\x1c"); got != "done" {
		t.Errorf(`blankToNil("done\x1c") = %q, want "done" (Python strip)`, got)
	}
	if s, ok := nonBlankString("\x1e\x1f"); ok {
		t.Errorf(`nonBlankString("\x1e\x1f") = %q, true; want blank (Python strip leaves "")`, s)
	}
}

// The session listing drops internal turns by the row's workflow id as
// stored, but the turn's kind is computed on the trimmed id: a root run
// whose workflow id is " __internal" is kept and exported as a turn of
// kind "internal", which §6.2 says is dropped.
func TestInternalTurnWithPaddedWorkflowIDIsDropped(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	mk := func(id, wf string, at time.Time) {
		run := &durable.RunState{RunID: id, WorkflowID: wf, Status: durable.RunCompleted, SessionID: "s1",
			Vars: map[string]any{"prompt": "p " + id}, Output: map[string]any{"answer": "a " + id},
			CreatedAt: durable.NewTime(at), UpdatedAt: durable.NewTime(at)}
		if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	mk("r1", " __internal", t0)
	mk("r2", "job", t0.Add(time.Second))
	b, err := Export(ctx, Source{Runs: st, Ledger: st}, "r2", Options{IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := b["session"].(map[string]any)
	turns, _ := sess["turns"].([]any)
	for _, tr := range turns {
		m, _ := tr.(map[string]any)
		if m["kind"] == TurnInternal {
			t.Errorf("turn %v exported with kind %q: internal turns are dropped (spec §6.2)", m["run_id"], m["kind"])
		}
	}
}
