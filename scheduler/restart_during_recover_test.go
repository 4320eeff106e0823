package scheduler_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/runtime/runtimetest"
	"github.com/abstractframework/abstractgateway/scheduler"
)

// TestRestartDuringStartRecoveryDoesNotCrash: Start
// recovers runs before it launches its loop, and the loop read s.done when its
// goroutine begins (scheduler.go: `defer close(s.done)` in loop). A Stop
// made while Start's recovery runs a callback returns at once (documented);
// a Start made then installs a new done channel, which the first Start's
// loop, launched afterwards, takes for its own: it closes it on exit, the
// second loop closes it again at its Stop — "close of closed channel", a
// panic on a background goroutine that kills the process — and that Stop
// returns before the second loop has ended. (Python: stop() then start()
// only joins the old thread with a timeout; nothing crashes.)
//
// The scenario runs in a child process so the crash does not take the
// package's other tests with it.
func TestRestartDuringStartRecoveryDoesNotCrash(t *testing.T) {
	if os.Getenv("SCHEDULER_TEST_RESTART_CHILD") == "1" {
		restartDuringRecoverScenario(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRestartDuringStartRecoveryDoesNotCrash$", "-test.count=1")
	cmd.Env = append(os.Environ(), "SCHEDULER_TEST_RESTART_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := string(out)
		if i := strings.Index(msg, "panic:"); i >= 0 {
			msg = msg[i:min(len(msg), i+300)]
		}
		t.Fatalf("Stop during Start's recovery, then Start and Stop again: the process died (%v):\n%s", err, msg)
	}
}

func restartDuringRecoverScenario(t *testing.T) {
	c := runtimetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	done := &runtime.Workflow{ID: "one", Entry: "a", Nodes: map[string]runtime.NodeFunc{
		"a": func(ctx context.Context, run *durable.RunState, rc *runtime.RunContext) (runtime.StepPlan, error) {
			return runtime.Complete(map[string]any{"ok": true}), nil
		},
	}}
	rt, _ := setup(t, c, done)
	ctx := context.Background()
	if _, err := rt.Start(ctx, runtime.StartParams{WorkflowID: "one"}); err != nil { // left running: Start's Recover drives it
		t.Fatal(err)
	}
	inCallback, release := make(chan struct{}), make(chan struct{})
	first := true
	s, _ := scheduler.New(scheduler.Config{Runtime: rt, Clock: c.Now, PollInterval: time.Hour,
		OnRunResumed: func(*durable.RunState) {
			if first {
				first = false
				close(inCallback)
				<-release
			}
		}})
	started := make(chan error, 1)
	go func() { started <- s.Start(ctx) }()
	<-inCallback
	s.Stop() // in a callback of Start's recovery: returns at once (documented)
	if err := s.Start(ctx); err != nil {
		t.Fatalf("restart: %v", err)
	}
	close(release)
	if err := <-started; err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // the first Start's loop sees its cancelled context and ends
	s.Stop()
	time.Sleep(50 * time.Millisecond) // the second loop ends
}
