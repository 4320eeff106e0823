package durable_test

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// A persisted wait's allow_free_text reads as Python's run stores read
// it: bool(raw_waiting.get("allow_free_text", True)) (storage/sqlite.py
// _runstate_from_dict, storage/json_files.py JsonFileRunStore.load). So
// only a missing member is true; null, 0 and "" are false, and any other
// value is Python-truthy. Spec runtime-model.md §1 (WaitState:
// allow_free_text defaults to true when missing).
func TestWaitAllowFreeTextReadAsPythonBool(t *testing.T) {
	t.Parallel()
	cases := []struct {
		member string // the allow_free_text member, "" for none
		want   bool
	}{
		{``, true},
		{`, "allow_free_text": null`, false},
		{`, "allow_free_text": false`, false},
		{`, "allow_free_text": true`, true},
		{`, "allow_free_text": 0`, false},
		{`, "allow_free_text": 1`, true},
		{`, "allow_free_text": ""`, false},
		{`, "allow_free_text": "no"`, true},
		{`, "allow_free_text": []`, false},
	}
	for _, tc := range cases {
		run := `{"run_id": "r1", "workflow_id": "wf", "status": "waiting", "current_node": "ask", "vars": {}, ` +
			`"waiting": {"reason": "user", "wait_key": "k", "prompt": "?"` + tc.member + `}, "output": null, "error": null, ` +
			`"created_at": "2026-01-01T00:00:00+00:00", "updated_at": "2026-01-01T00:00:00+00:00"}`
		r, err := durable.UnmarshalRun([]byte(run))
		if err != nil {
			t.Errorf("UnmarshalRun with waiting{…%s}: %v", tc.member, err)
			continue
		}
		if r.Waiting.AllowFreeText != tc.want {
			t.Errorf("UnmarshalRun with waiting{…%s}: AllowFreeText = %v, want %v", tc.member, r.Waiting.AllowFreeText, tc.want)
		}
		m, err := pyjson.DecodeObject([]byte(run))
		if err != nil {
			t.Fatal(err)
		}
		viaMap, err := durable.RunFromJSON(m)
		if err != nil {
			t.Errorf("RunFromJSON with waiting{…%s}: %v", tc.member, err)
			continue
		}
		if viaMap.Waiting.AllowFreeText != tc.want {
			t.Errorf("RunFromJSON with waiting{…%s}: AllowFreeText = %v, want %v", tc.member, viaMap.Waiting.AllowFreeText, tc.want)
		}
		// Written back as the boolean Python's asdict writes.
		b, err := durable.MarshalRun(r, pyjson.Line)
		if err != nil {
			t.Fatal(err)
		}
		if want := `"allow_free_text": ` + map[bool]string{true: "true", false: "false"}[tc.want]; !strings.Contains(string(b), want) {
			t.Errorf("waiting{…%s} written back as\n%s\nwant %s", tc.member, b, want)
		}
	}
}
