package scheduler

import (
	"context"
	"errors"
	"fmt"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
	"github.com/abstractframework/abstractgateway/store"
)

// Scheduled bundles a Runtime and its Scheduler behind the few calls a
// simple host needs: run a workflow, answer its waits, find what waits,
// stop.
type Scheduled struct {
	*runtime.Runtime
	Scheduler *Scheduler
}

// NewScheduled starts a scheduler for rt (recovering interrupted runs).
func NewScheduled(ctx context.Context, rt *runtime.Runtime, cfg Config) (*Scheduled, error) {
	cfg.Runtime = rt
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if err := s.Start(ctx); err != nil {
		return nil, err
	}
	return &Scheduled{Runtime: rt, Scheduler: s}, nil
}

// Run registers wf if needed, starts a run with vars and ticks it once:
// until it waits or ends, or uses the runtime's step budget
// (runtime.Config.MaxSteps, default 100). A run left running (its budget
// used) is handed to the scheduler, which drives it on in the background.
// A workflow already registered under wf's id is kept.
func (s *Scheduled) Run(ctx context.Context, wf *runtime.Workflow, vars map[string]any) (string, *durable.RunState, error) {
	return s.RunWith(ctx, wf, RunParams{Vars: vars})
}

// RunParams are the options of RunWith.
type RunParams struct {
	Vars      map[string]any
	ActorID   string
	SessionID string
	// MaxSteps caps the first tick's steps; 0 means the runtime's budget.
	MaxSteps int
}

// RunWith is Run with an actor, a session and a step cap for the first
// tick (Python's run(workflow, vars, actor_id, max_steps)).
func (s *Scheduled) RunWith(ctx context.Context, wf *runtime.Workflow, p RunParams) (string, *durable.RunState, error) {
	if _, ok := s.Registry().Get(wf.ID); !ok {
		// A concurrent Run may register it between the Get and here.
		if err := s.Registry().Register(wf); err != nil {
			if _, ok := s.Registry().Get(wf.ID); !ok {
				return "", nil, err
			}
		}
	}
	id, err := s.Start(ctx, runtime.StartParams{WorkflowID: wf.ID, Vars: p.Vars, ActorID: p.ActorID, SessionID: p.SessionID})
	if err != nil {
		return "", nil, err
	}
	st, err := s.Tick(ctx, id, runtime.TickOptions{MaxSteps: p.MaxSteps})
	s.driveOn(ctx, id, st, err)
	return id, st, err
}

// Respond answers the wait a run is in with payload, using the stored wait
// key. Time waits (no key) cannot be answered. The resumed run goes on
// within the runtime's step budget; one left running (its budget used)
// is handed to the scheduler, which drives it on in the background.
func (s *Scheduled) Respond(ctx context.Context, runID string, payload map[string]any) (*durable.RunState, error) {
	run, err := s.GetState(ctx, runID)
	if err != nil {
		return nil, err
	}
	if run.Status != durable.RunWaiting || run.Waiting == nil {
		return nil, &runtime.StaleResumeError{RunID: runID, Status: string(run.Status), NoWait: run.Status == durable.RunWaiting}
	}
	if run.Waiting.WaitKey == "" {
		if run.Waiting.Reason == durable.WaitUntil {
			return nil, fmt.Errorf("respond to run %s: it waits for a time (%s), not for an answer",
				runID, run.Waiting.Until)
		}
		return nil, fmt.Errorf("respond to run %s: its %s wait has no wait key", runID, run.Waiting.Reason)
	}
	st, err := s.Resume(ctx, runtime.ResumeParams{RunID: runID, WaitKey: run.Waiting.WaitKey, Payload: payload, Strict: true})
	s.driveOn(ctx, runID, st, err)
	return st, err
}

// driveOn hands a run the host's call left running to the scheduler: Tick
// and Resume cap the run's steps over the whole call, so a run that used
// its budget (or whose tick failed past a checkpoint, or whose caller went
// away) is left at its checkpoint, no longer due, and nothing else would
// drive it before the next Recover. It wakes the loop either way, for the
// deadlines the call wrote.
func (s *Scheduled) driveOn(ctx context.Context, runID string, st *durable.RunState, err error) {
	if err != nil || st == nil {
		// The state the call left is not known: read it, also when the
		// caller's context ended (the run stays running then).
		cur, gerr := s.GetState(context.WithoutCancel(ctx), runID)
		if gerr != nil {
			// The store cannot say (the same outage, likely): drive it
			// on, as the scheduler's own drive does; a tick of a run
			// that waits or ended by then does nothing.
			if !errors.Is(gerr, store.ErrNotFound) {
				s.Scheduler.DriveSoon(runID)
			}
			s.Scheduler.Wake()
			return
		}
		st = cur
	}
	if st.Status == durable.RunRunning && !runtime.IsPaused(st) {
		s.Scheduler.DriveSoon(runID)
	}
	s.Scheduler.Wake()
}

// FindWaitingRuns lists waiting runs, optionally by reason and workflow.
func (s *Scheduled) FindWaitingRuns(ctx context.Context, reason durable.WaitReason, workflowID string, limit int) ([]*durable.RunState, error) {
	return s.Store().RunList(ctx, &store.RunListParams{
		Status: durable.RunWaiting, WaitReason: reason, WorkflowID: workflowID, Limit: limit,
	})
}

// Close stops the scheduler. It does not close the store.
func (s *Scheduled) Close() error {
	if s == nil || s.Scheduler == nil {
		return errors.New("scheduler: Scheduled not made by NewScheduled")
	}
	s.Scheduler.Stop()
	return nil
}
