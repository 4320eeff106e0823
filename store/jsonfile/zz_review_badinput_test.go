package jsonfile_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

func TestZZProbeOddRunFiles(t *testing.T) {
	base := `"run_id": "r1", "workflow_id": "w", "created_at": "2026-01-01T00:00:00+00:00", "updated_at": "2026-01-01T00:00:00+00:00"`
	cases := map[string]string{
		"garbage":      `{"run_id": "r1", "stat`,
		"status int":   `{` + base + `, "status": 5, "current_node": "a", "vars": {}}`,
		"status bogus": `{` + base + `, "status": "bogus", "current_node": "a", "vars": {}}`,
		"vars list":    `{` + base + `, "status": "running", "current_node": "a", "vars": []}`,
		"vars null":    `{` + base + `, "status": "running", "current_node": "a", "vars": null}`,
		"node int":     `{` + base + `, "status": "running", "current_node": 5, "vars": {}}`,
		"waiting str":  `{` + base + `, "status": "waiting", "current_node": "a", "vars": {}, "waiting": "x"}`,
		"waiting odd":  `{` + base + `, "status": "waiting", "current_node": "a", "vars": {}, "waiting": {"reason": 5, "wait_key": [], "details": "x", "choices": "ab", "until": 7}}`,
		"output list":  `{` + base + `, "status": "completed", "current_node": "a", "vars": {}, "output": [1]}`,
		"created int":  `{"run_id": "r1", "workflow_id": "w", "created_at": 5, "updated_at": null, "status": "running", "current_node": "a", "vars": {}}`,
		"array":        `[1,2]`,
		"null":         `null`,
		"empty":        ``,
		"parent int":   `{` + base + `, "status": "running", "current_node": "a", "vars": {}, "parent_run_id": 7, "session_id": {}}`,
		"limits odd":   `{` + base + `, "status": "running", "current_node": "a", "vars": {"_limits": "x", "_runtime": [1], "_temp": 3}}`,
	}
	for name, text := range cases {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "run_r1.json"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", name, r)
				}
			}()
			st, err := jsonfile.New(jsonfile.Config{Dir: dir})
			if err != nil {
				t.Logf("%s: open: %v", name, err)
				return
			}
			defer st.Close()
			r, err := st.RunGet(context.Background(), "r1")
			if err != nil {
				t.Logf("%s: get: %v", name, err)
				return
			}
			t.Logf("%s: got status=%q node=%q vars=%v wait=%+v", name, r.Status, r.CurrentNode, r.Vars, r.Waiting)
		}()
	}
}
