package history_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// Spec §6.2: include_subruns selects the runs whose ledgers the bundle
// carries; a session turn's stats and artifacts cover the turn's run
// tree regardless. Python history_bundle.py _best_effort_session_turns
// lists each turn's descendants itself (_list_descendant_run_ids) for
// the stats and the artifact summaries, whatever include_subruns the
// export was given. So exporting a chat run with include_subruns=False
// and include_session=True gives ledgers of the run alone, while its own
// turn still counts the helper subworkflow's LLM call (2 in all, 2 tool
// calls, usage 2 × 15 tokens) and lists the helper's artifact.
func TestSkipSubrunsKeepsTurnTreeStats(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	arts := artifact.NewMemory()
	rt := newRuntime(t, st, arts, newClock())
	id := startTick(t, rt, runtime.StartParams{WorkflowID: "chat", SessionID: "s1",
		Vars: map[string]any{"context": messages(user("hello"))}})
	helper := children(t, st, id)
	if len(helper) != 1 {
		t.Fatalf("children %v", helper)
	}
	if _, err := arts.Put(ctx, artifact.PutParams{Content: []byte("by the helper"), RunID: helper[0], ArtifactID: "helper_art"}); err != nil {
		t.Fatal(err)
	}
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st, Artifacts: arts}, id,
		history.Options{SkipSubruns: true, IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(obj(t, b["ledgers"], "ledgers")); !reflect.DeepEqual(got, []string{id}) {
		t.Fatalf("ledgers of %v, want the run's only", got)
	}
	for _, e := range list(t, b["timeline"], "timeline") {
		if r := obj(t, e, "entry")["run_id"]; r != id {
			t.Fatalf("timeline entry of run %v", r)
		}
	}
	turns := list(t, obj(t, b["session"], "session")["turns"], "turns")
	if len(turns) != 1 {
		t.Fatalf("turns %v", turns)
	}
	turn := obj(t, turns[0], "turn")
	stats := obj(t, turn["stats"], "stats")
	usage := obj(t, stats["usage"], "usage")
	if num(t, stats["llm_calls"], "llm_calls") != 2 || num(t, stats["tool_calls"], "tool_calls") != 2 ||
		num(t, usage["total_tokens"], "total_tokens") != 30 {
		t.Fatalf("turn stats %v, want the helper's LLM call counted", stats)
	}
	var ids []any
	for _, a := range list(t, turn["artifacts"], "artifacts") {
		ids = append(ids, obj(t, a, "artifact")["artifact_id"])
	}
	if !reflect.DeepEqual(ids, []any{"helper_art"}) {
		t.Fatalf("turn artifacts %v, want the helper's", ids)
	}
}
