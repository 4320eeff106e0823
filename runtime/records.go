package runtime

import (
	"context"
	"strings"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
)

// Record builders. Each returns a finished ledger record in the exact wire
// shape of the Python runtime (§1.7 of the spec).

func (s *session) baseRecord(nodeID string, status durable.StepStatus) *durable.StepRecord {
	now := s.r.now()
	return &durable.StepRecord{
		RunID:     s.run.RunID,
		StepID:    s.r.newID(),
		NodeID:    nodeID,
		Status:    status,
		StartedAt: now,
		EndedAt:   now,
		ActorID:   s.run.ActorID,
		SessionID: s.run.SessionID,
		Attempt:   1,
	}
}

// completionRecord is the plan-completion record.
func (s *session) completionRecord(nodeID string, output map[string]any) *durable.StepRecord {
	rec := s.baseRecord(nodeID, durable.StepCompleted)
	rec.Result = map[string]any{"completed": true, "output": output}
	return rec
}

// StatusEventName is the event name of the record the kernel appends when
// a run ends: an emit_event record (scope session, payload {"text":
// <status>}) with the idempotency key TerminalStatusKey(status), as
// Python's runtime writes it. It is the ledger's last record of the run.
const StatusEventName = "abstract.status"

// TerminalStatusKey is the idempotency key of the terminal status record
// of a run that ended with status.
func TerminalStatusKey(status durable.RunStatus) string {
	return terminalKeyPrefix + string(status)
}

const terminalKeyPrefix = "system:terminal_status:"

// IsTerminalStatusRecord reports whether rec is the record the kernel
// appends when a run ends (StatusEventName), not an event a workflow
// emitted.
func IsTerminalStatusRecord(rec *durable.StepRecord) bool {
	return rec != nil && rec.Effect != nil && rec.Effect.Type == durable.EffectEmitEvent &&
		strings.HasPrefix(rec.IdempotencyKey, terminalKeyPrefix) && rec.Effect.Payload["name"] == StatusEventName
}

// statusEvent is the terminal abstract.status event record.
func (s *session) statusEvent(status durable.RunStatus) *durable.StepRecord {
	rec := s.baseRecord(s.run.CurrentNode, durable.StepCompleted)
	ev := statusEvents[status]
	rec.Effect = &durable.Effect{Type: durable.EffectEmitEvent, Payload: ev.payload}
	rec.Result = ev.result
	rec.IdempotencyKey = ev.key
	return rec
}

// statusEventParts are the fixed parts of a terminal status record.
type statusEventParts struct {
	payload, result map[string]any
	key             string
}

// statusEvents holds the fixed parts of terminal status records. They are
// shared by every record and never mutated: stores copy or encode them.
var statusEvents = func() map[durable.RunStatus]statusEventParts {
	out := map[durable.RunStatus]statusEventParts{}
	for _, st := range durable.RunStatuses() {
		text := string(st)
		out[st] = statusEventParts{
			payload: map[string]any{"name": StatusEventName, "scope": "session", "payload": map[string]any{"text": text}},
			result:  map[string]any{"emitted": true, "name": StatusEventName, "payload": map[string]any{"text": text}},
			key:     TerminalStatusKey(st),
		}
	}
	return out
}()

// failureRecord records a node error (effect null), which the Python code
// raised to the caller instead of recording.
func (s *session) failureRecord(nodeID, msg string) *durable.StepRecord {
	rec := s.baseRecord(nodeID, durable.StepFailed)
	rec.Error = msg
	return rec
}

// resumeRecord is the record appended by every resume.
func (s *session) resumeRecord(ctx context.Context, w *durable.WaitState, payload map[string]any) *durable.StepRecord {
	if s.r.arts != nil {
		// The record keeps refs to a large payload (vars keep it whole);
		// offloading is best-effort, as in Python.
		if off, err := artifact.Offload(ctx, s.r.arts, payload, artifact.OffloadOptions{RunID: s.run.RunID,
			BaseTags: map[string]string{"source": "resume", "kind": "resume_payload"}, RootPath: "resume.payload",
		}); err == nil {
			if m, ok := off.(map[string]any); ok { // the root itself is never replaced
				payload = m
			}
		}
	}
	rec := s.baseRecord(s.run.CurrentNode, durable.StepCompleted)
	rec.Effect = &durable.Effect{
		Type: durable.EffectResume,
		Payload: map[string]any{
			"wait_reason":    string(w.Reason),
			"wait_key":       nullable(w.WaitKey),
			"resume_to_node": w.ResumeToNodeValue(), // a non-string one as stored, as Python writes it
			"result_key":     nullable(w.ResultKey),
			"payload":        payload,
		},
	}
	rec.Result = map[string]any{"resumed": true}
	return rec
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
