package jsonfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/jsonfile"
)

// TestSpecUnreadableCursorFileLoadsZero pins spec §4.5: the JSON-file
// cursor store reads a missing or unreadable cursor file as 0.
func TestSpecUnreadableCursorFileLoadsZero(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, data string }{
		{"missing", ""},
		{"empty", ""},
		{"torn", `{"cursor": 3`},
		{"not json", "cursor=3"},
		{"array", "[3]"},
		{"no cursor", `{"updated_at": "2026-01-01T00:00:00+00:00"}`},
	} {
		name, data := c.name, c.data
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if name != "missing" {
				if err := os.WriteFile(filepath.Join(dir, "commands_cursor.json"), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err := jsonfile.New(jsonfile.Config{Dir: dir, NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			if n, err := s.CursorLoad(t.Context(), store.DefaultConsumer); err != nil || n != 0 {
				t.Errorf("CursorLoad with a %s cursor file = %d, %v; want 0", name, n, err)
			}
		})
	}
}
