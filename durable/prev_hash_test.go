package durable_test

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// A record read with prev_hash "" writes it back as "" (not null), in
// every encoding and in its stored copy: Python keeps the two apart and
// hashes the record as stored, so folding "" into null would hide an edit
// from the chain check. A record Go builds, or whose link is set with
// SetPrevHash(""), still writes null.
func TestEmptyPrevHashReadIsKept(t *testing.T) {
	line := `{"run_id": "r1", "step_id": "s1", "node_id": "n1", "status": "completed", "effect": null, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": "", "record_hash": null, "signature": null}`
	r, err := durable.UnmarshalRecord([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if !r.PrevHashEmptyNotNull() {
		t.Error(`PrevHashEmptyNotNull false for a record read with prev_hash ""`)
	}
	c, err := r.StoredCopy()
	if err != nil {
		t.Fatal(err)
	}
	for name, rec := range map[string]*durable.StepRecord{"read": r, "stored copy": c} {
		for _, st := range []pyjson.Style{pyjson.Line, pyjson.Pretty} {
			b, err := durable.MarshalRecord(rec, st)
			if err != nil {
				t.Fatal(err)
			}
			if compact := strings.Join(strings.Fields(string(b)), ""); !strings.Contains(compact, `"prev_hash":"",`) {
				t.Errorf("%s written %s, want prev_hash \"\"", name, b)
			}
		}
	}

	r.SetPrevHash("")
	fresh := &durable.StepRecord{RunID: "r1", StepID: "s1", NodeID: "n1", Status: durable.StepCompleted}
	for name, rec := range map[string]*durable.StepRecord{"SetPrevHash(\"\")": r, "built in Go": fresh} {
		if rec.PrevHashEmptyNotNull() {
			t.Errorf("%s: PrevHashEmptyNotNull true", name)
		}
		b, err := durable.MarshalRecord(rec, pyjson.Line)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"prev_hash": null`) {
			t.Errorf("%s written %s, want prev_hash null", name, b)
		}
	}
}
