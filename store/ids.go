package store

import (
	"fmt"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/durable"
)

// CheckNewRunIDs refuses, with ErrInvalidID, a run to be created whose id
// or parent id is not valid UTF-8. Every store keeps a run as JSON text,
// which spells each such byte as U+FFFD: a run keyed by the raw bytes
// would read back under another id, so the runtime's commit of the state
// it read would find no run, and a waiting run would stay due forever.
// No run can have such an id, so no child can name one as its parent
// either. Backends call it on create (a commit of an existing run finds
// none under such an id anyway).
func CheckNewRunIDs(r *durable.RunState) error {
	if !utf8.ValidString(r.RunID) {
		return fmt.Errorf("run id %q is not valid UTF-8: %w", r.RunID, ErrInvalidID)
	}
	if !utf8.ValidString(r.ParentRunID) {
		return fmt.Errorf("parent run id %q is not valid UTF-8: %w", r.ParentRunID, ErrInvalidID)
	}
	return nil
}

// CheckRunReadable refuses a run that no store could read back (an unknown
// status or wait reason: see durable.RunState.CheckReadable). Backends call
// it on every commit, before writing anything: written, the run would
// answer "not found" or "unreadable" from then on, and be lost.
func CheckRunReadable(r *durable.RunState) error {
	if err := r.CheckReadable(); err != nil {
		return fmt.Errorf("refusing to write a run that could not be read back: %w", err)
	}
	return nil
}
