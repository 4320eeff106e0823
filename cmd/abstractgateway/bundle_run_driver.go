package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store/observe"
	"github.com/abstractframework/abstractgateway/visualflow"
)

// tickSteps is the step budget of one tick of bundle run (its runtime's
// MaxSteps). The driver ticks a run again as long as it is running, so
// the budget bounds no run; it is kept small enough that the records of
// one tick fit in the ledger subscription's buffer (followBuffer) and
// are all printed between ticks.
const tickSteps = 1000

// bundleDriver drives one run to its end from the command line.
type bundleDriver struct {
	rt          *runtime.Runtime
	follow      *observe.Subscription
	answers     []string
	in          *bufio.Reader
	interactive bool
	out         io.Writer
	// wantID (--run-id), when set, is the id of the run to continue, or
	// to create under that id when absent; "" starts a new run.
	wantID string
	// runID is set by run as soon as the run exists, so a caller can name
	// the run even when driving it failed or was interrupted.
	runID string
	// unanswered is the question run stopped at for want of an answer,
	// and unansweredRun the run that asks it when not the root (one of
	// its listeners or subflows).
	unanswered    *durable.WaitState
	unansweredRun string
	// started, when set, is told the run's id as soon as the run exists.
	started func(id string)
	// flow is the entry flow, whose event listener workflows are started
	// beside the run (visualflow.md §5.7); nil when unknown.
	flow *visualflow.FlowInfo
}

// start creates the run, or takes the existing one wantID names. A run
// created without --run-id carries no creation digest, which Start's
// identity check would count as another identity than any request's
// (Python's rule): it is continued when its workflow is the entrypoint's,
// what the printed continue command asks for.
func (d *bundleDriver) start(ctx context.Context, workflowID string, vars map[string]any) (string, error) {
	if d.wantID != "" {
		st, err := d.rt.GetState(ctx, d.wantID)
		if err == nil && st.WorkflowID == workflowID && !hasCreationDigest(st) {
			return st.RunID, nil
		}
	}
	// Its own session, as the gateway gives a sessionless start: a
	// subflow's session-scoped emit_event then reaches the root's on_event
	// listeners, which StartListeners puts in that session.
	return d.rt.Start(ctx, runtime.StartParams{WorkflowID: workflowID, Vars: vars, RunID: d.wantID, SessionFromRunID: true})
}

// hasCreationDigest reports whether a run was created under an explicit
// id (vars._meta.creation_digest).
func hasCreationDigest(st *durable.RunState) bool {
	meta, _ := st.Vars["_meta"].(map[string]any)
	return meta["creation_digest"] != nil
}

// run starts the run (or takes the existing one, see wantID) and drives it
// until it ends or waits for something it cannot give.
func (d *bundleDriver) run(ctx context.Context, workflowID string, vars map[string]any) (*durable.RunState, error) {
	id, err := d.start(ctx, workflowID, vars)
	if err != nil {
		return nil, err
	}
	d.runID = id
	if d.started != nil {
		d.started(id)
	}
	if err := d.startListeners(ctx, id); err != nil {
		return nil, err
	}
	st, err := d.rt.Tick(ctx, id, runtime.TickOptions{})
	for err == nil {
		d.printRecords()
		if !unfinished(st) {
			if st.Status.Terminal() {
				return st, d.closeSession(ctx, id)
			}
			return st, nil // waits for something it cannot give
		}
		// The run, or the deepest of the subflows it waits on, is running
		// (it used a tick's budget), or waits for a person or a time: tick
		// it, answer it or sleep through it, and the kernel resumes the
		// runs above it.
		chain, terr := d.deepestWaiting(ctx, st)
		if terr != nil {
			return st, terr
		}
		if chain != nil && runtime.IsPaused(chain) {
			fmt.Fprintf(d.out, "… run %s is paused by its host (nothing in this command lifts a pause)\n", chain.RunID)
			return st, nil
		}
		target := chain
		if chain != nil && !due(chain) {
			// The chain waits for something from outside it, such as an
			// event: one of the run's event listeners may be what gives
			// it, once its branch is driven like the chain (it asks the
			// user, sleeps or is running). Python's runner ticks every
			// run, listeners included (gateway-api §8.3).
			if target, terr = d.listenerToDrive(ctx, id); terr != nil {
				return st, terr
			}
		}
		if target == nil {
			// Nothing to drive, unless deepestWaiting resumed a chain (its
			// end reaching this run or a listener): go on from the run as
			// it is.
			now, gerr := d.rt.GetState(ctx, id)
			if gerr != nil {
				return st, gerr
			}
			if now.Version == st.Version {
				if chain != nil && chain.Waiting != nil {
					w := chain.Waiting
					fmt.Fprintf(d.out, "… waiting for %s %q (nothing in this command can deliver it)\n", w.Reason, w.WaitKey)
				}
				return st, nil
			}
			st = now
			continue
		}
		if err := ctx.Err(); err != nil {
			return st, err
		}
		answered, serr := d.step(ctx, target)
		if serr != nil || !answered {
			return st, serr
		}
		st, err = d.rt.GetState(ctx, id)
	}
	return st, err
}

// dueAt reports whether the driver can move r, a run that waits on no
// child, and from when: at once (zero time) when it is running or asks a
// question, at its time for a wait_until. ok is false when r is paused or
// waits for anything else (an event, a job).
func dueAt(r *durable.RunState) (at time.Time, ok bool) {
	switch w := r.Waiting; {
	case r.Status == durable.RunRunning:
		return time.Time{}, true
	case w == nil || runtime.IsPaused(r):
		return time.Time{}, false
	case w.Reason == durable.WaitUser && w.WaitKey != "":
		return time.Time{}, true
	case !w.Until.IsZero():
		return w.Until.Time, true
	}
	return time.Time{}, false
}

// due reports whether the driver can move r (see dueAt).
func due(r *durable.RunState) bool {
	_, ok := dueAt(r)
	return ok
}

// step moves target, a run dueAt accepts, on: ticks it when running,
// answers its question (answered is false when there is no answer to
// give), or sleeps until its time and ticks it. The kernel resumes the
// runs waiting on it.
func (d *bundleDriver) step(ctx context.Context, target *durable.RunState) (answered bool, err error) {
	w := target.Waiting
	switch {
	case target.Status == durable.RunRunning:
		ts, err := d.rt.Tick(ctx, target.RunID, runtime.TickOptions{})
		if err == nil && ts.Status == durable.RunRunning && ts.UpdatedAt.Equal(target.UpdatedAt.Time) {
			return true, fmt.Errorf("run %s: a tick made no progress", target.RunID)
		}
		return true, err
	case w.Reason == durable.WaitUser:
		asker := d.askerLabel(target.RunID)
		text, ok := d.answer(ctx, w, asker)
		if !ok {
			d.unanswered, d.unansweredRun = w, asker
			return false, ctx.Err()
		}
		_, err := d.rt.Resume(ctx, runtime.ResumeParams{RunID: target.RunID, WaitKey: w.WaitKey,
			Payload: map[string]any{"response": text}})
		return true, err
	default:
		fmt.Fprintf(d.out, "… waiting until %s\n", w.Until)
		if err := sleepUntil(ctx, w.Until.Time); err != nil {
			return true, err
		}
		_, err := d.rt.Tick(ctx, target.RunID, runtime.TickOptions{})
		return true, err
	}
}

// listenerToDrive returns the run to drive among run root's event
// listeners that have not ended (each followed down the subflows it waits
// on, as the root is): the first, in the order of the flow's listeners
// (oldest run first), that is running or asks a question, else the one
// whose wait_until is due first; nil when every listener waits for
// something this command cannot give (an event, most often its own).
func (d *bundleDriver) listenerToDrive(ctx context.Context, root string) (*durable.RunState, error) {
	if len(d.listeners()) == 0 {
		return nil, nil
	}
	runs, err := d.listenerRuns(ctx, root)
	if err != nil {
		return nil, err
	}
	var next *durable.RunState
	var nextAt time.Time
	for _, wf := range d.listeners() {
		for _, l := range runs[wf] {
			if !unfinished(l) {
				continue
			}
			target, err := d.deepestWaiting(ctx, l)
			if err != nil {
				return nil, err
			}
			if target == nil {
				continue // its chain cannot go on (or went on: the caller sees it)
			}
			at, ok := dueAt(target)
			if !ok {
				continue
			}
			if at.IsZero() {
				return target, nil
			}
			if next == nil || at.Before(nextAt) {
				next, nextAt = target, at
			}
		}
	}
	return next, nil
}

// deepestWaiting follows the chain of runs waiting on a child from st (a
// waiting or running run) down to the last one, which is running or waits
// for something else: st itself when it does; nil when the chain cannot
// go on. A run still waiting on a child that ended (a kill came between
// the child's last commit and its parent's resume) is resumed here, as a
// scheduler's Recover would, and followed from its new state.
func (d *bundleDriver) deepestWaiting(ctx context.Context, st *durable.RunState) (*durable.RunState, error) {
	cur := st
	for range maxSubflowDepth {
		if cur.Status == durable.RunRunning || cur.Waiting == nil || cur.Waiting.Reason != durable.WaitSubworkflow {
			return cur, nil
		}
		child := runtime.WaitedChild(cur)
		if child == "" {
			return nil, nil
		}
		cs, err := d.rt.GetState(ctx, child)
		if err != nil {
			return nil, err
		}
		if !unfinished(cs) {
			if err := d.rt.NotifyChildEnded(ctx, child); err != nil {
				return nil, err
			}
			again, err := d.rt.GetState(ctx, cur.RunID)
			if err != nil {
				return nil, err
			}
			if !unfinished(again) || runtime.WaitedChild(again) == child {
				return nil, nil // ended, or not resumed (paused)
			}
			cur = again
			continue
		}
		cur = cs
	}
	return nil, fmt.Errorf("run %s: subflows waiting more than %d levels deep", st.RunID, maxSubflowDepth)
}

// unfinished reports whether r is running or waits for something: a run
// the driver goes on with.
func unfinished(r *durable.RunState) bool {
	return r.Status == durable.RunRunning || r.Status == durable.RunWaiting && r.Waiting != nil
}

// maxSubflowDepth bounds the chain deepestWaiting follows.
const maxSubflowDepth = 100

// sleepUntil waits until t, or fails when ctx ends first (a signal).
func sleepUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// readLine reads a line from r, giving up when ctx ends (Ctrl-C, SIGTERM):
// a terminal read cannot be interrupted, so it is left to finish in the
// background while the command exits.
func readLine(ctx context.Context, r *bufio.Reader) (string, error) {
	type result struct {
		line string
		err  error
	}
	c := make(chan result, 1)
	go func() {
		line, err := r.ReadString('\n')
		c <- result{line, err}
	}()
	select {
	case res := <-c:
		return res.line, res.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// askerLabel is "" for run id when it is the root, else id itself: a
// question a listener or a subflow asks is prompted with the id of its
// run, so the user can tell whose it is (the root's may come before or
// after it, and a listener's may come after the root has completed).
func (d *bundleDriver) askerLabel(id string) string {
	if id == d.runID {
		return ""
	}
	return id
}

// answer returns the next scripted answer, else one read from the
// terminal; ok is false when there is none (or ctx ended). asker, when
// set, is the run asking w (see askerLabel).
func (d *bundleDriver) answer(ctx context.Context, w *durable.WaitState, asker string) (string, bool) {
	prompt := w.Prompt
	if len(w.Choices) > 0 {
		prompt += " " + fmt.Sprint(w.Choices)
	}
	if asker != "" {
		prompt = "[" + asker + "] " + prompt
	}
	if len(d.answers) > 0 {
		text := d.answers[0]
		d.answers = d.answers[1:]
		fmt.Fprintf(d.out, "? %s\n> %s\n", prompt, text)
		return text, true
	}
	if !d.interactive {
		fmt.Fprintf(d.out, "? %s\n(no --answer left and stdin is not a terminal)\n", prompt)
		return "", false
	}
	fmt.Fprintf(d.out, "? %s\n> ", prompt)
	line, err := readLine(ctx, d.in)
	if err != nil && line == "" {
		return "", false
	}
	return strings.TrimRight(line, "\r\n"), true
}

// printRecords prints the ledger records written since the last call.
func (d *bundleDriver) printRecords() {
	for {
		select {
		case ev, ok := <-d.follow.C:
			if !ok {
				return
			}
			for _, r := range ev.Records {
				printLedgerLine(d.out, r, d.runLabel(r.RunID))
			}
		default:
			if d.follow.Lagged() {
				fmt.Fprintln(d.out, "  … more records were written than shown here (the ledger keeps them all)")
			}
			return
		}
	}
}

// runLabel is how a ledger line names a run: the first 8 characters of
// its id, plus what follows the run's id for one of its listeners (which
// shares that prefix).
func (d *bundleDriver) runLabel(id string) string {
	if d.runID != "" && id != d.runID && strings.HasPrefix(id, d.runID) {
		return shortID(d.runID) + id[len(d.runID):]
	}
	return shortID(id)
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func printLedgerLine(out io.Writer, r *durable.StepRecord, run string) {
	kind := "complete"
	if r.Effect != nil {
		kind = string(r.Effect.Type)
	}
	line := fmt.Sprintf("  %s #%-3d %-22s %-10s %s", run, r.Seq, r.NodeID, r.Status, kind)
	if r.Error != "" {
		line += "  error: " + r.Error
	}
	fmt.Fprintln(out, line)
}

// listenerRuns returns root's listener runs by workflow id
// (visualflow.FlowInfo.ListenerRuns).
func (d *bundleDriver) listenerRuns(ctx context.Context, root string) (map[string][]*durable.RunState, error) {
	return d.flow.ListenerRuns(ctx, d.rt, root)
}

// startListeners starts the flow's event listeners as children of run
// root, as the gateway does (visualflow.FlowInfo.StartListeners).
func (d *bundleDriver) startListeners(ctx context.Context, root string) error {
	if len(d.listeners()) == 0 {
		return nil
	}
	_, err := d.flow.StartListeners(ctx, d.rt, root, 0)
	return err
}

// closeSession ends the session of run root once root has ended, as
// AbstractFlow's VisualSessionRunner does: the listeners still in a
// branch (one the root's own emit_event may have started) are driven
// until none can move, so that branch finishes rather than being cut
// off; then the idle ones are stopped (stopListeners). A listener's
// question with no answer to give stops it there, listeners left as they
// are (d.unanswered is set): the command exits waiting, and continuing
// the run answers the question and closes the session then.
func (d *bundleDriver) closeSession(ctx context.Context, root string) error {
	for {
		target, err := d.listenerToDrive(ctx, root)
		if err != nil {
			return err
		}
		if target == nil {
			return d.stopListeners(ctx, root)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		// The records of the last step come before a prompt.
		d.printRecords()
		if answered, err := d.step(ctx, target); err != nil || !answered {
			return err
		}
	}
}

// listeners returns the entry flow's event listener workflows.
func (d *bundleDriver) listeners() []string {
	if d.flow == nil {
		return nil
	}
	return d.flow.Listeners
}

// stopListeners cancels root's idle listeners
// (visualflow.FlowInfo.StopListeners).
func (d *bundleDriver) stopListeners(ctx context.Context, root string) error {
	if len(d.listeners()) == 0 {
		return nil
	}
	return d.flow.StopListeners(ctx, d.rt, root)
}
