package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriterStmts: the writer's driver-level statements bind the types
// the store passes, refuse others by name, report a missing row as
// sql.ErrNoRows, and leave no argument in their reused slice.
func TestWriterStmts(t *testing.T) {
	t.Parallel()
	s, err := New(t.Context(), Config{Path: filepath.Join(t.TempDir(), "runtime.sqlite3")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	err = s.write(ctx, func(ctx context.Context) error {
		if _, err := s.w.runVersion.queryInt64(ctx, "no-such-run"); !errors.Is(err, sql.ErrNoRows) {
			t.Errorf("runVersion of a missing run: err = %v, want sql.ErrNoRows", err)
		}
		// An int is bound as an integer.
		if _, err := s.w.cursorSave.exec(ctx, "consumer", 7, "2026-11-30T00:00:00+00:00"); err != nil {
			t.Errorf("cursorSave with an int cursor: %v", err)
		}
		_, err := s.w.cursorSave.exec(ctx, "consumer", struct{}{}, "2026-11-30T00:00:00+00:00")
		if err == nil || !strings.Contains(err.Error(), "argument 2") || !strings.Contains(err.Error(), "struct {}") {
			t.Errorf("cursorSave with a struct: err = %v, want one naming argument 2 and its type", err)
		}
		for i, a := range s.w.args[:cap(s.w.args)] {
			if a.Value != nil {
				t.Errorf("scratch argument %d still holds %v after the statement", i+1, a.Value)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.CursorLoad(ctx, "consumer")
	if err != nil || got != 7 {
		t.Fatalf("CursorLoad = %d, %v; want 7", got, err)
	}
}
