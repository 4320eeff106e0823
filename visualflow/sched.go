package visualflow

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/runtime"
)

// maxLoopIterations is the guard of for and while (§4.6.6–4.6.7).
const maxLoopIterations = 10000

// runScheduler executes one visit of a control node (§4.6).
func (s *step) runScheduler(n *node) (runtime.StepPlan, error) {
	switch n.Type {
	case "sequence":
		return s.runSequence(n), nil
	case "parallel":
		return s.runParallel(n), nil
	case "loop":
		return s.runLoop(n)
	case "for":
		return s.runFor(n)
	default:
		return s.runWhile(n)
	}
}

// enterFrame implements §4.6.2: it returns the node's frame, fresh when
// the scheduler starts (or restarts on explicit re-entry).
func (s *step) enterFrame(n *node, kind string) (frame map[string]any, fresh bool) {
	c := s.control()
	isReturn := c["return_to"] == n.ID
	if isReturn {
		delete(c, "return_to")
	}
	frames := s.frames()
	f, _ := frames[n.ID].(map[string]any)
	switch {
	case f != nil && f["kind"] == kind && !isReturn:
		f, fresh = map[string]any{"kind": kind}, true
		frames[n.ID] = f
	case f == nil || f["kind"] != kind:
		f, fresh = map[string]any{"kind": kind}, true
		frames[n.ID] = f
		s.push(n.ID)
	}
	if s.activeControl() != n.ID {
		s.push(n.ID)
	}
	return f, fresh
}

// finish ends a scheduler: to its done/completed target when connected,
// else back to the parent control node, else the run completes.
func (s *step) finish(n *node, target, handle string) runtime.StepPlan {
	delete(s.frames(), n.ID)
	s.removeFromStack(n.ID)
	if target != "" {
		s.setHandle(handle)
		return runtime.Next(target)
	}
	if p := s.activeControl(); p != "" {
		s.setReturnTo(p)
		return runtime.Next(p)
	}
	return runtime.Complete(map[string]any{"success": true, "result": s.vars["_last_output"]})
}

// abortScheduler ends scheduler n with the error msg (completion with
// success=false). Its frame and stack entries are dropped first, as the
// reference does for for/while errors, so that inside an enclosing
// control block the control-return rule hands control back to that block
// (§4.6.1) rather than the failed scheduler ending the whole run.
func (s *step) abortScheduler(n *node, msg string) runtime.StepPlan {
	delete(s.frames(), n.ID)
	s.dropFromStack(n.ID)
	return s.failWith(n, msg)
}

// thenHandles lists every declared then:* handle of n, sorted, as the
// reference stores it in the frame (connected or not).
func thenHandles(n *node) []any {
	handles := make([]any, len(n.thens))
	for i, t := range n.thens {
		handles[i] = t.Handle
	}
	return handles
}

// nextBranch advances frame f of sequence or parallel n to the next
// handle in f["then"] that has an edge and returns its target ("" when
// none is left). As in the reference, idx counts positions in the
// frame's own handle list and unconnected handles are skipped here, so a
// frame written by Python (all declared handles) and one written by
// earlier Go versions (connected handles only) both resume where they
// stopped.
func (s *step) nextBranch(n *node, f map[string]any) string {
	handles, ok := f["then"].([]any)
	if !ok {
		handles = thenHandles(n)
		f["then"] = handles
	}
	for idx := max(intOf(f["idx"]), 0); idx < len(handles); {
		h, _ := handles[idx].(string)
		idx++
		if target := n.thenTarget(h); target != "" {
			f["idx"] = int64(idx)
			s.setHandle(h)
			return target
		}
	}
	return ""
}

// thenTarget is the target of n's then handle h ("" when unconnected or
// not declared).
func (n *node) thenTarget(h string) string {
	for _, t := range n.thens {
		if t.Handle == h && h != "" {
			return t.Target
		}
	}
	return ""
}

func (s *step) runSequence(n *node) runtime.StepPlan {
	f, fresh := s.enterFrame(n, "sequence")
	if fresh {
		f["idx"], f["then"] = int64(0), thenHandles(n)
	}
	if target := s.nextBranch(n, f); target != "" {
		return runtime.Next(target)
	}
	return s.finish(n, "", "")
}

func (s *step) runParallel(n *node) runtime.StepPlan {
	f, fresh := s.enterFrame(n, "parallel")
	if fresh {
		f["idx"], f["then"], f["phase"] = int64(0), thenHandles(n), "branches"
		f["completed_target"] = nullable(n.completedTarget)
	}
	if f["phase"] == "completed" {
		// A frame an earlier Go version saved: it stayed on the stack while
		// its completed chain ran, so control coming back means that chain
		// has ended.
		return s.finish(n, "", "")
	}
	if target := s.nextBranch(n, f); target != "" {
		return runtime.Next(target)
	}
	// As the reference, the parallel finishes before its completed chain
	// runs: that chain is outside the block, so a node ending or failing
	// there ends the run (or returns to an enclosing block) as it would
	// without the parallel. The frame's target wins, as in the reference.
	target := n.completedTarget
	if ct, ok := f["completed_target"].(string); ok && ct != "" {
		target = ct
	}
	return s.finish(n, target, "completed")
}

// iterationRecord copies the bus (or wraps it as {"input": bus}).
func (s *step) iterationRecord() (map[string]any, any) {
	bus := s.vars["_last_output"]
	if m, ok := bus.(map[string]any); ok {
		return copyObject(m), bus
	}
	return map[string]any{"input": bus}, bus
}

func (s *step) runLoop(n *node) (runtime.StepPlan, error) {
	f, fresh := s.enterFrame(n, "loop")
	if fresh {
		base := s.busInput() // never the caller's vars, as the reference (see runWhile)
		resolved, err := s.resolveInputs(n, base)
		if err != nil {
			msg := "Loop items resolution failed: " + err.Error()
			s.setFlowError(n.ID, msg)
			return runtime.StepPlan{}, fmt.Errorf("%s", msg)
		}
		src := resolved["items"]
		if _, isObject := base.(map[string]any); len(resolved) == 0 && !isObject {
			src = base // nothing resolved: the node runs on its base input (§4.2)
		}
		var items []any
		switch v := src.(type) {
		case []any:
			items = v
		case nil:
			items = []any{}
		default:
			items = []any{v}
		}
		f["idx"], f["items"] = int64(0), pyval.DeepCopy(items)
	}
	items, _ := f["items"].([]any)
	idx := intOf(f["idx"])
	if n.loopTarget == "" || idx >= len(items) {
		return s.finish(n, n.doneTarget, "done"), nil
	}
	pos := idx
	if pos < 0 {
		// A negative idx (a frame another runtime wrote, or a host edited)
		// indexes from the end, as the reference's items[idx] does; past
		// the start it is Python's IndexError, which fails the run.
		if pos += len(items); pos < 0 {
			return runtime.StepPlan{}, fmt.Errorf("node %s (loop): list index out of range", n.ID)
		}
	}
	rec, _ := s.iterationRecord()
	rec["item"], rec["index"], rec["total"] = items[pos], int64(idx), int64(len(items))
	s.setBus(rec)
	s.setOutput(n.ID, rec)
	f["idx"] = int64(idx + 1)
	s.setHandle("loop")
	return runtime.Next(n.loopTarget), nil
}

// runFor is one visit of a for node (§4.6.6). A range that cannot be
// resolved fails the run (§4.8), as for loop and while.
func (s *step) runFor(n *node) (runtime.StepPlan, error) {
	f, fresh := s.enterFrame(n, "for")
	if fresh {
		resolved, err := s.resolveInputs(n, s.busInput()) // see runWhile
		if err != nil {
			err = fmt.Errorf("For range resolution failed: %w", err)
			s.setFlowError(n.ID, err.Error())
			return runtime.StepPlan{}, err
		}
		start, err1 := pyval.ToFloat(resolved["start"])
		end, err2 := pyval.ToFloat(resolved["end"])
		_, hasStart := resolved["start"]
		_, hasEnd := resolved["end"]
		if !hasStart || !hasEnd || err1 != nil || err2 != nil {
			return s.abortScheduler(n, "For loop requires numeric 'start' and 'end'."), nil
		}
		stepV := 1.0 // also for a step that is not a number, as in the reference
		if v, ok := resolved["step"]; ok && v != nil {
			if sv, err := pyval.ToFloat(v); err == nil {
				stepV = sv
			}
		}
		if stepV == 0 {
			return s.abortScheduler(n, "For loop requires a non-zero 'step'."), nil
		}
		var total any = int64(0) // also for NaN and infinities, as the reference
		switch t := math.Ceil((end - start) / stepV); {
		case t > 0 && t < math.MaxInt64:
			total = int64(t)
		case t >= math.MaxInt64 && !math.IsInf(t, 1):
			total = json.Number(strconv.FormatFloat(t, 'f', 0, 64)) // a Python int beyond int64
		}
		f["start"], f["end"], f["step"], f["i"], f["index"], f["total"] = start, end, stepV, start, int64(0), total
	}
	if n.loopTarget == "" {
		return s.finish(n, n.doneTarget, "done"), nil
	}
	index := intOf(f["index"])
	if index >= maxLoopIterations {
		return s.abortScheduler(n, fmt.Sprintf("For loop exceeded max_iterations=%d", maxLoopIterations)), nil
	}
	i, end, stepV := floatOf(f["i"]), floatOf(f["end"]), floatOf(f["step"])
	// The reference's test, (i >= end) if step > 0 else (i <= end): a NaN
	// step is not > 0 and takes the second branch.
	if (stepV > 0 && i >= end) || (!(stepV > 0) && i <= end) {
		return s.finish(n, n.doneTarget, "done"), nil
	}
	rec, _ := s.iterationRecord()
	rec["i"], rec["index"], rec["total"] = i, int64(index), f["total"]
	s.setBus(rec)
	s.setOutput(n.ID, rec)
	f["i"], f["index"] = i+stepV, int64(index+1)
	s.setHandle("loop")
	return runtime.Next(n.loopTarget), nil
}

func (s *step) runWhile(n *node) (runtime.StepPlan, error) {
	f, fresh := s.enterFrame(n, "while")
	if fresh {
		f["iters"] = int64(0)
	}
	iters := intOf(f["iters"])
	if iters >= maxLoopIterations {
		return s.abortScheduler(n, fmt.Sprintf("While loop exceeded max_iterations=%d", maxLoopIterations)), nil
	}
	// The reference resolves the schedulers' inputs on the bus or {}
	// (run.vars.get("_last_output", {})): neither inputKey nor, before any
	// node wrote the bus, the caller's vars feed items, range or condition.
	base := s.busInput()
	resolved, err := s.resolveInputs(n, base)
	if err != nil {
		msg := "While condition resolution failed: " + err.Error()
		s.setFlowError(n.ID, msg)
		return runtime.StepPlan{}, fmt.Errorf("%s", msg)
	}
	var cond any = resolved["condition"]
	if len(resolved) == 0 {
		cond = base // nothing resolved: the node runs on its base input (§4.2)
	}
	if n.loopTarget == "" || !pyval.Truthy(cond) {
		return s.finish(n, n.doneTarget, "done"), nil
	}
	rec, bus := s.iterationRecord()
	if _, has := rec["item"]; !has {
		rec["item"] = bus
	}
	rec["index"] = int64(iters)
	s.setBus(rec)
	s.setOutput(n.ID, rec)
	f["iters"] = int64(iters + 1)
	s.setHandle("loop")
	return runtime.Next(n.loopTarget), nil
}

// intOf reads a stored counter as the reference does, int(x) (any JSON
// number kind); 0 otherwise.
func intOf(v any) int {
	i, err := pyval.ToInt(v)
	if err != nil {
		return 0
	}
	return int(i)
}

// floatOf reads a stored number; 0 otherwise.
func floatOf(v any) float64 {
	f, err := pyval.ToFloat(v)
	if err != nil {
		return 0
	}
	return f
}

// nullable returns nil for "" and s otherwise.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
