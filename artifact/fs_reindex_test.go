package artifact_test

import (
	"context"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
)

// hookCtx runs fn on the n-th call of Err (Reindex's scan calls Err once per
// directory entry, outside the store's lock).
type hookCtx struct {
	context.Context
	calls, n int
	fn       func()
}

func (c *hookCtx) Err() error {
	c.calls++
	if c.calls == c.n {
		c.fn()
	}
	return c.Context.Err()
}

// Reindex scanned the .meta files without the store's lock and then swapped
// the whole index in: a Put or Delete made by this process during the scan
// was undone in the index (the new artifact vanished from searches and the
// deleted one came back). Writes now wait for the scan.
func TestReindexKeepsConcurrentWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := artifact.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a1", "c1"} {
		if _, err := st.Put(ctx, artifact.PutParams{Content: []byte(id), ArtifactID: id}); err != nil {
			t.Fatal(err)
		}
	}
	writes := make(chan struct{})
	hc := &hookCtx{Context: ctx, n: 2, fn: func() { // after a1.meta was read
		go func() { // a write from another goroutine, while the scan runs
			defer close(writes)
			if _, err := st.Delete(ctx, "a1"); err != nil {
				t.Error(err)
			}
			if _, err := st.Put(ctx, artifact.PutParams{Content: []byte("b1"), ArtifactID: "b1"}); err != nil {
				t.Error(err)
			}
		}()
		time.Sleep(20 * time.Millisecond) // give the writes their chance to land mid-scan
	}}
	if _, err := st.Reindex(hc); err != nil {
		t.Fatal(err)
	}
	<-writes
	all, err := st.ListAll(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, m := range all {
		got[m.ArtifactID] = true
	}
	if got["a1"] || !got["b1"] || !got["c1"] {
		t.Fatalf("ListAll after Reindex = %v; want b1 and c1 (a1 was deleted, b1 put)", got)
	}
}
