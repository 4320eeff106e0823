package visualflow

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

// TestPauseResume_StepwiseOnFileStore replays every runnable golden case
// one step at a time on the JSON file store, closing the store and
// building a fresh runtime (fresh compiled workflows) between steps and
// across every wait. The result must equal the uninterrupted in-memory
// run: VisualFlow state lives only in run vars.
func TestPauseResume_StepwiseOnFileStore(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/golden/*.txt")
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		in, want, _ := bytes.Cut(raw, []byte("\n---\n"))
		if bytes.Contains(want, []byte(`"compile_error"`)) || strings.Contains(file, "step_limit") {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(file), ".txt")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var expected map[string]any
			if err := json.Unmarshal(want, &expected); err != nil {
				t.Fatal(err)
			}
			st := runStepwise(t, in)
			if got, w := string(st.Status), expected["status"]; got != w {
				t.Fatalf("status = %s (%s), want %v", got, st.Error, w)
			}
			if !st.Status.Terminal() {
				return // waiting: output is not set yet ({} or null by store)
			}
			got := map[string]any{"output": st.Output}
			scrubDurations(got)
			if a, b := normJSON(t, got["output"]), normJSON(t, expected["output"]); a != b {
				t.Fatalf("stepwise output differs\n got %s\nwant %s", a, b)
			}
		})
	}
}

// normJSON renders a value through encoding/json for a kind-agnostic
// comparison (2.0 and 2 differ in the goldens, not here).
func normJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	_ = json.Unmarshal(b, &x)
	b, _ = json.Marshal(x)
	return string(b)
}

func runStepwise(t *testing.T, in []byte) *durable.RunState {
	t.Helper()
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	gc := goldenCase{Flow: doc}
	if _, isFlow := doc["nodes"]; !isFlow {
		gc = goldenCase{}
		b, _ := json.Marshal(doc)
		d2 := json.NewDecoder(bytes.NewReader(b))
		d2.UseNumber()
		if err := d2.Decode(&gc); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	ctx := context.Background()
	scripts := map[string]*scripted{}
	for typ, results := range gc.Handlers {
		scripts[typ] = &scripted{results: results}
	}
	// open builds a brand-new store, registry and runtime on dir.
	open := func() (*runtime.Runtime, *jsonfile.Store) {
		st, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		var wfs []*runtime.Workflow
		for _, f := range append([]map[string]any{gc.Flow}, gc.Subflows...) {
			wf, err := Compile(f, CompileOptions{})
			if err != nil {
				t.Fatal(err)
			}
			wfs = append(wfs, wf)
		}
		handlers := map[durable.EffectType]runtime.Handler{}
		for typ, s := range scripts {
			handlers[durable.EffectType(typ)] = s.handler()
		}
		return newTestRuntime(t, st, handlers, wfs...), st
	}
	rt, store := open()
	vars := gc.Vars
	if vars == nil {
		vars = map[string]any{}
	}
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: gc.Flow["id"].(string), Vars: vars, RunID: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	resumes := gc.Resumes
	for range 10000 {
		_ = store.Close()
		rt, store = open()
		st, err := rt.GetState(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case st.Status.Terminal():
			_ = store.Close()
			return st
		case st.Status == durable.RunWaiting:
			if len(resumes) == 0 {
				_ = store.Close()
				return st
			}
			if _, err := rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: st.Waiting.WaitKey, Payload: resumes[0], MaxSteps: -1}); err != nil {
				t.Fatal(err)
			}
			resumes = resumes[1:]
		default:
			if _, err := rt.Tick(ctx, id, runtime.TickOptions{MaxSteps: 1}); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Fatal("run did not settle")
	return nil
}
