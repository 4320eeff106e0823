package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/store"
)

// StartParams is the input of Start.
type StartParams struct {
	WorkflowID string
	Vars       map[string]any
	ActorID    string
	// SessionID groups runs; the run stores it trimmed of Python's
	// whitespace ("" when blank).
	SessionID   string
	ParentRunID string
	// RunID, when set, creates the run only if absent: a run with that id
	// and the same identity (workflow, session, parent, vars) is returned
	// as is; a different identity is an *IdentityConflictError.
	RunID string
	// SessionFromRunID, with a blank SessionID, makes the run its own
	// session (session_id = run_id), as a host does for a sessionless
	// start (gateway-api: "Sessionless starts get session_id = run_id"):
	// its subflow children inherit the session, so their session-scoped
	// events reach the run's listeners. With RunID set it counts as a
	// SessionID of RunID, in the identity too.
	SessionFromRunID bool
}

// Start creates a run at its workflow's entry node and returns its id.
// Nothing runs until Tick. Vars must be JSON: a NaN, a channel or a cycle
// is refused with an error naming its key path.
func (r *Runtime) Start(ctx context.Context, p StartParams) (string, error) {
	if p.SessionFromRunID && pyval.Strip(p.SessionID) == "" && p.RunID != "" {
		p.SessionID = p.RunID
	}
	run, err := r.newRun(p)
	if err != nil {
		return "", err
	}
	// Start keeps nothing of run but its id, so it can hand the object to
	// the store for the Tick that usually comes next, unless a caller's
	// vars hold values a read would give back in other types.
	handoff := pyjson.IsNormalizedObject(run.Vars)
	id := run.RunID
	err = r.store.RunCommit(ctx, &store.CommitParams{Run: run, Create: true, RandomID: p.RunID == "" && r.randomIDs, Handoff: handoff})
	if errors.Is(err, store.ErrAlreadyExists) && p.RunID != "" {
		return p.RunID, r.checkIdentity(ctx, run) // a failed commit handed nothing over
	}
	if errors.Is(err, store.ErrInvalidID) {
		// An answer about the id, not a store that did not answer: a
		// START_SUBWORKFLOW naming it fails rather than waits.
		return "", fmt.Errorf("starting run of workflow %s: %w", p.WorkflowID, err)
	}
	if err != nil {
		return "", fmt.Errorf("starting run of workflow %s: %w", p.WorkflowID, storeFailure{err})
	}
	return id, nil
}

// storeFailure marks an error of Start that came from the store (a commit
// or a read that did not get through), not an answer about the run: the
// create may have landed, its answer lost. It reads as the error it wraps.
type storeFailure struct{ err error }

func (e storeFailure) Error() string { return e.err.Error() }
func (e storeFailure) Unwrap() error { return e.err }

func (r *Runtime) newRun(p StartParams) (*durable.RunState, error) {
	if err := checkUTF8("run_id", p.RunID, "session_id", p.SessionID, "actor_id", p.ActorID, "parent_run_id", p.ParentRunID); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	wf, err := r.registry.Lookup(p.WorkflowID)
	if err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	if err := pyjson.CheckMember(p.Vars, "vars", 1); err != nil { // as the run's JSON holds them
		return nil, fmt.Errorf("start of workflow %s: %w", p.WorkflowID, err)
	}
	vars := make(map[string]any, len(p.Vars)+3)
	for k, v := range p.Vars {
		vars[k] = pyjson.Clone(v)
	}
	if _, ok := vars["_limits"]; !ok {
		vars["_limits"] = pyjson.CloneObject(r.limitsV)
	}
	rt := namespace(vars, "_runtime")
	// Present from the start in our runs: its absence marks a run the
	// Python runtime started and we have not stepped (see execute).
	rt["effect_seq"] = json.Number("0")
	if s := pyval.Strip(r.limits.Provider); s != "" {
		if _, ok := rt["provider"]; !ok {
			rt["provider"] = s
		}
	}
	if s := pyval.Strip(r.limits.Model); s != "" {
		if _, ok := rt["model"]; !ok {
			rt["model"] = s
		}
	}
	if ts := pyval.Strip(r.limits.ToolSupport); ts != "" {
		// Two setdefaults: a run that brings one keeps it and gets the other.
		if _, ok := rt["tool_support"]; !ok {
			rt["tool_support"] = ts
		}
		if _, ok := rt["supports_native_tools"]; !ok {
			rt["supports_native_tools"] = ts == "native"
		}
	}
	id := p.RunID
	if id != "" {
		// The digest lives in vars._meta; a caller's _meta that is not an
		// object is its own value, kept (Python's start copies vars as
		// given), and the run then carries no digest.
		meta, present := vars["_meta"]
		if _, isObject := meta.(map[string]any); isObject || !present {
			namespace(vars, "_meta")["creation_digest"] = creationDigest(p)
		}
	} else {
		id = r.newID()
		if p.SessionFromRunID && pyval.Strip(p.SessionID) == "" {
			p.SessionID = id
		}
	}
	now := r.now()
	return &durable.RunState{
		RunID: id, WorkflowID: wf.ID, Status: durable.RunRunning, CurrentNode: wf.Entry,
		Vars: vars, CreatedAt: now, UpdatedAt: now,
		// Stored trimmed, as the gateway and START_SUBWORKFLOW take it:
		// the SQL stores find a run by its session id as written, so a
		// padded one would be found by no session filter.
		ActorID: p.ActorID, SessionID: pyval.Strip(p.SessionID), ParentRunID: p.ParentRunID,
	}, nil
}

// creationDigest fingerprints what a caller asked to create, so a repeated
// create-if-absent can tell "same request" from "different run, same id".
// It digests the session id as given, untrimmed: Python's creation_digest
// is over the caller's request, and a run it created must match.
func creationDigest(p StartParams) string {
	vars := p.Vars
	if vars == nil {
		vars = map[string]any{}
	}
	b, _ := pyjson.Marshal(map[string]any{
		"workflow_id": p.WorkflowID, "session_id": nullable(p.SessionID),
		"parent_run_id": nullable(p.ParentRunID), "vars": vars,
	}, pyjson.Canonical)
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func (r *Runtime) checkIdentity(ctx context.Context, want *durable.RunState) error {
	got, err := r.store.RunGet(ctx, want.RunID)
	if err != nil {
		return fmt.Errorf("loading existing run %s: %w", want.RunID, storeFailure{err})
	}
	conflict := func(field, stored, given string) error {
		return &IdentityConflictError{RunID: want.RunID, Field: field, Stored: stored, Given: given}
	}
	// As Python's verify_run_identity: the ids compared stripped, then
	// each identity key of vars._meta whenever either side carries it.
	switch {
	case pyval.Strip(got.WorkflowID) != pyval.Strip(want.WorkflowID):
		return conflict("workflow_id", got.WorkflowID, want.WorkflowID)
	case pyval.Strip(got.SessionID) != pyval.Strip(want.SessionID):
		return conflict("session_id", got.SessionID, want.SessionID)
	case pyval.Strip(got.ParentRunID) != pyval.Strip(want.ParentRunID):
		return conflict("parent_run_id", got.ParentRunID, want.ParentRunID)
	}
	gm, _ := got.Vars["_meta"].(map[string]any)
	wm, _ := want.Vars["_meta"].(map[string]any)
	for _, key := range [...]string{"occurrence", "creation_digest"} {
		// An earlier version's offloading store could leave a ref in place
		// of a finished run's member (a small threshold; they now stay
		// inline): the value it stands for is compared. _meta itself is
		// never a ref, offloading starting at depth 2 under vars. Damaged
		// content stays a ref, and a conflict (an answer); a read that did
		// not get through is a store failure.
		a, err := r.restoreStoredVars(ctx, got, gm[key], true)
		if err != nil {
			return fmt.Errorf("restoring vars._meta.%s of existing run %s: %w", key, want.RunID, storeFailure{err})
		}
		b := wm[key]
		if a == nil && b == nil {
			continue
		}
		ca, _ := pyjson.Marshal(a, pyjson.Canonical)
		cb, _ := pyjson.Marshal(b, pyjson.Canonical)
		if string(ca) != string(cb) {
			return conflict("vars._meta."+key, string(ca), string(cb))
		}
	}
	return nil
}
