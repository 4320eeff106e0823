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
// (runtime.Config.MaxSteps, default 100). A
// workflow already registered under wf's id is kept.
func (s *Scheduled) Run(ctx context.Context, wf *runtime.Workflow, vars map[string]any) (string, *durable.RunState, error) {
	if _, ok := s.Registry().Get(wf.ID); !ok {
		// A concurrent Run may register it between the Get and here.
		if err := s.Registry().Register(wf); err != nil {
			if _, ok := s.Registry().Get(wf.ID); !ok {
				return "", nil, err
			}
		}
	}
	id, err := s.Start(ctx, runtime.StartParams{WorkflowID: wf.ID, Vars: vars})
	if err != nil {
		return "", nil, err
	}
	st, err := s.Tick(ctx, id, runtime.TickOptions{})
	s.Scheduler.Wake()
	return id, st, err
}

// Respond answers the wait a run is in with payload, using the stored wait
// key. Time waits (no key) cannot be answered.
func (s *Scheduled) Respond(ctx context.Context, runID string, payload map[string]any) (*durable.RunState, error) {
	run, err := s.GetState(ctx, runID)
	if err != nil {
		return nil, err
	}
	if run.Status != durable.RunWaiting || run.Waiting == nil {
		return nil, &runtime.StaleResumeError{RunID: runID, Status: string(run.Status)}
	}
	if run.Waiting.WaitKey == "" {
		if run.Waiting.Reason == durable.WaitUntil {
			return nil, fmt.Errorf("respond to run %s: it waits for a time (%s), not for an answer",
				runID, run.Waiting.Until)
		}
		return nil, fmt.Errorf("respond to run %s: its %s wait has no wait key", runID, run.Waiting.Reason)
	}
	st, err := s.Resume(ctx, runtime.ResumeParams{RunID: runID, WaitKey: run.Waiting.WaitKey, Payload: payload, Strict: true})
	s.Scheduler.Wake()
	return st, err
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
