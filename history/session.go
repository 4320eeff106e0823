package history

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/store"
)

// Turn kinds of a session turn.
const (
	TurnInternal  = "internal"  // workflow id starting with "__"; never listed
	TurnScheduled = "scheduled" // "scheduled:" workflow or vars._meta.schedule
	TurnChat      = "chat"      // vars.context.messages is a list
	TurnRun       = "run"       // anything else
)

// classifyTurn tells what kind of turn a root run is.
func classifyTurn(workflowID string, vars map[string]any) string {
	switch {
	case strings.HasPrefix(workflowID, "__"):
		return TurnInternal
	case strings.HasPrefix(workflowID, "scheduled:"):
		return TurnScheduled
	}
	if meta := object(vars["_meta"]); meta != nil && object(meta["schedule"]) != nil {
		return TurnScheduled
	}
	if ctx := object(vars["context"]); ctx != nil {
		if _, ok := ctx["messages"].([]any); ok {
			return TurnChat
		}
	}
	return TurnRun
}

// sessionSection is the "session" section: the session's root runs up to
// the exported one, as turns.
func (e *exporter) sessionSection(ctx context.Context, run *durable.RunState, sessionID string) (map[string]any, error) {
	limit := e.opts.SessionTurnLimit
	if limit <= 0 {
		limit = DefaultSessionTurnLimit
	}
	roots, err := e.sessionRoots(ctx, run, sessionID, limit)
	if err != nil {
		return nil, err
	}
	turns := make([]any, 0, len(roots))
	for _, r := range roots {
		t, err := e.turn(ctx, r)
		if err != nil {
			return nil, err
		}
		turns = append(turns, t)
	}
	return map[string]any{"session_id": sessionID, "turns": turns}, nil
}

// sessionScanRows bounds how many of a session's root runs (created up
// to the exported run, newest first) are examined for turns: Python's
// listing window, max(1000, limit*5) rows.
func sessionScanRows(limit int) int { return max(1000, limit*5) }

// sessionRoots selects the turns of a session: its parent-less runs
// created no later than the exported run (compared in milliseconds, as
// Python does), internal ones dropped, chat turns alone when there are
// any, oldest first, the last limit of them.
func (e *exporter) sessionRoots(ctx context.Context, run *durable.RunState, sessionID string, limit int) ([]*durable.RunState, error) {
	until, bounded := millis(cmp.Or(run.CreatedAt, run.UpdatedAt))
	// The index lists rows most recently updated first, not newest
	// created: an earlier run updated later (resumed, noted into) comes
	// before later turns. So every root row of the session is read (rows
	// are small) and the candidates ordered by creation, newest first.
	var rows []store.RunIndexRow
	for listed := sessionScanRows(limit); ; listed *= 4 {
		var err error
		rows, err = e.src.Runs.RunIndex(ctx, &store.RunIndexParams{SessionID: sessionID, RootOnly: true, Limit: listed})
		if err != nil {
			return nil, fmt.Errorf("listing runs of session %s: %w", sessionID, err)
		}
		if len(rows) < listed {
			break
		}
	}
	rows = slices.DeleteFunc(rows, func(row store.RunIndexRow) bool {
		if pyval.Strip(row.ParentRunID) != "" || classifyTurn(pyval.Strip(row.WorkflowID), nil) == TurnInternal {
			return true
		}
		ms, ok := millis(cmp.Or(row.CreatedAt, row.UpdatedAt))
		return bounded && ok && ms > until
	})
	slices.SortStableFunc(rows, func(a, b store.RunIndexRow) int {
		at, bt := cmp.Or(a.CreatedAt, a.UpdatedAt), cmp.Or(b.CreatedAt, b.UpdatedAt)
		return cmp.Or(bt.Compare(at.Time), cmp.Compare(b.RunID, a.RunID))
	})
	roots, err := e.pickTurns(ctx, run, sessionID, rows[:min(len(rows), sessionScanRows(limit))], limit)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(roots, func(a, b *durable.RunState) int {
		at, bt := cmp.Or(a.CreatedAt, a.UpdatedAt), cmp.Or(b.CreatedAt, b.UpdatedAt)
		return cmp.Or(at.Compare(bt.Time), cmp.Compare(a.RunID, b.RunID))
	})
	return roots, nil
}

// pickTurns loads the runs of rows (newest first) one by one and returns
// the newest limit chat turns, or the newest limit turns of any kind when
// none is a chat. The chat rule must see every candidate, not a window of
// the newest: scheduled runs between chat messages would otherwise crowd
// out chat turns still within the limit. At most 2*limit runs are held.
func (e *exporter) pickTurns(ctx context.Context, run *durable.RunState, sessionID string, rows []store.RunIndexRow, limit int) ([]*durable.RunState, error) {
	var chats, others []*durable.RunState
	for _, row := range rows {
		if len(chats) == limit {
			break
		}
		if (len(chats) > 0 || len(others) == limit) && strings.HasPrefix(row.WorkflowID, "scheduled:") {
			continue // only a chat turn can still be kept: no need to load it
		}
		r := run
		if row.RunID != run.RunID {
			var err error
			r, err = e.src.Runs.RunGet(ctx, row.RunID)
			if errors.Is(err, store.ErrNotFound) {
				continue // deleted since it was listed
			}
			if err != nil {
				return nil, fmt.Errorf("loading run %s of session %s: %w", row.RunID, sessionID, err)
			}
		}
		switch {
		case classifyTurn(r.WorkflowID, r.Vars) == TurnChat:
			chats, others = append(chats, r), nil // scheduled wrappers would pollute a chat replay
		case len(chats) == 0 && len(others) < limit:
			others = append(others, r)
		}
	}
	if len(chats) > 0 {
		return chats, nil
	}
	return others, nil
}

// turn describes one session turn: what was asked, what was answered and
// what it cost.
func (e *exporter) turn(ctx context.Context, r *durable.RunState) (map[string]any, error) {
	prompt, promptMeta := extractPrompt(r.Vars)
	tree, err := e.subtree(ctx, r.RunID)
	if err != nil {
		return nil, err
	}
	// The tree's records are read once, for the answer fallback and the
	// stats, and dropped with this call (unless they are the exported
	// tree's): a session's turns are not all held at once.
	var records, own []*durable.StepRecord
	for i, rid := range tree {
		recs, err := e.ledger(ctx, rid)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			own = recs
		}
		records = append(records, recs...)
	}
	answer, answerMeta, err := e.answer(ctx, r, own)
	if err != nil {
		return nil, err
	}
	arts, err := e.treeArtifacts(ctx, tree)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"run_id":          r.RunID,
		"workflow_id":     blankToNil(r.WorkflowID),
		"kind":            classifyTurn(pyval.Strip(r.WorkflowID), r.Vars),
		"status":          string(r.Status),
		"created_at":      storedTime(r.CreatedAtValue()),
		"updated_at":      storedTime(r.UpdatedAtValue()),
		"prompt":          blankToNil(prompt),
		"prompt_metadata": mapOrNil(promptMeta),
		"attachments":     attachments(r.Vars),
		"answer":          blankToNil(answer),
		"answer_meta":     mapOrNil(answerMeta),
		"stats":           turnStats(records),
		"artifacts":       arts,
	}, nil
}

// mapOrNil keeps a nil map a JSON null (not {}).
func mapOrNil(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

// attachments copies the objects of vars.context.attachments (inside
// vars.input_data when the run was started with that envelope).
func attachments(vars map[string]any) []any {
	ctx := object(inputOf(vars)["context"])
	list, _ := ctx["attachments"].([]any)
	out := []any{}
	for _, a := range list {
		if m := object(a); m != nil {
			out = append(out, m)
		}
	}
	return out
}

// inputOf is the object prompts are read from: vars.input_data when it
// is an object, else vars.
func inputOf(vars map[string]any) map[string]any {
	if in := object(vars["input_data"]); in != nil {
		return in
	}
	return vars
}
