package runtime_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestResumePayloadAtTheDepthLimitOfItsResultKeyIsAccepted pins the
// depth at which applyResume checks a payload written at a dotted result
// key: vars.<key segments>, so "_temp.answers.ask" holds it at depth 4
// of the run. A payload whose deepest value lands exactly at
// pyjson.MaxDepth there is valid JSON for every reader and must be
// accepted, and the run goes on with it. Checking one level too deep
// refuses a good answer, and the run then waits for one its caller cannot
// give (TestBadInputTooDeepResumePayloadIsRefusedNotFatalToRun checks only
// the refusal one level further).
func TestResumePayloadAtTheDepthLimitOfItsResultKeyIsAccepted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, id, st := waitingOnDottedAsk(t, "askdeepok")
	// vars (1) ._temp (2) .answers (3) .ask (4) = the payload; its "d" at
	// 5, then n objects, the leaf at 5+n.
	n := pyjson.MaxDepth - 5
	got, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: st.Waiting.WaitKey,
		Payload: map[string]any{"d": nestedValue(n)}})
	if err != nil {
		t.Fatalf("Resume with a payload whose leaf is at the depth limit at its result key: %.300v; want it accepted", err)
	}
	if got.Status != durable.RunCompleted {
		t.Fatalf("run %s (error %.200q) after the resume; want completed", got.Status, got.Error)
	}
}
