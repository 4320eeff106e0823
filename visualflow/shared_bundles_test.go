package visualflow

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

const sharedBundles = "../../shared/bundles"

// sharedBundle loads one bundle from ../shared/bundles or skips.
func sharedBundle(t *testing.T, name string) *bundle.Bundle {
	t.Helper()
	path := filepath.Join(sharedBundles, name+".flow")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("shared bundle %s not available (%v); the test reads ../shared/bundles when present", name, err)
	}
	b, err := bundle.Read(path)
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return b
}

// runSharedBundle compiles a bundle, starts its default entrypoint and
// ticks it.
func runSharedBundle(t *testing.T, name string, vars map[string]any, handlers map[durable.EffectType]runtime.Handler) (*runtime.Runtime, *durable.RunState) {
	t.Helper()
	b := sharedBundle(t, name)
	cb, err := CompileBundle(b, BundleOptions{ReactPlaceholders: true})
	if err != nil {
		t.Fatalf("compiling %s: %v", name, err)
	}
	rt := newTestRuntime(t, memory.New(), handlers, cb.Workflows...)
	ep := b.Manifest.DefaultEntrypoint
	if ep == "" {
		ep = b.Manifest.Entrypoints[0].FlowID
	}
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: bundle.WorkflowID(b.Manifest.BundleID, b.Manifest.BundleVersion, ep), Vars: vars})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rt, st
}

func TestSharedBundles_AllCompile(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir(sharedBundles)
	if err != nil {
		t.Skipf("no shared bundles folder (%v)", err)
	}
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".flow" {
			continue
		}
		b, err := bundle.Read(filepath.Join(sharedBundles, e.Name()))
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		if _, err := CompileBundle(b, BundleOptions{}); err != nil {
			t.Errorf("%s: %v", e.Name(), err)
		}
	}
}

func TestSharedBundles_YodaEndsAtOnce(t *testing.T) {
	t.Parallel()
	_, st := runSharedBundle(t, "yoda@dev", map[string]any{"prompt": "Hello"}, nil)
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s), want completed", st.Status, st.Error)
	}
	got := jsonText(t, st.Output)
	want := jsonText(t, map[string]any{"success": true, "result": map[string]any{"prompt": "Hello"}})
	if got != want {
		t.Fatalf("output = %s, want %s", got, want)
	}
}

func TestSharedBundles_AgentFlowsWithScriptedLLM(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		vars    map[string]any
		want    map[string]any
		wantLLM map[string]any // expected provider/model of the ReAct call
	}{
		{"basic@dev", map[string]any{"prompt": "Write hello world"},
			map[string]any{"response": "print('hi')", "success": true},
			map[string]any{"provider": "openai", "model": "gpt-5-mini"}},
		{"test@dev", map[string]any{"prompt": "ls"},
			map[string]any{"output": "print('hi')", "success": true},
			map[string]any{"provider": "openai", "model": "gpt-5-mini"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			llm := &scripted{results: []any{map[string]any{"content": "print('hi')"}}}
			_, st := runSharedBundle(t, tc.name, tc.vars, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()})
			if st.Status != durable.RunCompleted {
				t.Fatalf("status = %s (%s)", st.Status, st.Error)
			}
			if got, want := jsonText(t, st.Output), jsonText(t, tc.want); got != want {
				t.Fatalf("output = %s, want %s", got, want)
			}
			if len(llm.payloads) != 1 {
				t.Fatalf("llm calls = %d, want 1", len(llm.payloads))
			}
			for k, v := range tc.wantLLM {
				if llm.payloads[0][k] != v {
					t.Errorf("llm payload %s = %v, want %v", k, llm.payloads[0][k], v)
				}
			}
		})
	}
}

func TestSharedBundles_BasicLLMTestPayload(t *testing.T) {
	t.Parallel()
	llm := &scripted{results: []any{map[string]any{"content": "pong", "provider": "lmstudio", "model": "m1", "finish_reason": "stop"}}}
	vars := map[string]any{"prompt": "ping", "provider": "lmstudio", "model": "m1", "system": "be brief",
		"temperature": 0.2, "seed": int64(7), "use_context": false, "tools": []any{"read_file"}}
	_, st := runSharedBundle(t, "basic-llm-test@0.0.0", vars, map[durable.EffectType]runtime.Handler{durable.EffectLLMCall: llm.handler()})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status = %s (%s)", st.Status, st.Error)
	}
	if len(llm.payloads) != 1 {
		t.Fatalf("llm calls = %d", len(llm.payloads))
	}
	p := llm.payloads[0]
	want := map[string]any{
		"type": "llm_call", "prompt": "ping", "system_prompt": "be brief", "provider": "lmstudio", "model": "m1",
		"include_context": false, "resume_to_node": "end",
		"params": map[string]any{"temperature": 0.2, "seed": int64(7)},
		"tools":  []any{map[string]any{"name": "read_file"}},
	}
	if got, w := jsonText(t, p), jsonText(t, want); got != w {
		t.Fatalf("payload = %s\nwant %s", got, w)
	}
	out := st.Output
	if out["response"] != "pong" || out["success"] != true {
		t.Fatalf("output = %s", jsonText(t, out))
	}
	meta, _ := out["meta"].(map[string]any)
	if meta["output_mode"] != "unstructured" || meta["provider"] != "lmstudio" || meta["finish_reason"] != "stop" {
		t.Fatalf("meta = %s", jsonText(t, meta))
	}
	if _, ok := out["scratchpad"]; !ok || out["scratchpad"] != nil {
		t.Fatalf("scratchpad pin should be present and null: %s", jsonText(t, out))
	}
}
