package artifact_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
)

// A Put killed between the blob temp's create and its rename leaves
// blobs/<blob>.bin.<32 hex>.tmp (and refs/<id>.meta.<32 hex>.tmp). GC only
// looks at *.bin, so nothing removed them; NewFS now sweeps stale temps, as
// the snapshot store sweeps its own.
func TestFSRemovesLeftoverTempsAtOpen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := artifact.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	blob := artifact.BlobID([]byte("payload"))
	tmp := filepath.Join(dir, "artifacts", "blobs", blob+".bin."+strings.Repeat("ab", 16)+".tmp")
	metaTmp := filepath.Join(dir, "artifacts", "refs", "abc.meta."+strings.Repeat("cd", 16)+".tmp")
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{tmp, metaTmp} {
		if err := os.WriteFile(p, []byte("payl"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	st, err = artifact.NewFS(dir) // reopen, as after the crash
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rep, err := st.GC(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{tmp, metaTmp} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("leftover temp %s (1h old) still there after reopen + GC (report %+v)", filepath.Base(p), *rep)
		}
	}
}

func stores(t *testing.T) map[string]artifact.Store {
	fs, err := artifact.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fs.Close() })
	return map[string]artifact.Store{"Memory": artifact.NewMemory(), "FS": fs}
}

// A run id that is not UTF-8: the id hashes its raw bytes, but the
// metadata would store U+FFFD in their place, so ListByRun/DeleteByRun/
// Search with the run id the caller stored under found nothing, and two
// such runs shared one run id. Put refuses it, saying why.
func TestRunIDNotUTF8IsRefusedOrFound(t *testing.T) {
	ctx := context.Background()
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			run := "run-\xff"
			m, err := st.Put(ctx, artifact.PutParams{Content: []byte("x"), RunID: run})
			if err != nil {
				if !strings.Contains(err.Error(), "not UTF-8") {
					t.Fatalf("Put refused the run id without saying why: %v", err)
				}
				return
			}
			if m.RunID != run {
				t.Errorf("Put returned run_id %q, want %q", m.RunID, run)
			}
			l, err := st.ListByRun(ctx, run)
			if err != nil || len(l) != 1 {
				t.Errorf("ListByRun(%q) = %d artifacts, %v; want 1", run, len(l), err)
			}
			got, err := st.Search(ctx, artifact.SearchParams{RunID: run})
			if err != nil || len(got) != 1 {
				t.Errorf("Search(RunID %q) = %d, %v; want 1", run, len(got), err)
			}
			if n, err := st.DeleteByRun(ctx, run); n != 1 || err != nil {
				t.Errorf("DeleteByRun(%q) = %d, %v; want 1", run, n, err)
			}
		})
	}
}

// Same for a tag value, which Search with the tags given at Put did not find.
func TestTagNotUTF8IsRefusedOrFound(t *testing.T) {
	ctx := context.Background()
	for name, st := range stores(t) {
		t.Run(name, func(t *testing.T) {
			tags := map[string]string{"k": "v\xff"}
			if _, err := st.Put(ctx, artifact.PutParams{Content: []byte("x"), Tags: tags}); err != nil {
				if !strings.Contains(err.Error(), "not UTF-8") {
					t.Fatalf("Put refused the tag without saying why: %v", err)
				}
				return
			}
			got, err := st.Search(ctx, artifact.SearchParams{Tags: tags})
			if err != nil || len(got) != 1 {
				t.Errorf("Search(Tags %q) = %d, %v; want the artifact stored with them", tags, len(got), err)
			}
		})
	}
}
