package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/store"
)

// ResumeParams is the input of Resume.
type ResumeParams struct {
	RunID string
	// WaitKey must equal the stored wait key when both are set; "" skips
	// the check (as Python's None does).
	WaitKey string
	// Payload is written at the wait's result key.
	Payload map[string]any
	// MaxSteps for the tick that follows: 0 means the runtime default, a
	// negative value commits the resume without ticking (then the run's
	// workflow need not be registered: the resume runs none of its code,
	// and the run is left running for a runtime that serves it). As
	// Tick's, it caps the run's steps in the whole call, those made when
	// the call resumes it again (its async child's end) included.
	MaxSteps int
	// StepGate is consulted at each step boundary of that tick.
	StepGate StepGate
	// Strict requires the wait to have exactly WaitKey, so that a wait
	// without a key (WAIT_UNTIL), entered after the caller looked, is not
	// taken for theirs. Without it a keyless wait accepts any key, as in
	// Python. The runtime's own resumes (an event's delivery, a child's
	// end) and the scheduler's Respond are strict.
	Strict bool
}

// Resume answers a wait: the payload is written at the wait's result key,
// a resume record is appended, and the run continues at the wait's resume
// node (or completes when the wait has none). A wait is resumed at most
// once: a run that is no longer waiting on that key gives a
// *StaleResumeError; a paused run gives ErrRunPaused. With claims, a run
// another runner holds is waited for a moment, then taken if it is still
// waiting unchanged (see claimHeld), else ErrRunClaimed.
func (r *Runtime) Resume(ctx context.Context, p ResumeParams) (*durable.RunState, error) {
	budget := r.steps(p.MaxSteps)
	if p.MaxSteps < 0 {
		budget = 0 // committed without a tick: no step in this call
	}
	d := r.newDriver(p.StepGate).withBudget(p.RunID, budget)
	run, err := d.resume(ctx, p)
	if err != nil {
		d.keepQueued(ctx)
		return run, err
	}
	return d.finish(ctx, p.RunID, run)
}

// resume is Resume without the drive that follows. A run another runner
// holds is taken over through claimHeld (claimTakeover), whose first claim
// is the usual one: the resume of a free run pays nothing for it.
func (d *driver) resume(ctx context.Context, p ResumeParams) (*durable.RunState, error) {
	return d.resumeClaiming(ctx, p, claimTakeover)
}

// idleWaiting reports whether the run seen is, in the store, as it was
// seen: waiting on the same key, unchanged since (same version), with no
// effect attempt in flight. A paused run counts: a host's resume-run,
// limits or resume of it must not wait out a dead holder's claim either
// (callers that skip paused runs do so themselves). An attempt in flight
// is an ApplyEffect working on the waiting run (a compaction's LLM call):
// its holder commits nothing until the effect returns, so an unchanged
// version does not mean it died, and the run is left to it until its
// claim expires.
func (r *Runtime) idleWaiting(ctx context.Context, seen *durable.RunState) bool {
	if seen.Status != durable.RunWaiting || seen.Waiting == nil {
		return false
	}
	cur, err := r.store.RunGet(ctx, seen.RunID)
	if err != nil || cur.Status != durable.RunWaiting || cur.Waiting == nil ||
		cur.Waiting.WaitKey != seen.Waiting.WaitKey || cur.Version != seen.Version {
		return false
	}
	inFlight, err := r.attemptInFlight(ctx, seen.RunID)
	return err == nil && !inFlight
}

// attemptInFlight reports whether the last ledger records of the run hold
// an effect attempt's STARTED record without its end.
func (r *Runtime) attemptInFlight(ctx context.Context, runID string) (bool, error) {
	n, err := r.store.LedgerCount(ctx, runID)
	if err != nil {
		return false, err
	}
	recs, err := r.store.LedgerList(ctx, &store.LedgerListParams{RunID: runID, After: max(n-tailWindow, 0)})
	if err != nil {
		return false, err
	}
	return len(openAttempts(recs)) > 0, nil
}

// resumeClaiming is resume, claiming the run as mode says (see open).
func (d *driver) resumeClaiming(ctx context.Context, p ResumeParams, mode claimMode) (*durable.RunState, error) {
	// Only a tick needs the workflow: runners sharing a store may each
	// serve some workflows, and one can commit an answer (an event) for a
	// run that another drives.
	ctx, s, unlock, err := d.openRun(ctx, p.RunID, d.claimFor(mode), p.MaxSteps >= 0)
	if err != nil {
		return nil, err
	}
	defer unlock()
	run := s.run
	if IsPaused(run) {
		if isPauseWait(run) {
			return run, fmt.Errorf("resume of run %s: %w (use ResumeRun)", run.RunID, ErrRunPaused)
		}
		return run, fmt.Errorf("resume of run %s: %w", run.RunID, ErrRunPaused)
	}
	// A pause wait without the flag (another writer dropped it) is
	// answered like any wait, as Python's resume refuses paused runs only.
	w := run.Waiting
	if run.Status != durable.RunWaiting || w == nil {
		return run, &StaleResumeError{RunID: run.RunID, Status: string(run.Status), Got: p.WaitKey, NoWait: run.Status == durable.RunWaiting}
	}
	if p.WaitKey != "" && (w.WaitKey != "" || p.Strict) && p.WaitKey != w.WaitKey {
		return run, &StaleResumeError{RunID: run.RunID, Status: string(run.Status), Expected: w.WaitKey, Got: p.WaitKey}
	}
	// A child under a cancelled ancestor (a Python host's cancel_run
	// leaves the children, a kill inside a Cancel the tree) is cancelled
	// rather than answered, as a tick cancels one about to work: the
	// answer would drive it on.
	if ended, err := s.endUnderCancelledParent(ctx); err != nil {
		return s.run, s.claimErr(err)
	} else if ended {
		return s.run, &StaleResumeError{RunID: run.RunID, Status: string(s.run.Status), Expected: w.WaitKey, Got: p.WaitKey}
	}
	payload := p.Payload
	if payload == nil {
		payload = map[string]any{}
	}
	// At the depth the resume record holds it (effect.payload.payload).
	if err := pyjson.CheckMember(payload, "payload", 3); err != nil {
		return run, fmt.Errorf("resume of run %s: %w", run.RunID, err)
	}
	// In the types a read gives ([]map[string]any results as []any):
	// the shapes resumeValue looks for must not depend on how a host
	// built its payload.
	payload, err = pyjson.NormalizeObject(payload)
	if err != nil {
		return run, fmt.Errorf("resume of run %s: %w", run.RunID, err)
	}
	base := s.commits
	// lost reports a resume whose first commit, the one carrying its
	// records, was discarded because another writer answered the wait
	// first: the run reloaded is ended or paused (a cancel that took the
	// run from this runner), or live but no longer on this wait (a writer
	// without this runtime's run lock, such as a second runtime or a
	// Python host on the same store, resumed it). A conflict once that
	// commit landed is not a lost resume: the answer is in.
	lost := func() error {
		if !s.dropped || s.commits != base {
			return nil
		}
		cur := s.run
		if IsPaused(cur) {
			return fmt.Errorf("resume of run %s: %w", run.RunID, ErrRunPaused)
		}
		if cur.Status == durable.RunWaiting && cur.Waiting != nil && cur.Waiting.WaitKey == w.WaitKey {
			// The same wait still (another writer changed only, say,
			// the run's limits): the conflict error stands, worth a retry.
			return nil
		}
		stale := &StaleResumeError{RunID: run.RunID, Status: string(cur.Status), Expected: w.WaitKey, Got: p.WaitKey,
			NoWait: cur.Status == durable.RunWaiting && cur.Waiting == nil}
		if cur.Waiting != nil {
			stale.Expected = cur.Waiting.WaitKey
		}
		return stale
	}
	// failed is the error of a resume that failed with err: a lost resume
	// is reported as such, not as the conflict that revealed it.
	failed := func(err error) error {
		if l := lost(); l != nil {
			return l
		}
		return s.claimErr(err)
	}
	if err := s.applyResume(ctx, w, payload); err != nil && !errors.Is(err, errStop) {
		return s.run, failed(err)
	}
	if s.run.Status != durable.RunRunning {
		return s.run, lost()
	}
	if p.MaxSteps < 0 {
		if err := s.flush(ctx); err != nil && !errors.Is(err, errStop) {
			return s.run, failed(err)
		}
		return s.run, lost()
	}
	err = s.steps(ctx, d.r.steps(p.MaxSteps))
	d.noteStop(s)
	if err != nil && !errors.Is(err, errStop) {
		if s.commits != base {
			// The resume's commit is in: only the steps after it failed.
			return s.run, &resumeLandedError{err: failed(err)}
		}
		return s.run, failed(err)
	}
	return s.run, lost()
}

// resumeLandedError is the error of a resume whose commit landed (the
// wait was answered, the payload is in the run) and whose steps after it
// failed: a delivery reads it as made.
type resumeLandedError struct{ err error }

func (e *resumeLandedError) Error() string { return e.err.Error() }
func (e *resumeLandedError) Unwrap() error { return e.err }

// applyResume writes the payload, queues the resume records and moves the
// run out of its wait. A wait without resume node completes the run
// (committed here); otherwise the run is left running and uncommitted, so
// the resume and the steps that follow share one checkpoint.
func (s *session) applyResume(ctx context.Context, w *durable.WaitState, payload map[string]any) error {
	run := s.run
	stored := any(payload)
	if w.ResultKey != "" {
		stored = resumeValue(w, payload)
		// At the depth vars will hold it (vars.<key segments>): a value
		// too deep there is refused, not left to fail the run at its
		// commit.
		if err := pyjson.CheckMember(stored, "payload", 2+strings.Count(w.ResultKey, ".")); err != nil {
			return fmt.Errorf("resume of run %s at %q: %w", run.RunID, w.ResultKey, err)
		}
		SetPath(run.Vars, w.ResultKey, stored)
		if err := s.syntheticToolCompletion(ctx, w, stored); err != nil {
			return err
		}
	}
	storedObj, _ := stored.(map[string]any)
	if storedObj == nil {
		storedObj = payload
	}
	// The record keeps its own copy: it may wait in pending while the
	// steps that follow change vars.<result_key>.
	s.pending = append(s.pending, s.resumeRecord(ctx, w, pyjson.CloneObject(storedObj)))
	s.dirty = true
	if w.ResumeToNode == "" {
		output := map[string]any{"success": true, "result": stored}
		rec := s.baseRecord(run.CurrentNode, durable.StepCompleted)
		rec.Result = map[string]any{
			"completed": true, "via": "resume", "wait_reason": string(w.Reason),
			"wait_key": nullable(w.WaitKey), "output": output,
		}
		s.pending = append(s.pending, rec)
		return s.finish(ctx, durable.RunCompleted, "", output)
	}
	run.Status = durable.RunRunning
	run.Waiting = nil
	run.CurrentNode = w.ResumeToNode
	return nil
}

// resumeValue is what a resume stores at the result key: the payload,
// except for subworkflow waits that asked to be wrapped as a tool result
// and tool waits whose blocked calls must be merged back.
func resumeValue(w *durable.WaitState, payload map[string]any) any {
	d := w.Details
	_, hasMode := payload["mode"]
	_, hasResults := payload["results"]
	if w.Reason == durable.WaitSubworkflow && truthy(d["wrap_as_tool_result"]) && !(hasMode && hasResults) {
		return wrapSubworkflowResult(d, payload)
	}
	approvalWait := strings.ToLower(pyval.Strip(pyStrOrEmpty(d["mode"]))) == "approval_required"
	if calls, ok := d["tool_calls"].([]any); ok && approvalWait && !(hasMode && hasResults) {
		if _, has := payload["approved"]; has {
			payload = approvalResults(calls, payload)
		}
	}
	return mergeBlockedResults(d, payload)
}

// approvalResults answers the pending calls of an approval_required wait:
// denied ({"approved": false}), each fails with the reason given (default
// "Denied by user"); approved, each fails too, as in Python without a tool
// executor for resumes, which arrives with the tools layer.
func approvalResults(calls []any, payload map[string]any) map[string]any {
	msg := "ToolExecutor is not configured for approval resumes"
	if !truthy(payload["approved"]) {
		msg = "Denied by user"
		// Python: str(reason or "Denied by user").strip()
		if r := payload["reason"]; truthy(r) {
			if text := pyval.Strip(pyval.Str(r)); text != "" {
				msg = text
			}
		}
	}
	// As Python's: the calls that are objects, each with its ids as given
	// (str(call_id or ""), runtime_call_id untouched).
	results := make([]any, 0, len(calls))
	for _, c := range calls {
		call, ok := c.(map[string]any)
		if !ok {
			continue
		}
		results = append(results, map[string]any{
			"call_id": pyStrOrEmpty(call["call_id"]), "runtime_call_id": pyjson.Clone(call["runtime_call_id"]),
			"name": pyStrOrEmpty(call["name"]), "success": false, "output": nil, "error": msg,
		})
	}
	return map[string]any{"mode": "executed", "results": results}
}

// wrapSubworkflowResult is the resume payload of a subworkflow wait that
// asked to be wrapped as a tool result, read as Python reads it: a child
// output {"success": false, ...} is a failed call.
func wrapSubworkflowResult(details, payload map[string]any) map[string]any {
	callID := pyTextOr(details["call_id"], "subworkflow")
	name := pyTextOr(details["tool_name"], "start_subworkflow")
	subRunV := payload["sub_run_id"]
	if !truthy(subRunV) {
		subRunV = details["sub_run_id"]
	}
	subRun := pyTextOr(subRunV, "")
	output := payload["output"]
	entry := map[string]any{"call_id": callID, "name": name, "success": true, "output": nil, "error": nil}
	if om, ok := output.(map[string]any); ok && om["success"] == false {
		entry["success"] = false
		entry["error"] = "Subworkflow failed" // str(error or "Subworkflow failed")
		if e := om["error"]; truthy(e) {
			entry["error"] = pyval.Str(e)
		}
	} else {
		entry["output"] = subworkflowToolOutput(subRun, output)
	}
	return map[string]any{"mode": "executed", "results": []any{entry}}
}

// mergeBlockedResults rebuilds a TOOL_CALLS result positionally from the
// entries fixed at wait time (blocked or pre-executed calls, a
// pre-executed one winning) and the results the host returned for the
// others, as Python does: only when some entries were fixed, the count of
// calls is an integer and the host's results are fewer or more.
func mergeBlockedResults(details, payload map[string]any) any {
	fixed := map[string]any{}
	if b, ok := details["blocked_by_index"].(map[string]any); ok {
		maps.Copy(fixed, b)
	}
	if p, ok := details["pre_results_by_index"].(map[string]any); ok {
		maps.Copy(fixed, p)
	}
	total, isInt := jsonInt(details["original_call_count"])
	results, isList := payload["results"].([]any)
	if len(fixed) == 0 || !isInt || total <= 0 || !isList || int64(len(results)) == total {
		return payload
	}
	merged := make([]any, 0, total)
	next := 0
	for i := int64(0); i < total; i++ {
		if v, ok := fixed[strconv.FormatInt(i, 10)].(map[string]any); ok {
			merged = append(merged, v)
			continue
		}
		if next < len(results) {
			merged = append(merged, results[next])
			next++
			continue
		}
		merged = append(merged, map[string]any{
			"call_id": "", "runtime_call_id": nil, "name": "", "success": false,
			"output": nil, "error": "Missing tool result",
		})
	}
	out := pyjson.CloneObject(payload)
	out["results"] = merged
	if _, ok := out["mode"]; !ok {
		out["mode"] = "executed"
	}
	return out
}

// syntheticToolCompletion appends, for a TOOL_CALLS wait answered by the
// host, a completed record under the waiting record's key, so a replay of
// that tool step reuses the host's results.
func (s *session) syntheticToolCompletion(ctx context.Context, w *durable.WaitState, stored any) error {
	// The ledger is searched for the wait of a tool step only: one whose
	// details come from the tool executor (its mode, its calls), or whose
	// node last traced a tool_calls effect (a host handler's wait may
	// carry neither). Other waits (asks, events) skip a read of the whole
	// ledger.
	if w.WaitKey == "" || (w.Details["tool_calls"] == nil && w.Details["mode"] == nil && !lastTracedToolCalls(s.run)) {
		return nil
	}
	recs, err := s.r.store.LedgerList(ctx, &store.LedgerListParams{RunID: s.run.RunID})
	if err != nil {
		return fmt.Errorf("reading the ledger of run %s: %w", s.run.RunID, err)
	}
	var waiting *durable.StepRecord
	for i := len(recs) - 1; i >= 0; i-- {
		rec := recs[i]
		if rec.Status != durable.StepWaiting || rec.Effect == nil || rec.Effect.Type != durable.EffectToolCalls {
			continue
		}
		wm, err := s.recordWait(ctx, rec)
		if err != nil {
			return err
		}
		if wk, _ := wm["wait_key"].(string); wk == w.WaitKey {
			waiting = rec
			break
		}
	}
	if waiting == nil || waiting.IdempotencyKey == "" {
		return nil
	}
	for _, rec := range recs {
		if rec.Status == durable.StepCompleted && rec.IdempotencyKey == waiting.IdempotencyKey {
			return nil
		}
	}
	done := s.baseRecord(waiting.NodeID, durable.StepCompleted)
	done.Attempt = waiting.Attempt
	done.IdempotencyKey = waiting.IdempotencyKey
	done.Effect = waiting.Effect.Clone()
	done.Result = pyjson.Clone(stored)
	s.pending = append(s.pending, done)
	// The state committed with the record accounts for it: a later turn
	// of a loop must not take it, found under Python's key (the waiting
	// record's, for a run Python left), for a Python completion a kill
	// left unsaved.
	notePythonRecordKept(s.run, done.EndedAt)
	return nil
}

// recordWait returns the wait object of a waiting record as listed (nil
// when it has none), with the values a store's offloading (store/offload,
// Python's OffloadingLedgerStore) moved out of it put back: it walks the
// record depth first, so a large leaf (a prompt, a tool call's argument)
// may be a ref inside an inline wait, and the whole object a ref when its
// members are each under the threshold but together over it. Refs are
// read back from the run's ledger-offload artifacts only; others (the
// handler's own) stay.
func (s *session) recordWait(ctx context.Context, rec *durable.StepRecord) (map[string]any, error) {
	res, _ := rec.Result.(map[string]any)
	v := res["wait"]
	if s.r.arts == nil || !holdsRef(v) {
		wm, _ := v.(map[string]any)
		return wm, nil
	}
	runID := s.run.RunID
	// Restore changes its value in place: the record (in the session's
	// tail, or the caller's list) keeps the wait as stored.
	restored, err := artifact.Restore(ctx, s.r.arts, pyjson.Clone(v), ledgerOffloadOf(runID))
	if err != nil {
		return nil, fmt.Errorf("reading the offloaded wait of step %s in run %s: %w", rec.StepID, runID, err)
	}
	wm, _ := restored.(map[string]any)
	return wm, nil
}

// ledgerOffloadOf accepts the artifacts a store's offloading made of run
// runID's ledger records (either source: Python re-tagged a result's
// artifact as an effect's).
func ledgerOffloadOf(runID string) func(*artifact.Metadata) bool {
	return func(m *artifact.Metadata) bool {
		src := m.Tags["source"]
		return m.RunID == runID && (src == artifact.SourceLedgerResult || src == artifact.SourceLedgerEffect)
	}
}

// holdsRef reports whether v is or holds an artifact ref, without
// allocating: most values hold none, and are then used as read instead
// of copied and restored.
func holdsRef(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := artifact.RefID(x); ok {
			return true
		}
		for _, e := range x {
			if holdsRef(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if holdsRef(e) {
				return true
			}
		}
	}
	return false
}

// jsonInt reads a JSON integer, as Python's isinstance(v, int) accepts
// one: a number written without a fraction or exponent (2.0 is a float).
func jsonInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int64:
		return x, true
	case json.Number:
		n, err := strconv.ParseInt(string(x), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// lastTracedToolCalls reports whether the last step traced at the run's
// current node was a TOOL_CALLS effect.
func lastTracedToolCalls(run *durable.RunState) bool {
	rt, _ := run.Vars["_runtime"].(map[string]any)
	traces, _ := rt["node_traces"].(map[string]any)
	t, _ := traces[run.CurrentNode].(map[string]any)
	steps, _ := t["steps"].([]any)
	if len(steps) == 0 {
		return false
	}
	last, _ := steps[len(steps)-1].(map[string]any)
	eff, _ := last["effect"].(map[string]any)
	return eff["type"] == string(durable.EffectToolCalls)
}
