package jsonfile

import (
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/store"
)

// A cursor file whose cursor is a float (written by another tool) is read
// as Python's JsonFileCommandCursorStore.load reads it, int(cursor).
func TestCursorSavedAsAFloatIsReadAsItsInteger(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeRawFile(t, filepath.Join(dir, "commands_cursor.json"), `{"cursor": 7.0, "updated_at": "2026-01-01T09:00:00+00:00"}`)
	s := openInternal(t, dir)
	if n, err := s.CursorLoad(t.Context(), store.DefaultConsumer); err != nil || n != 7 {
		t.Errorf("CursorLoad = %d, %v; want 7", n, err)
	}
}

// CursorLoad read the cursor file without any lock, while CursorSave
// replaces files through the store's Recycler, which rewrites in place
// the file a previous Replace displaced. A CursorLoad("a") that opened
// commands_cursor_a.json just before a CursorSave("a") swapped it out
// could read what the next CursorSave("b") wrote there: consumer b's
// cursor (or 0 when a run file's JSON landed there). It now reads under
// CursorSave's lock, as Python's cursor store does.
func TestCursorLoadNeverReadsAnotherConsumersCursor(t *testing.T) {
	ctx := t.Context()
	s := openInternal(t, t.TempDir())
	const baseA, baseB = 1_000_000, 9_000_000
	if err := s.CursorSave(ctx, "a", baseA); err != nil {
		t.Fatal(err)
	}
	if err := s.CursorSave(ctx, "b", baseB); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wrong atomic.Int64
	var loads atomic.Int64
	var wg sync.WaitGroup
	for c, base := range map[string]int64{"a": baseA, "b": baseB} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int64(0); !stop.Load(); i++ {
				if err := s.CursorSave(ctx, c, base+i%1000); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			n, err := s.CursorLoad(ctx, "a")
			loads.Add(1)
			if err != nil || n < baseA || n >= baseA+1000 {
				wrong.Store(n)
				stop.Store(true)
				if n == 0 {
					wrong.Store(-1)
				}
			}
		}
	}()
	// Read without CursorSave's lock, the first wrong cursor came within ~0.1 s.
	deadline := time.Now().Add(1500 * time.Millisecond)
	for !stop.Load() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	if n := wrong.Load(); n != 0 {
		t.Errorf("after %d loads, CursorLoad(a) returned %d (-1: 0) while consumer a only ever saved %d..%d", loads.Load(), n, baseA, baseA+999)
	}
}
