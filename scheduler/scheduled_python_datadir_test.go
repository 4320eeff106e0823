package scheduler_test

// The scheduler and its convenience wrapper
// over deadlines exactly at now and over a data directory the Python
// runtime wrote. Spec runtime-model.md §5.2 (poll: list_due_wait_until
// with until <= now_iso, tick releases it), §2.3 step 3 (now_iso >= until
// releases an UNTIL wait), §5.3 (respond by stored key; not WAIT_UNTIL;
// find_waiting_runs = list_runs(status=waiting, …)); Python
// scheduler/scheduler.py resume_event (get_or_raise before resume: an
// unregistered workflow leaves the run as it was).

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

// TestDeadlineExactlyAtNowIsReleased: a WAIT_UNTIL and a WAIT_EVENT
// whose deadline equals the clock's time are due (until <= now) and one
// poll releases both: the UNTIL run at its resume node, the EVENT run
// timed out.
func TestDeadlineExactlyAtNowIsReleased(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := runtimetest.NewClock(t0)
	rt, _ := setup(t, c, waitFlow(time.Minute), sharedDeadlineFlow(t0.Add(time.Minute)))
	ctx := context.Background()
	untilID, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "wait"})
	eventID, _ := rt.Start(ctx, runtime.StartParams{WorkflowID: "shared_deadline"})
	for _, id := range []string{untilID, eventID} {
		if st, err := rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || st.Status != durable.RunWaiting {
			t.Fatalf("setup %s: %v %v", id, st, err)
		}
	}
	s, err := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Minute - time.Microsecond)
	if n, err := s.PollOnce(ctx); n != 0 || err != nil {
		t.Fatalf("a microsecond before the deadline the poll ticked %d (%v)", n, err)
	}
	c.Advance(time.Microsecond) // exactly at both deadlines
	if n, err := s.PollOnce(ctx); n != 2 || err != nil {
		t.Fatalf("at the deadline the poll ticked %d (%v); want 2", n, err)
	}
	if st, _ := rt.GetState(ctx, untilID); st.Status != durable.RunCompleted {
		t.Errorf("WAIT_UNTIL run at its deadline: %s at %q; want completed", st.Status, st.CurrentNode)
	}
	st, _ := rt.GetState(ctx, eventID)
	if a, _ := st.Vars["a"].(map[string]any); a["timed_out"] != true {
		t.Errorf("WAIT_EVENT run at its deadline: vars.a = %v; want {timed_out: true}", st.Vars["a"])
	}
	if got := s.Stats().RunsResumed; got != 2 {
		t.Errorf("RunsResumed = %d; want 2", got)
	}
}

// pyRun is a run file as Python's JsonFileRunStore writes it (indent 2).
func pyRun(id, wf, status, node, waiting, updated string) string {
	return `{
  "run_id": "` + id + `",
  "workflow_id": "` + wf + `",
  "status": "` + status + `",
  "current_node": "` + node + `",
  "vars": {},
  "waiting": ` + waiting + `,
  "output": null,
  "error": null,
  "created_at": "2026-01-01T00:00:00+00:00",
  "updated_at": "` + updated + `",
  "actor_id": null,
  "session_id": null,
  "parent_run_id": null
}`
}

func pyWait(reason, key, until string) string {
	q := func(s string) string {
		if s == "" {
			return "null"
		}
		return `"` + s + `"`
	}
	return `{
    "reason": "` + reason + `",
    "wait_key": ` + q(key) + `,
    "until": ` + q(until) + `,
    "resume_to_node": "count",
    "result_key": "answer",
    "prompt": null,
    "choices": null,
    "allow_free_text": true,
    "details": null
  }`
}

// TestScheduledOverPythonDataDir: NewScheduled over a JSON-file
// directory Python wrote drives its running run, releases its past
// WAIT_UNTIL, answers user, event and job waits by their stored keys,
// refuses a time wait, leaves a run of a workflow it lacks untouched on
// Respond (as resume_event's get_or_raise does), and FindWaitingRuns
// filters by reason and workflow, newest first, with Python's limits.
func TestScheduledOverPythonDataDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"run":    pyRun("run", "ask", "running", "ask", "null", "2026-01-01T00:00:01+00:00"),
		"past":   pyRun("past", "ask", "waiting", "ask", pyWait("until", "", "2020-01-01T00:00:00+00:00"), "2026-01-01T00:00:02+00:00"),
		"future": pyRun("future", "ask", "waiting", "ask", pyWait("until", "", "2099-01-01T00:00:00+00:00"), "2026-01-01T00:00:03+00:00"),
		"user":   pyRun("user", "ask", "waiting", "ask", pyWait("user", "user:user:ask", ""), "2026-01-01T00:00:04+00:00"),
		"event":  pyRun("event", "ask", "waiting", "ask", pyWait("event", "evt:run:event:go", ""), "2026-01-01T00:00:05+00:00"),
		"job":    pyRun("job", "ask", "waiting", "ask", pyWait("job", "job:7", ""), "2026-01-01T00:00:06+00:00"),
		"other":  pyRun("other", "elsewhere", "waiting", "ask", pyWait("user", "user:other:ask", ""), "2026-01-01T00:00:07+00:00"),
	}
	for id, text := range files {
		if err := os.WriteFile(filepath.Join(dir, "run_"+id+".json"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	wf := longAfterAsk("ask", true)
	reg, _ := runtime.NewRegistry(wf)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sch, err := scheduler.NewScheduled(ctx, rt, scheduler.Config{PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer sch.Close()

	deadline := time.Now().Add(10 * time.Second)
	for {
		past, _ := sch.GetState(ctx, "past")
		run, _ := sch.GetState(ctx, "run")
		if past.Status == durable.RunCompleted && run.Status == durable.RunWaiting && run.Waiting.Reason == durable.WaitUser {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not driven: past %s at %q, run %s at %q", past.Status, past.CurrentNode, run.Status, run.CurrentNode)
		}
		time.Sleep(10 * time.Millisecond)
	}

	waitingUser, err := sch.FindWaitingRuns(ctx, durable.WaitUser, "", 0)
	var ids []string
	for _, r := range waitingUser {
		ids = append(ids, r.RunID)
	}
	if !slices.Contains(ids, "user") || !slices.Contains(ids, "other") || !slices.Contains(ids, "run") || err != nil {
		t.Errorf("FindWaitingRuns(user) = %v, %v", ids, err)
	}
	if rs, err := sch.FindWaitingRuns(ctx, durable.WaitUser, "elsewhere", 0); err != nil || len(rs) != 1 || rs[0].RunID != "other" {
		t.Errorf("FindWaitingRuns(user, elsewhere) = %d runs, %v", len(rs), err)
	}
	if rs, err := sch.FindWaitingRuns(ctx, durable.WaitUntil, "", 0); err != nil || len(rs) != 1 || rs[0].RunID != "future" {
		t.Errorf("FindWaitingRuns(until) = %d runs, %v; want the future one", len(rs), err)
	}
	if rs, err := sch.FindWaitingRuns(ctx, "", "ask", -5); err != nil || len(rs) != 1 {
		t.Errorf("FindWaitingRuns(limit -5) = %d runs, %v; want 1 (Python: max(1, limit))", len(rs), err)
	}
	if rs, err := sch.FindWaitingRuns(ctx, durable.WaitEvent, "", 0); err != nil || len(rs) != 1 || rs[0].RunID != "event" {
		t.Errorf("FindWaitingRuns(event) = %d runs, %v", len(rs), err)
	}

	for _, id := range []string{"user", "event", "job"} {
		got, err := sch.Respond(ctx, id, map[string]any{"text": id})
		if err != nil || got.Status != durable.RunCompleted {
			t.Errorf("Respond(%s) = %v, %v", id, got, err)
			continue
		}
		if a, _ := got.Vars["answer"].(map[string]any); a["text"] != id {
			t.Errorf("Respond(%s): vars.answer = %v", id, got.Vars["answer"])
		}
	}
	if _, err := sch.Respond(ctx, "future", map[string]any{}); err == nil || !strings.Contains(err.Error(), "time") {
		t.Errorf("Respond to a WAIT_UNTIL run: %v; want refused", err)
	}
	if _, err := sch.Respond(ctx, "other", map[string]any{"text": "x"}); err == nil {
		t.Error("Respond to a run of a workflow this runtime lacks succeeded")
	}
	if other, err := sch.GetState(ctx, "other"); err != nil || other.Status != durable.RunWaiting || other.Waiting.WaitKey != "user:other:ask" ||
		other.Vars["answer"] != nil {
		t.Errorf("run of an unserved workflow after Respond: %+v, %v; want untouched", other, err)
	}
	var stale *runtime.StaleResumeError
	if _, err := sch.Resume(ctx, runtime.ResumeParams{RunID: "future", WaitKey: "user:future:ask", Strict: true}); !errors.As(err, &stale) {
		t.Errorf("strict resume of a WAIT_UNTIL with a key: %v; want a StaleResumeError", err)
	}
}

// TestPythonSubworkflowPairsResume: a parent Python left waiting
// (async+wait, §3.6) on a child that has since completed is resumed by
// NewScheduled's recovery with {"sub_run_id", "output"} at its result key
// (the payload Scheduler.resume_subworkflow_parent sends, §5.2); a parent
// waiting on a child that waits for a user is resumed when Respond
// answers the child (compatibility.md: resumed automatically).
func TestPythonSubworkflowPairsResume(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	subWait := func(child, extra string) string {
		return `{
    "reason": "subworkflow",
    "wait_key": "subworkflow:` + child + `",
    "until": null,
    "resume_to_node": "after",
    "result_key": "sub",
    "prompt": null,
    "choices": null,
    "allow_free_text": true,
    "details": {
      "sub_run_id": "` + child + `",
      "sub_workflow_id": "child",
      ` + extra + `
      "include_traces": false
    }
  }`
	}
	withParent := func(text, parent string) string {
		return strings.Replace(text, `"parent_run_id": null`, `"parent_run_id": "`+parent+`"`, 1)
	}
	files := map[string]string{
		"P1": pyRun("P1", "parent", "waiting", "start", subWait("C1", `"async": true,`), "2026-01-01T00:00:01+00:00"),
		"C1": withParent(strings.Replace(pyRun("C1", "child", "completed", "x", "null", "2026-01-01T00:00:02+00:00"),
			`"output": null`, `"output": {"success": true, "result": 42}`, 1), "P1"),
		"P2": pyRun("P2", "parent", "waiting", "start", subWait("C2", `"sub_waiting": {"reason": "user", "wait_key": "user:C2:x"},`), "2026-01-01T00:00:03+00:00"),
		"C2": withParent(pyRun("C2", "child", "waiting", "x", pyWait("user", "user:C2:x", ""), "2026-01-01T00:00:04+00:00"), "P2"),
	}
	for id, text := range files {
		if err := os.WriteFile(filepath.Join(dir, "run_"+id+".json"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	st, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	done := func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
		return runtime.Complete(map[string]any{"sub": run.Vars["sub"], "answer": run.Vars["answer"]}), nil
	}
	reg, _ := runtime.NewRegistry(
		&runtime.Workflow{ID: "parent", Entry: "start", Nodes: map[string]runtime.NodeFunc{"start": done, "after": done}},
		&runtime.Workflow{ID: "child", Entry: "x", Nodes: map[string]runtime.NodeFunc{"x": done, "count": done}},
	)
	rt, err := runtime.New(runtime.Config{Store: st, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sch, err := scheduler.NewScheduled(ctx, rt, scheduler.Config{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer sch.Close()
	p1, err := sch.GetState(ctx, "P1")
	if err != nil || p1.Status != durable.RunCompleted {
		t.Fatalf("P1 after Start's recovery = %v, %v; want completed", p1, err)
	}
	sub, _ := p1.Output["sub"].(map[string]any)
	out, _ := sub["output"].(map[string]any)
	if sub["sub_run_id"] != "C1" || out["success"] != true || out["result"] == nil {
		t.Errorf("P1 got %v at its result key; want {sub_run_id: C1, output: the child's output}", p1.Output["sub"])
	}
	if c2, err := sch.Respond(ctx, "C2", map[string]any{"text": "hi"}); err != nil || c2.Status != durable.RunCompleted {
		t.Fatalf("Respond(C2) = %v, %v", c2, err)
	}
	p2, err := sch.GetState(ctx, "P2")
	if err != nil || p2.Status != durable.RunCompleted {
		t.Fatalf("P2 after its child ended = %v, %v; want completed", p2, err)
	}
	if sub, _ := p2.Output["sub"].(map[string]any); sub["sub_run_id"] != "C2" {
		t.Errorf("P2 got %v at its result key", p2.Output["sub"])
	}
}
