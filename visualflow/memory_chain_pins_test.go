package visualflow

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// A Memorize → Recall → Tag memory → Recall into context chain runs on
// the runtime's built-in memory handlers end to end and exposes the pins
// of spec §6.8 / §5.3: memory_note.note_id = results[0].meta.span_id;
// memory_query.results = meta.matches, rendered = the output text,
// span_ids = meta.span_ids; memory_tag.success / rendered from the first
// result; memory_rehydrate.inserted/skipped/artifacts from the outcome
// (runtime-model §3.8), with the note inserted into context.messages.
func TestMemoryChainPinsEndToEnd(t *testing.T) {
	t.Parallel()
	flow := rsFlow("mchain", "start", []map[string]any{
		startNode(),
		rsNode("note", "memory_note", []string{"exec-in:exec", "content:string", "tags:object", "location:string"}, []string{"exec-out:exec", "note_id:string"},
			map[string]any{"pinDefaults": map[string]any{"content": "the sky is green", "tags": map[string]any{"topic": "sky"}, "location": " paris "}}),
		rsNode("q", "memory_query", []string{"exec-in:exec", "query:string"}, []string{"exec-out:exec", "results:array", "rendered:string", "span_ids:array"},
			map[string]any{"pinDefaults": map[string]any{"query": "sky"}}),
		rsNode("tag", "memory_tag", []string{"exec-in:exec", "span_id:string", "tags:object"}, []string{"exec-out:exec", "success:boolean", "rendered:string", "results:array"},
			map[string]any{"pinDefaults": map[string]any{"tags": map[string]any{"mood": "calm"}}}),
		rsNode("re", "memory_rehydrate", []string{"exec-in:exec", "span_ids:array", "placement:string"}, []string{"exec-out:exec", "inserted:number", "skipped:number", "artifacts:array"},
			map[string]any{"pinDefaults": map[string]any{"placement": "bogus"}}),
		rsNode("end", "on_flow_end", []string{"exec-in:exec", "note_id:any", "results:any", "rendered:any", "span_ids:any", "tagged:any", "tag_text:any", "inserted:any", "skipped:any"}, nil, nil),
	}, "start.exec-out>note.exec-in", "note.exec-out>q.exec-in", "q.exec-out>tag.exec-in", "tag.exec-out>re.exec-in", "re.exec-out>end.exec-in",
		"note.note_id>tag.span_id", "q.span_ids>re.span_ids",
		"note.note_id>end.note_id", "q.results>end.results", "q.rendered>end.rendered", "q.span_ids>end.span_ids",
		"tag.success>end.tagged", "tag.rendered>end.tag_text", "re.inserted>end.inserted", "re.skipped>end.skipped")
	wf, err := Compile(flow, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := runtime.NewRegistry(wf)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{Store: memory.New(), Registry: reg, Artifacts: artifact.NewMemory(),
		Clock: func() time.Time { return fixedClock }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: wf.ID, Vars: map[string]any{"context": map[string]any{"messages": []any{}}}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	out := st.Output
	noteID, _ := out["note_id"].(string)
	if noteID == "" {
		t.Fatalf("note_id = %#v, want the span id", out["note_id"])
	}
	results, _ := out["results"].([]any)
	if len(results) != 1 || results[0].(map[string]any)["span_id"] != noteID || results[0].(map[string]any)["location"] != "paris" {
		t.Errorf("memory_query results = %s, want the one note (span %s, location trimmed)", jsonText(t, out["results"]), noteID)
	}
	if ids, _ := out["span_ids"].([]any); len(ids) != 1 || ids[0] != noteID {
		t.Errorf("memory_query span_ids = %s, want [%s]", jsonText(t, out["span_ids"]), noteID)
	}
	if r, _ := out["rendered"].(string); !strings.Contains(r, "span_id="+noteID) || !strings.Contains(r, "the sky is green") {
		t.Errorf("memory_query rendered = %q, want the rendered recall of the note", r)
	}
	if out["tagged"] != true {
		t.Errorf("memory_tag success = %#v, want true", out["tagged"])
	}
	if r, _ := out["tag_text"].(string); !strings.HasPrefix(r, "Tagged span_id="+noteID) {
		t.Errorf("memory_tag rendered = %q, want the first result's output", r)
	}
	if jsonText(t, out["inserted"]) != "1" || jsonText(t, out["skipped"]) != "0" {
		t.Errorf("memory_rehydrate inserted/skipped = %v/%v, want 1/0", out["inserted"], out["skipped"])
	}
	c, _ := st.Vars["context"].(map[string]any)
	msgs, _ := c["messages"].([]any)
	if len(msgs) != 1 || !strings.Contains(jsonText(t, msgs[0]), "the sky is green") {
		t.Errorf("context.messages = %s, want the rehydrated note", jsonText(t, msgs))
	}
}
