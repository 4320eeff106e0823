package visualflow

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

var update = flag.Bool("update", false, "rewrite the expected half of testdata/golden/*.txt")

// goldenCase is the input half of a golden file. A bare flow document
// (with "nodes") is also accepted.
type goldenCase struct {
	Flow     map[string]any   `json:"flow"`
	Subflows []map[string]any `json:"subflows"`
	Vars     map[string]any   `json:"vars"`
	// Resumes answer successive waits of the root run in order.
	Resumes []map[string]any `json:"resumes"`
	// Handlers script effect results by effect type.
	Handlers map[string][]any `json:"handlers"`
}

// TestGolden runs every testdata/golden/<case>.txt: the flow JSON (or a
// case object), a line "---", then the expected run result: status,
// output, effects requested (type + payload) and ledger record kinds.
func TestGolden(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/golden/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden files")
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txt")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			in, want, ok := bytes.Cut(raw, []byte("\n---\n"))
			if !ok {
				in, want = raw, nil
			}
			got := runGolden(t, in)
			if *update {
				out := append(bytes.TrimRight(in, "\n"), []byte("\n---\n"+got+"\n")...)
				if err := os.WriteFile(file, out, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if strings.TrimSpace(string(want)) != strings.TrimSpace(got) {
				t.Errorf("%s: result differs (run with -update to rewrite)\n--- got\n%s\n--- want\n%s", file, got, want)
			}
		})
	}
}

func runGolden(t *testing.T, in []byte) string {
	t.Helper()
	var gc goldenCase
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("decoding case: %v", err)
	}
	if _, isFlow := doc["nodes"]; isFlow {
		gc.Flow = doc
	} else {
		b, _ := json.Marshal(doc)
		d2 := json.NewDecoder(bytes.NewReader(b))
		d2.UseNumber()
		if err := d2.Decode(&gc); err != nil {
			t.Fatalf("decoding case: %v", err)
		}
	}
	result := map[string]any{}
	var wfs []*runtime.Workflow
	for _, f := range append([]map[string]any{gc.Flow}, gc.Subflows...) {
		wf, err := Compile(f, CompileOptions{})
		if err != nil {
			result["compile_error"] = err.Error()
			return jsonText(t, result)
		}
		wfs = append(wfs, wf)
	}
	rt, id := startCase(t, gc, wfs)
	ctx := context.Background()
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var waits []any
	for _, payload := range gc.Resumes {
		if st.Status != durable.RunWaiting {
			t.Fatalf("resume given but run is %s", st.Status)
		}
		waits = append(waits, waitSummary(st.Waiting))
		st, err = rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: st.Waiting.WaitKey, Payload: payload})
		if err != nil {
			t.Fatal(err)
		}
	}
	recs, err := rt.GetLedger(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var effects []any
	for _, r := range recs {
		if r.Status == durable.StepStarted && r.Effect != nil {
			effects = append(effects, map[string]any{"type": string(r.Effect.Type), "payload": r.Effect.Payload, "result_key": r.Effect.ResultKey})
		}
	}
	result["status"] = string(st.Status)
	result["output"] = st.Output
	if st.Error != "" {
		result["error"] = st.Error
	}
	if st.Waiting != nil {
		result["waiting"] = waitSummary(st.Waiting)
	}
	if waits != nil {
		result["resumed_waits"] = waits
	}
	if effects != nil {
		result["effects"] = effects
	}
	scrubDurations(result)
	kinds := ledgerKinds(recs)
	ledger := make([]any, len(kinds))
	for i, k := range kinds {
		ledger[i] = k
	}
	result["ledger"] = ledger
	return jsonText(t, result)
}

func waitSummary(w *durable.WaitState) map[string]any {
	m := map[string]any{"reason": string(w.Reason), "wait_key": w.WaitKey, "resume_to_node": w.ResumeToNode}
	if w.Prompt != "" {
		m["prompt"] = w.Prompt
	}
	if !w.Until.IsZero() {
		m["until"] = durable.FormatTime(w.Until.Time)
	}
	return m
}

// scrubDurations zeroes wall-clock measurements so goldens are stable.
func scrubDurations(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "duration_ms" || k == "cpu_time_ms" {
				x[k] = 0.0
				continue
			}
			scrubDurations(e)
		}
	case []any:
		for _, e := range x {
			scrubDurations(e)
		}
	}
}

// startCase builds a runtime on the memory store with the case's scripted
// handlers and workflows, and starts the first workflow with its vars.
func startCase(t *testing.T, gc goldenCase, wfs []*runtime.Workflow) (*runtime.Runtime, string) {
	t.Helper()
	handlers := map[durable.EffectType]runtime.Handler{}
	for typ, results := range gc.Handlers {
		handlers[durable.EffectType(typ)] = (&scripted{results: results}).handler()
	}
	rt := newTestRuntime(t, memory.New(), handlers, wfs...)
	vars := gc.Vars
	if vars == nil {
		vars = map[string]any{}
	}
	id, err := rt.Start(context.Background(), runtime.StartParams{WorkflowID: wfs[0].ID, Vars: vars})
	if err != nil {
		t.Fatal(err)
	}
	return rt, id
}
