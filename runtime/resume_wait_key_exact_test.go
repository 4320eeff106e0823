package runtime_test

import (
	"context"
	"errors"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// The wait key a resume gives must equal the stored one (spec §2.6 step
// 2: a mismatch is an error); a key that is only a prefix or an extension
// of it ("user:<run>" for "user:<run>:ask") is another key, refused
// whether or not the resume is strict, and the run keeps waiting.
func TestResumeRefusesAPartOfTheWaitKey(t *testing.T) {
	ctx := context.Background()
	f := setup(t, askWorkflow())
	id, _ := f.rt.Start(ctx, runtime.StartParams{WorkflowID: "ask"})
	st, err := f.rt.Tick(ctx, id, runtime.TickOptions{})
	if err != nil || st.Status != durable.RunWaiting {
		t.Fatalf("tick: %v %v", st, err)
	}
	key := st.Waiting.WaitKey
	if key != "user:"+id+":ask" {
		t.Fatalf("wait key %q; want user:%s:ask", key, id)
	}
	for _, strict := range []bool{false, true} {
		for _, given := range []string{"user:" + id, "user:", key[:len(key)-1], key + "x"} {
			_, err := f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: given, Strict: strict,
				Payload: map[string]any{"text": "yes"}})
			var stale *runtime.StaleResumeError
			if !errors.As(err, &stale) || stale.Expected != key || stale.Got != given {
				t.Fatalf("resume (strict %v) with key %q: %v; want a wait_key mismatch expecting %q", strict, given, err, key)
			}
		}
	}
	st, err = f.rt.GetState(ctx, id)
	if err != nil || st.Status != durable.RunWaiting || st.Waiting == nil || st.Waiting.WaitKey != key {
		t.Fatalf("after the refused resumes: %v %v; want still waiting on %q", st, err, key)
	}
	if st, err = f.rt.Resume(ctx, runtime.ResumeParams{RunID: id, WaitKey: key, Payload: map[string]any{"text": "yes"}}); err != nil || st.Status != durable.RunCompleted {
		t.Fatalf("resume with the stored key: %v %v", st, err)
	}
}
