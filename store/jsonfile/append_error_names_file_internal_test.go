package jsonfile

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestFailedAppendErrorNamesTheFile: an append whose write fails (a full
// disk) reports an error that names the file it failed to append to, the
// ledger's or commands.jsonl, so that an operator knows which file to
// look at; the write error itself (ENOSPC from write(2)) names none.
func TestFailedAppendErrorNamesTheFile(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openInternal(t, t.TempDir())
	failNextWrite := func() {
		s.writeForTest = func(*os.File, []byte) (int, error) {
			s.writeForTest = nil
			return 0, errors.New("no space left on device (test)")
		}
	}
	failNextWrite()
	err := s.LedgerAppend(ctx, "r1", []*durable.StepRecord{{RunID: "r1", StepID: "s1", NodeID: "a", Status: durable.StepStarted}})
	if err == nil || !strings.Contains(err.Error(), s.ledgerPath("r1")) {
		t.Errorf("failed ledger append: %v; want an error naming %s", err, s.ledgerPath("r1"))
	}
	failNextWrite()
	_, err = s.CommandAppend(ctx, &durable.CommandRecord{CommandID: "c1", RunID: "r1", Type: "pause"})
	if err == nil || !strings.Contains(err.Error(), s.commandsPath()) {
		t.Errorf("failed command append: %v; want an error naming %s", err, s.commandsPath())
	}
}
