package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/runtime"
)

// A resume of a run in its pause wait is refused with ErrRunPaused, and
// the error names the way out (ResumeRun), since the pause wait's key is
// the only one the run shows. Would break if the hint were dropped.
func TestResumeOfPauseWaitNamesResumeRun(t *testing.T) {
	f := setup(t, chain(2))
	ctx := context.Background()
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "chain"})
	if _, err := f.rt.Pause(ctx, id, ""); err != nil {
		t.Fatal(err)
	}
	_, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: "pause:" + id})
	if !errors.Is(err, runtime.ErrRunPaused) || !strings.Contains(err.Error(), "use ResumeRun") || !strings.Contains(err.Error(), id) {
		t.Fatalf("resume of a paused run: %v; want ErrRunPaused naming the run and ResumeRun", err)
	}
}
