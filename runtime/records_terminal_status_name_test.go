package runtime_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// IsTerminalStatusRecord needs both the system key and the
// abstract.status name: an event a workflow emitted under a key that
// happens to start with system:terminal_status: is not the run's end.
func TestIsTerminalStatusRecordNeedsTheStatusName(t *testing.T) {
	rec := func(name, key string) *durable.StepRecord {
		return &durable.StepRecord{IdempotencyKey: key, Effect: &durable.Effect{Type: durable.EffectEmitEvent,
			Payload: map[string]any{"name": name, "scope": "session", "payload": map[string]any{"text": "completed"}}}}
	}
	key := runtime.TerminalStatusKey(durable.RunCompleted)
	if !runtime.IsTerminalStatusRecord(rec(runtime.StatusEventName, key)) {
		t.Errorf("the status event is not a terminal status record")
	}
	if runtime.IsTerminalStatusRecord(rec("my.event", key)) {
		t.Errorf("an event named my.event under %s is taken for the terminal status record", key)
	}
	if runtime.IsTerminalStatusRecord(rec(runtime.StatusEventName, "k1")) {
		t.Errorf("an abstract.status event under key k1 is taken for the terminal status record")
	}
}
