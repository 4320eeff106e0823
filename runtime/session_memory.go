package runtime

import (
	"context"
	"errors"
	"fmt"

	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/store"
)

// EnsureSessionMemoryRun makes sure the memory owner run of a session
// exists and returns its id (SessionMemoryRunID): the synthetic run a
// gateway keeps a session's attachments and memory spans under
// (gateway-api §3.12), created here as a session-scoped memory effect
// creates it, completed at node done with empty memory namespaces and
// session_id the trimmed session id. An existing run is left as it is,
// whatever its state; one another process creates meanwhile counts as
// existing. A blank session id is an error.
func (r *Runtime) EnsureSessionMemoryRun(ctx context.Context, sessionID string) (string, error) {
	sid := pyval.Strip(sessionID)
	if sid == "" {
		return "", errors.New("session memory run: the session id is blank")
	}
	o := memOwner{id: SessionMemoryRunID(sid), workflow: SessionMemoryWorkflowID, sessionID: sid}
	unlock, err := r.lockOwner(ctx, o)
	if err != nil {
		return "", fmt.Errorf("session memory run %s: %w", o.id, err)
	}
	defer unlock()
	switch _, err := r.store.RunGet(ctx, o.id); {
	case err == nil:
		return o.id, nil
	case !errors.Is(err, store.ErrNotFound):
		return "", fmt.Errorf("loading session memory run %s: %w", o.id, err)
	}
	err = r.store.RunCommit(ctx, &store.CommitParams{Run: r.newMemoryOwner(o), Create: true})
	if err != nil && !errors.Is(err, store.ErrAlreadyExists) {
		return "", fmt.Errorf("creating session memory run %s: %w", o.id, err)
	}
	return o.id, nil
}
