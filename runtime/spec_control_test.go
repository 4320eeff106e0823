package runtime_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// specControl returns vars._runtime.control of run.
func specControl(run *durable.RunState) map[string]any {
	ns, _ := run.Vars["_runtime"].(map[string]any)
	ctl, _ := ns["control"].(map[string]any)
	return ctl
}

// Spec §2.7: pause_run sets `_runtime.control.paused = true` and `paused_at`,
// and a `running` run becomes `waiting` on the synthetic wait {reason:"user",
// wait_key:"pause:<run_id>", resume_to_node:<current_node>, prompt:"Paused",
// choices:null, allow_free_text:false, details:{"kind":"pause"}}.
func TestSpecPauseOfRunningRunEntersThePauseWait(t *testing.T) {
	f := setup(t, chain(2))
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if _, err := f.rt.Pause(ctx, id, ""); err != nil {
		t.Fatal(err)
	}
	run := mustGet(t, f.rt, id)
	if ctl := specControl(run); ctl["paused"] != true || ctl["paused_at"] == nil {
		t.Errorf("control %v; want paused true and a paused_at", ctl)
	}
	if _, has := specControl(run)["pause_reason"]; has {
		t.Errorf("control %v; no pause_reason without a reason", specControl(run))
	}
	w := run.Waiting
	if run.Status != durable.RunWaiting || w == nil {
		t.Fatalf("run %s waiting %v; want waiting on the pause wait", run.Status, w)
	}
	if w.Reason != durable.WaitUser || w.WaitKey != "pause:"+id || w.ResumeToNode != "n0" || w.Prompt != "Paused" ||
		w.AllowFreeText || w.ChoiceValues() != nil || feJSON(w.Details) != `{"kind":"pause"}` || w.ResultKey != "" || !w.Until.IsZero() {
		t.Errorf("pause wait %+v; want user, pause:<id>, resume to n0, prompt Paused, no free text, no choices, details {kind: pause}", w)
	}
	// resume_run returns it to running at resume_to_node; the tick ends it.
	run, err := f.rt.ResumeRun(ctx, id)
	if err != nil || run.Status != durable.RunCompleted {
		t.Fatalf("ResumeRun: %v %v", run, err)
	}
}

// Spec §2.7: a run waiting on anything but a real USER wait is paused in
// place (the flag only: "A `running` run additionally becomes `waiting`"),
// and resume_run leaves it on that wait.
func TestSpecPauseOfEventWaitKeepsTheWait(t *testing.T) {
	f := setup(t, oneEffect("ev", func() *durable.Effect {
		return &durable.Effect{Type: durable.EffectWaitEvent, Payload: map[string]any{"wait_key": "evt:x"}, ResultKey: "r"}
	}))
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ev"})
	if run, err := f.rt.Tick(ctx, id, runtime.TickOptions{}); err != nil || run.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", run, err)
	}
	if _, err := f.rt.Pause(ctx, id, "why"); err != nil {
		t.Fatal(err)
	}
	run := mustGet(t, f.rt, id)
	if !runtime.IsPaused(run) || run.Status != durable.RunWaiting || run.Waiting == nil ||
		run.Waiting.Reason != durable.WaitEvent || run.Waiting.WaitKey != "evt:x" {
		t.Fatalf("paused run %s wait %+v; want the event wait kept and the pause flag set", run.Status, run.Waiting)
	}
	if specControl(run)["pause_reason"] != "why" {
		t.Errorf("control %v; want pause_reason \"why\"", specControl(run))
	}
	run, err := f.rt.ResumeRun(ctx, id)
	if err != nil || runtime.IsPaused(run) || run.Status != durable.RunWaiting || run.Waiting.WaitKey != "evt:x" {
		t.Fatalf("ResumeRun: %v %+v; want unpaused and still waiting on evt:x", err, run)
	}
}

// Spec §2.8: cancel_run without a reason sets status cancelled, error
// "Cancelled", waiting null, removes `_runtime.control.paused`, and appends
// the terminal status event (`text: "cancelled"`).
func TestSpecCancelOfPausedRunDefaultsAndStatusEvent(t *testing.T) {
	f := setup(t, chain(2))
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if _, err := f.rt.Pause(ctx, id, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := f.rt.Cancel(ctx, id, ""); err != nil {
		t.Fatal(err)
	}
	run := mustGet(t, f.rt, id)
	if run.Status != durable.RunCancelled || run.Error != "Cancelled" || run.Waiting != nil {
		t.Errorf("run %s error %q waiting %v; want cancelled, \"Cancelled\", no wait", run.Status, run.Error, run.Waiting)
	}
	if _, has := specControl(run)["paused"]; has {
		t.Errorf("control %v; cancel must remove paused", specControl(run))
	}
	recs, _ := f.rt.GetLedger(ctx, id)
	if len(recs) == 0 {
		t.Fatal("no ledger record after the cancel")
	}
	last := recs[len(recs)-1]
	if !runtime.IsTerminalStatusRecord(last) || feJSON(last.Effect.Payload["payload"]) != `{"text":"cancelled"}` {
		t.Errorf("last record %+v; want the abstract.status event with text cancelled", last)
	}
}

// Spec §2.7 / §2.8: pause_run is a no-op on an already-paused run (the
// first pause's reason and time stay), and cancel_run returns a terminal
// run unchanged (no second status event).
func TestSpecRepeatedPauseAndCancelAreNoOps(t *testing.T) {
	f := setup(t, chain(2))
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if _, err := f.rt.Pause(ctx, id, "one"); err != nil {
		t.Fatal(err)
	}
	first := mustGet(t, f.rt, id)
	f.now = f.now.Add(time.Minute)
	if _, err := f.rt.Pause(ctx, id, "two"); err != nil {
		t.Fatal(err)
	}
	second := mustGet(t, f.rt, id)
	if second.Version != first.Version || feJSON(specControl(second)) != feJSON(specControl(first)) {
		t.Errorf("second pause changed the run: control %v -> %v", specControl(first), specControl(second))
	}
	if _, err := f.rt.Cancel(ctx, id, "stop"); err != nil {
		t.Fatal(err)
	}
	cancelled := mustGet(t, f.rt, id)
	before, _ := f.rt.GetLedger(ctx, id)
	again, err := f.rt.Cancel(ctx, id, "again")
	after, _ := f.rt.GetLedger(ctx, id)
	if err != nil || again.Status != durable.RunCancelled || again.Error != "stop" || again.Version != cancelled.Version || len(after) != len(before) {
		t.Errorf("cancel of a cancelled run: %v, error %q, version %d -> %d, ledger %d -> %d; want it unchanged",
			err, again.Error, cancelled.Version, again.Version, len(before), len(after))
	}
}
