package runtime

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

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
// existing. A blank session id, one that is not UTF-8, and a row the
// store holds but cannot read are errors.
func (r *Runtime) EnsureSessionMemoryRun(ctx context.Context, sessionID string) (string, error) {
	sid := pyval.Strip(sessionID)
	if sid == "" {
		return "", errors.New("session memory run: the session id is blank")
	}
	if !utf8.ValidString(sid) {
		// Stored, it would read back as U+FFFD, no longer the session
		// whose id the run's name hashes.
		return "", fmt.Errorf("session memory run: session id %q is not valid UTF-8", sid)
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
	if errors.Is(err, store.ErrAlreadyExists) {
		// Another process created it, or the store holds a row it cannot
		// read (SQLite and PostgreSQL read undecodable run_json as
		// absent): the memory effects' owner writes tell the two apart
		// the same way.
		if _, gerr := r.store.RunGet(ctx, o.id); errors.Is(gerr, store.ErrNotFound) {
			return "", fmt.Errorf("session memory run %s is unreadable: the store holds it but cannot read its state; repair or remove it", o.id)
		}
		return o.id, nil
	}
	if err != nil {
		return "", fmt.Errorf("creating session memory run %s: %w", o.id, err)
	}
	return o.id, nil
}
