package history_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/history"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/memory"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// A run waiting on ASK_USER: the run section, its wait, the public vars
// and the timeline of its two records.
func TestExportAskUserWait(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	rt := newRuntime(t, st, nil, newClock())
	id := startTick(t, rt, runtime.StartParams{WorkflowID: "asker", ActorID: "actor_1", SessionID: "sess_1",
		Vars: map[string]any{"context": map[string]any{"task": "demo"}, "_secret": "x"}})
	gen := time.Date(2026, 5, 6, 7, 8, 9, 123456, time.UTC)

	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, id, history.Options{Now: func() time.Time { return gen }})
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(b); !reflect.DeepEqual(got, []string{"generated_at", "input_data", "ledgers", "root_run_id",
		"run", "session", "timeline", "version", "workflow_snapshot"}) {
		t.Fatalf("bundle keys %v", got)
	}
	if b["version"] != json.Number("1") || b["root_run_id"] != id || b["generated_at"] != "2026-05-06T07:08:09.000123+00:00" {
		t.Fatalf("header: version %v root %v generated_at %v", b["version"], b["root_run_id"], b["generated_at"])
	}
	if b["workflow_snapshot"] != nil || b["session"] != nil {
		t.Fatalf("workflow_snapshot %v session %v, want null", b["workflow_snapshot"], b["session"])
	}
	run := state(t, rt, id)
	wantRun := map[string]any{
		"run_id": id, "workflow_id": "asker", "status": "waiting", "current_node": "ask",
		"created_at": run.CreatedAt.String(), "updated_at": run.UpdatedAt.String(),
		"actor_id": "actor_1", "session_id": "sess_1", "parent_run_id": nil, "error": nil,
		"waiting": map[string]any{
			"reason": "user", "wait_key": "user:" + id + ":ask", "until": nil, "resume_to_node": "done",
			"result_key": "answer", "prompt": "Continue?", "choices": []any{"yes", "no"},
			"allow_free_text": true, "details": nil,
		},
	}
	if !reflect.DeepEqual(b["run"], wantRun) {
		t.Fatalf("run section\n got %v\nwant %v", b["run"], wantRun)
	}
	// Only the public vars: no _secret, _limits, _runtime or _temp.
	if want := map[string]any{"context": map[string]any{"task": "demo"}}; !reflect.DeepEqual(b["input_data"], want) {
		t.Fatalf("input_data %v", b["input_data"])
	}
	l := ledgerOf(t, b, id)
	if num(t, l["total"], "total") != 2 || num(t, l["cursor_start"], "cursor_start") != 1 || num(t, l["cursor_end"], "cursor_end") != 2 {
		t.Fatalf("ledger window %v..%v of %v", l["cursor_start"], l["cursor_end"], l["total"])
	}
	if arts := list(t, l["artifacts"], "artifacts"); len(arts) != 0 {
		t.Fatalf("artifacts without an artifact store: %v", arts)
	}
	checkRecords(t, st, l, id, 1)
	tl := list(t, b["timeline"], "timeline")
	if len(tl) != 2 {
		t.Fatalf("timeline has %d entries", len(tl))
	}
	started, waiting := obj(t, tl[0], "timeline[0]"), obj(t, tl[1], "timeline[1]")
	if started["status"] != "started" || started["effect_type"] != "ask_user" || started["node_id"] != "ask" ||
		started["run_id"] != id || num(t, started["cursor"], "cursor") != 1 {
		t.Fatalf("timeline[0] %v", started)
	}
	// A STARTED record has no end: it ends when it started, in no time.
	if started["ended_at"] != started["started_at"] || started["duration_ms"] != json.Number("0.0") {
		t.Fatalf("STARTED entry: ended_at %v started_at %v duration %v", started["ended_at"], started["started_at"], started["duration_ms"])
	}
	if waiting["status"] != "waiting" || num(t, waiting["cursor"], "cursor") != 2 || waiting["ended_at"] == nil {
		t.Fatalf("timeline[1] %v", waiting)
	}
}

// A parent waiting on an async child that waits on a person: both ledgers,
// then both completed after the child is answered.
func TestExportParentWithAsyncChild(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	rt := newRuntime(t, st, nil, newClock())
	parent := startTick(t, rt, runtime.StartParams{WorkflowID: "parent", SessionID: "s"})
	kids := children(t, st, parent)
	if len(kids) != 1 {
		t.Fatalf("children %v", kids)
	}
	child := kids[0]
	src := history.Source{Runs: st, Ledger: st}

	b, err := history.Export(ctx, src, parent, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	run := obj(t, b["run"], "run")
	waiting := obj(t, run["waiting"], "run.waiting")
	if run["status"] != "waiting" || waiting["reason"] != "subworkflow" || waiting["wait_key"] != "subworkflow:"+child {
		t.Fatalf("parent run %v", run)
	}
	if got := keys(obj(t, b["ledgers"], "ledgers")); !reflect.DeepEqual(got, sortedPair(parent, child)) {
		t.Fatalf("ledgers of %v, want parent and child", got)
	}
	cl := ledgerOf(t, b, child)
	checkRecords(t, st, cl, child, 1)
	last := obj(t, obj(t, list(t, cl["items"], "items")[1], "item")["record"], "record")
	wait := obj(t, obj(t, last["result"], "result")["wait"], "result.wait")
	if last["status"] != "waiting" || wait["reason"] != "user" || wait["prompt"] != "Continue?" {
		t.Fatalf("child's last record %v", last)
	}
	// The timeline lists the root's records, then the child's.
	if got := timelineRuns(t, b); !reflect.DeepEqual(got, []string{parent, child}) {
		t.Fatalf("timeline run order %v", got)
	}

	// Without subruns the child is left out.
	solo, err := history.Export(ctx, src, parent, history.Options{SkipSubruns: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := keys(obj(t, solo["ledgers"], "ledgers")); !reflect.DeepEqual(got, []string{parent}) {
		t.Fatalf("SkipSubruns ledgers %v", got)
	}

	// Answer the child: the parent resumes and completes.
	if _, err := rt.Resume(ctx, runtime.ResumeParams{RunID: child, Payload: map[string]any{"text": "yes"}}); err != nil {
		t.Fatal(err)
	}
	if p := state(t, rt, parent); p.Status != durable.RunCompleted {
		t.Fatalf("parent is %s after the child's answer", p.Status)
	}
	b, err = history.Export(ctx, src, parent, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	run = obj(t, b["run"], "run")
	if run["status"] != "completed" || run["waiting"] != nil || run["current_node"] != "done" {
		t.Fatalf("completed parent %v", run)
	}
	pl, cl := ledgerOf(t, b, parent), ledgerOf(t, b, child)
	checkRecords(t, st, pl, parent, 1)
	checkRecords(t, st, cl, child, 1)
	// The child: started, waiting, resume, completion, status event.
	if n := num(t, cl["total"], "total"); n != 5 || !reflect.DeepEqual(cursors(t, cl), seq(1, 5)) {
		t.Fatalf("child ledger total %d cursors %v", n, cursors(t, cl))
	}
	tl := list(t, b["timeline"], "timeline")
	if want := len(list(t, pl["items"], "items")) + len(list(t, cl["items"], "items")); len(tl) != want {
		t.Fatalf("timeline has %d entries, want %d", len(tl), want)
	}
	for i, e := range tl {
		entry := obj(t, e, "timeline entry")
		if entry["ended_at"] == nil || entry["duration_ms"] == nil {
			t.Fatalf("timeline[%d] without end or duration: %v", i, entry)
		}
	}
}

func sortedPair(a, b string) []string {
	if a < b {
		return []string{a, b}
	}
	return []string{b, a}
}

// timelineRuns lists the runs of the timeline in order of appearance.
func timelineRuns(t *testing.T, b map[string]any) []string {
	t.Helper()
	var out []string
	for _, e := range list(t, b["timeline"], "timeline") {
		rid := obj(t, e, "timeline entry")["run_id"].(string)
		if len(out) == 0 || out[len(out)-1] != rid {
			out = append(out, rid)
		}
	}
	return out
}

// Descendants are covered breadth first: the root's children in their
// order, then all grandchildren, then the level below.
func TestExportSubrunsBreadthFirst(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	rt := newRuntime(t, st, nil, newClock())
	root := startTick(t, rt, runtime.StartParams{WorkflowID: "tree"})
	want := []string{root}
	level := []string{root}
	for depth := 1; depth <= 3; depth++ {
		var next []string
		for _, id := range level {
			next = append(next, children(t, st, id)...)
		}
		if want := []int{2, 2, 2}[depth-1]; len(next) != want {
			t.Fatalf("level %d has %d runs, want %d", depth, len(next), want)
		}
		want = append(want, next...)
		level = next
	}
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, root, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := timelineRuns(t, b); !reflect.DeepEqual(got, want) {
		t.Fatalf("timeline runs\n got %v\nwant %v", got, want)
	}
	if n := len(obj(t, b["ledgers"], "ledgers")); n != 7 {
		t.Fatalf("%d ledgers, want 7", n)
	}
}

// A ledger longer than the window: the tail keeps absolute cursors; full
// mode and a negative limit keep everything.
func TestExportLedgerTailWindow(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	rt := newRuntime(t, st, nil, newClock())
	id := startTick(t, rt, runtime.StartParams{WorkflowID: "loop"})
	src := history.Source{Runs: st, Ledger: st}
	n, err := st.LedgerCount(ctx, id)
	if err != nil || n != 12 {
		t.Fatalf("ledger of %d records (%v), want 12", n, err)
	}

	b, err := history.Export(ctx, src, id, history.Options{LedgerMaxItems: 5})
	if err != nil {
		t.Fatal(err)
	}
	l := ledgerOf(t, b, id)
	if num(t, l["total"], "total") != 12 || num(t, l["cursor_start"], "cursor_start") != 8 || num(t, l["cursor_end"], "cursor_end") != 12 {
		t.Fatalf("tail window %v..%v of %v", l["cursor_start"], l["cursor_end"], l["total"])
	}
	if got := cursors(t, l); !reflect.DeepEqual(got, seq(8, 12)) {
		t.Fatalf("cursors %v", got)
	}
	checkRecords(t, st, l, id, 8)
	var tlCursors []int64
	for _, e := range list(t, b["timeline"], "timeline") {
		tlCursors = append(tlCursors, num(t, obj(t, e, "entry")["cursor"], "cursor"))
	}
	if !reflect.DeepEqual(tlCursors, seq(8, 12)) {
		t.Fatalf("timeline cursors %v", tlCursors)
	}

	for _, opts := range []history.Options{
		{LedgerMode: history.LedgerFull, LedgerMaxItems: 5},
		{LedgerMode: "FULL"},
		{LedgerMaxItems: -1},
		{LedgerMaxItems: 12},
		{}, // the default window of 2000
	} {
		b, err := history.Export(ctx, src, id, opts)
		if err != nil {
			t.Fatal(err)
		}
		l := ledgerOf(t, b, id)
		if got := cursors(t, l); !reflect.DeepEqual(got, seq(1, 12)) || num(t, l["cursor_start"], "start") != 1 ||
			num(t, l["cursor_end"], "end") != 12 {
			t.Fatalf("%+v: cursors %v start %v end %v", opts, got, l["cursor_start"], l["cursor_end"])
		}
		checkRecords(t, st, l, id, 1)
	}

	if _, err := history.Export(ctx, src, id, history.Options{LedgerMode: "head"}); err == nil ||
		!strings.Contains(err.Error(), `"head"`) {
		t.Fatalf("unknown ledger mode: %v", err)
	}
}

// A run never ticked has an empty ledger: cursor_end is cursor_start-1.
func TestExportEmptyLedger(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	rt := newRuntime(t, st, nil, newClock())
	id, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "job"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, id, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := ledgerOf(t, b, id)
	if num(t, l["total"], "total") != 0 || num(t, l["cursor_start"], "start") != 1 || num(t, l["cursor_end"], "end") != 0 ||
		len(list(t, l["items"], "items")) != 0 || len(list(t, b["timeline"], "timeline")) != 0 {
		t.Fatalf("empty ledger section %v, timeline %v", l, b["timeline"])
	}
}

// Unknown ids and missing inputs are errors naming what is wrong.
func TestExportBadInput(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	src := history.Source{Runs: st, Ledger: st}
	_, err := history.Export(ctx, src, "no-such-run", history.Options{})
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), `"no-such-run"`) {
		t.Fatalf("unknown run: %v", err)
	}
	if _, err := history.Export(ctx, src, "  ", history.Options{}); err == nil || !strings.Contains(err.Error(), "run id is required") {
		t.Fatalf("blank run id: %v", err)
	}
	if _, err := history.Export(ctx, history.Source{Runs: st}, "x", history.Options{}); err == nil {
		t.Fatal("a source without a ledger store was accepted")
	}
}

// Offloading: the offloading store moves large ledger results, private
// vars and the output of a finished run into artifacts; the bundle lists
// them oldest first, and offloads its own oversized input values.
func TestExportOffloadedRun(t *testing.T) {
	ctx := context.Background()
	arts := artifact.NewMemory()
	st := offload.Wrap(memory.New(), arts, offload.Config{MaxInlineBytes: 200})
	rt := newRuntime(t, st, arts, newClock())
	notes := strings.Repeat("n", 300)
	id := startTick(t, rt, runtime.StartParams{WorkflowID: "bigout", SessionID: "big",
		Vars: map[string]any{"notes": notes, "small": "ok", "_private": strings.Repeat("p", 300)}})
	src := history.Source{Runs: st, Ledger: st, Artifacts: arts}

	b, err := history.Export(ctx, src, id, history.Options{MaxInlineBytes: 200, IncludeSession: true})
	if err != nil {
		t.Fatal(err)
	}
	// The public vars: notes offloaded by the bundle, small inline.
	input := obj(t, b["input_data"], "input_data")
	if got := keys(input); !reflect.DeepEqual(got, []string{"notes", "small"}) {
		t.Fatalf("input_data keys %v", got)
	}
	ref := obj(t, input["notes"], "input_data.notes")
	noteID, _ := ref["$artifact"].(string)
	if len(ref) != 1 || noteID == "" || input["small"] != "ok" {
		t.Fatalf("input_data %v", input)
	}
	meta, content, err := arts.Get(ctx, noteID)
	if err != nil {
		t.Fatal(err)
	}
	if string(content) != notes || meta.RunID != id || !reflect.DeepEqual(meta.Tags,
		map[string]string{"source": "history_bundle", "kind": "text", "path": "input_data.notes"}) {
		t.Fatalf("input artifact: run %s tags %v content %d bytes", meta.RunID, meta.Tags, len(content))
	}

	// The LLM result's content is a ref in the stored record, shown as is.
	l := ledgerOf(t, b, id)
	checkRecords(t, st, l, id, 1)
	var contentRef map[string]any
	for _, it := range list(t, l["items"], "items") {
		rec := obj(t, obj(t, it, "item")["record"], "record")
		if eff, _ := rec["effect"].(map[string]any); eff != nil && eff["type"] == "llm_call" && rec["status"] == "completed" {
			contentRef = obj(t, obj(t, rec["result"], "result")["content"], "result.content")
		}
	}
	if _, ok := contentRef["$artifact"]; !ok {
		t.Fatalf("LLM result content %v, want a ref", contentRef)
	}

	// The run's artifacts, oldest first: made by the offloading store
	// while the run ran (the LLM content among them), not the one this
	// export just made.
	summaries := list(t, l["artifacts"], "artifacts")
	ids := map[any]bool{}
	sources := map[string]bool{}
	prev := ""
	for i, s := range summaries {
		sum := obj(t, s, "artifact summary")
		if got := keys(sum); !reflect.DeepEqual(got, []string{"access", "artifact_id", "blob_id", "content_type",
			"created_at", "descriptor", "metadata", "run_id", "size_bytes", "tags"}) {
			t.Fatalf("summary keys %v", got)
		}
		created := sum["created_at"].(string)
		if created < prev {
			t.Fatalf("artifact %d created %s before its predecessor %s", i, created, prev)
		}
		prev = created
		ids[sum["artifact_id"]] = true
		sources[obj(t, sum["tags"], "tags")["source"].(string)] = true
	}
	if !ids[contentRef["$artifact"]] || ids[noteID] {
		t.Fatalf("artifacts %v: want the LLM content %v, not the export's %s", ids, contentRef["$artifact"], noteID)
	}
	// (The LLM content's artifact is also _temp.llm.content's: same run,
	// same bytes, same id, so its tags are the run store's.)
	for _, want := range []string{offload.SourceRunVars, offload.SourceRunOutput} {
		if !sources[want] {
			t.Fatalf("artifact sources %v lack %s", sources, want)
		}
	}

	// The output was replaced whole by a ref; the session turn still
	// finds its answer by reading the offloaded output back.
	stored, err := st.RunGet(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := artifact.RefID(stored.Output); !ok {
		t.Fatalf("stored output %v, want a ref", stored.Output)
	}
	turns := list(t, obj(t, b["session"], "session")["turns"], "turns")
	if len(turns) != 1 || obj(t, turns[0], "turn")["answer"] != "the big answer" {
		t.Fatalf("turns %v", turns)
	}

	// A second export lists the input artifact too (it is the run's now).
	b2, err := history.Export(ctx, src, id, history.Options{MaxInlineBytes: 200})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(list(t, ledgerOf(t, b2, id)["artifacts"], "artifacts")); got != len(summaries)+1 {
		t.Fatalf("second export lists %d artifacts, want %d", got, len(summaries)+1)
	}

	// Without an artifact store the value stays inline.
	b3, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, id, history.Options{MaxInlineBytes: 200})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj(t, b3["input_data"], "input_data")["notes"]; got != notes {
		t.Fatalf("notes without an artifact store: %.40v", got)
	}
}

// Artifact summaries are bounded, oldest first, and at most 500 per run.
func TestExportArtifactSummaries(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	arts := artifact.NewMemory()
	rt := newRuntime(t, st, arts, newClock())
	id := startTick(t, rt, runtime.StartParams{WorkflowID: "job"})

	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	arts.SetClock(func() time.Time { return at })
	wide := map[string]any{}
	for i := range 90 {
		wide[fmt.Sprintf("k%02d", i)] = i
	}
	long := strings.Repeat("é", 2500)
	deep := map[string]any{"a": map[string]any{"b": map[string]any{"c": map[string]any{"d": map[string]any{"e": map[string]any{"f": "x"}}}}}}
	items := make([]any, 45)
	for i := range items {
		items[i] = i
	}
	if _, err := arts.Put(ctx, artifact.PutParams{Content: []byte("big"), RunID: id, ArtifactID: "a_big",
		Tags:     map[string]string{"note": long},
		Metadata: map[string]any{"long": long, "items": items, "wide": wide, "deep": deep}}); err != nil {
		t.Fatal(err)
	}
	// Older, stored later: listed first.
	at = at.Add(-time.Hour)
	if _, err := arts.Put(ctx, artifact.PutParams{Content: []byte("old"), RunID: id, ArtifactID: "z_old"}); err != nil {
		t.Fatal(err)
	}
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st, Artifacts: arts}, id, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sums := list(t, ledgerOf(t, b, id)["artifacts"], "artifacts")
	if len(sums) != 2 || obj(t, sums[0], "s0")["artifact_id"] != "z_old" || obj(t, sums[1], "s1")["artifact_id"] != "a_big" {
		t.Fatalf("summaries %v", sums)
	}
	s := obj(t, sums[1], "summary")
	if s["run_id"] != id || s["content_type"] != artifact.DefaultContentType || num(t, s["size_bytes"], "size") != 3 ||
		s["created_at"] != "2026-01-01T00:00:00+00:00" || s["blob_id"] != artifact.BlobID([]byte("big")) {
		t.Fatalf("summary header %v", s)
	}
	wantLong := strings.Repeat("é", 2000) + "#TRUNCATION"
	if got := obj(t, s["tags"], "tags")["note"]; got != wantLong {
		t.Fatalf("long tag not cut to 2000 code points: %d bytes", len(got.(string)))
	}
	md := obj(t, s["metadata"], "metadata")
	if md["long"] != wantLong {
		t.Fatal("long metadata string not cut")
	}
	gotItems := list(t, md["items"], "items")
	if len(gotItems) != 41 || num(t, gotItems[39], "items[39]") != 39 ||
		!reflect.DeepEqual(gotItems[40], map[string]any{"truncated_items": json.Number("5")}) {
		t.Fatalf("items %v", gotItems)
	}
	gotWide := obj(t, md["wide"], "wide")
	if len(gotWide) != 81 || gotWide["truncated_keys"] != json.Number("10") {
		t.Fatalf("wide object has %d keys, truncated_keys %v", len(gotWide), gotWide["truncated_keys"])
	}
	if _, kept := gotWide["k80"]; kept { // the 81st key in sorted order
		t.Fatal("a key past the first 80 was kept")
	}
	// metadata is level 0: the value of metadata.deep.a.b.c.d.e is
	// level 6.
	d := obj(t, obj(t, obj(t, obj(t, md["deep"], "deep")["a"], "a")["b"], "b")["c"], "c")["d"]
	if want := map[string]any{"e": "#TRUNCATION: replay metadata depth limit"}; !reflect.DeepEqual(d, want) {
		t.Fatalf("deep value %v", d)
	}
	if d := obj(t, s["descriptor"], "descriptor"); d["schema"] != artifact.DescriptorSchema {
		t.Fatalf("descriptor %v", d)
	}
	if a := obj(t, s["access"], "access"); a["access_count"] != json.Number("0") {
		t.Fatalf("access %v", a)
	}

	// At most 500 per run: the oldest.
	at = at.Add(2 * time.Hour)
	for i := range 501 {
		if _, err := arts.Put(ctx, artifact.PutParams{Content: []byte{byte(i), byte(i >> 8)}, RunID: id}); err != nil {
			t.Fatal(err)
		}
	}
	b, err = history.Export(ctx, history.Source{Runs: st, Ledger: st, Artifacts: arts}, id, history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sums = list(t, ledgerOf(t, b, id)["artifacts"], "artifacts")
	if len(sums) != history.MaxArtifactsPerRun || obj(t, sums[0], "s0")["artifact_id"] != "z_old" ||
		obj(t, sums[1], "s1")["artifact_id"] != "a_big" {
		t.Fatalf("%d summaries, first %v, %v", len(sums), obj(t, sums[0], "s0")["artifact_id"], obj(t, sums[1], "s1")["artifact_id"])
	}
}

// The input_data offload threshold of a bundle is Python's constant
// (history_bundle.py passes DEFAULT_MAX_INLINE_BYTES): the
// ABSTRACTRUNTIME_MAX_INLINE_BYTES variable, which tunes the offloading
// stores, neither moves small values into artifacts nor lets a large one
// stay inline.
func TestExportOffloadThresholdIgnoresStoreVariable(t *testing.T) {
	ctx := context.Background()
	small := strings.Repeat("s", 100)
	big := strings.Repeat("b", 300_000)
	for _, env := range []string{"16", "0", "-1"} {
		t.Run("env="+env, func(t *testing.T) {
			t.Setenv(artifact.EnvMaxInlineBytes, env)
			st := memory.New()
			run := completedRun("r1", "", time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
			run.Vars = map[string]any{"small": small, "big": big}
			if err := st.RunCommit(ctx, &store.CommitParams{Run: run, Create: true}); err != nil {
				t.Fatal(err)
			}
			b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st, Artifacts: artifact.NewMemory()}, "r1", history.Options{})
			if err != nil {
				t.Fatal(err)
			}
			input := obj(t, b["input_data"], "input_data")
			if input["small"] != small {
				t.Errorf("input_data.small = %.60v, want the 100-byte value inline", input["small"])
			}
			if ref, _ := input["big"].(map[string]any); ref["$artifact"] == nil {
				t.Errorf("input_data.big is %T, want a {\"$artifact\"} ref past 262144 bytes", input["big"])
			}
		})
	}
}

// TestExportNegativeLedgerMaxItemsKeepsEveryRecord: Options.LedgerMaxItems
// negative keeps every record (as a non-positive Python limit does), not
// the default window of DefaultLedgerMaxItems.
func TestExportNegativeLedgerMaxItemsKeepsEveryRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memory.New()
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	n := history.DefaultLedgerMaxItems + 1
	recs := make([]*durable.StepRecord, n)
	for i := range recs {
		recs[i] = &durable.StepRecord{RunID: "r", StepID: fmt.Sprint("s", i), NodeID: "n", Status: durable.StepCompleted,
			StartedAt: durable.NewTime(at), Attempt: 1}
	}
	if err := st.RunCommit(ctx, &store.CommitParams{Run: completedRun("r", "", at), Create: true, Records: recs}); err != nil {
		t.Fatal(err)
	}
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, "r", history.Options{LedgerMaxItems: -1})
	if err != nil {
		t.Fatal(err)
	}
	sec := b["ledgers"].(map[string]any)["r"].(map[string]any)
	if items := sec["items"].([]any); len(items) != n || fmt.Sprint(sec["cursor_start"]) != "1" {
		t.Fatalf("LedgerMaxItems -1 kept %d of %d records from cursor %v; want all from 1", len(items), n, sec["cursor_start"])
	}
}

// TestExportCoversAtMostMaxSubruns: a run with more children than
// MaxSubruns yields a bundle covering the run and MaxSubruns descendants.
func TestExportCoversAtMostMaxSubruns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memory.New()
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	if err := st.RunCommit(ctx, &store.CommitParams{Run: completedRun("root", "", at), Create: true}); err != nil {
		t.Fatal(err)
	}
	for i := range history.MaxSubruns + 1 {
		if err := st.RunCommit(ctx, &store.CommitParams{Run: completedRun(fmt.Sprintf("kid-%05d", i), "root", at.Add(time.Duration(i)*time.Millisecond)),
			Create: true}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st}, "root", history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ledgers := b["ledgers"].(map[string]any)
	if len(ledgers) != history.MaxSubruns+1 {
		t.Fatalf("bundle covers %d runs; want the root and MaxSubruns (%d) descendants", len(ledgers), history.MaxSubruns)
	}
	if _, ok := ledgers[fmt.Sprintf("kid-%05d", history.MaxSubruns)]; ok {
		t.Fatalf("the youngest child, past the cap, is in the bundle")
	}
}

// TestExportRunArtifactsTieByID: a ledger section lists the run's
// artifacts oldest first by (created_at, artifact_id): those stored in
// the same instant come in id order.
func TestExportRunArtifactsTieByID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := memory.New()
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	if err := st.RunCommit(ctx, &store.CommitParams{Run: completedRun("r", "", at), Create: true}); err != nil {
		t.Fatal(err)
	}
	arts := artifact.NewMemory()
	arts.SetClock(func() time.Time { return at })
	for _, id := range []string{"bbb", "aaa", "ccc"} {
		if _, err := arts.Put(ctx, artifact.PutParams{Content: []byte(id), RunID: "r", ArtifactID: id}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := history.Export(ctx, history.Source{Runs: st, Ledger: st, Artifacts: arts}, "r", history.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range b["ledgers"].(map[string]any)["r"].(map[string]any)["artifacts"].([]any) {
		got = append(got, a.(map[string]any)["artifact_id"].(string))
	}
	if want := []string{"aaa", "bbb", "ccc"}; !slices.Equal(got, want) {
		t.Fatalf("artifacts = %v, want %v", got, want)
	}
}
