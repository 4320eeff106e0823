package artifact_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
)

// TestSpecListAllNonPositiveLimitIsUnlimited pins spec §4.8:
// list_all(limit=1000) with limit ≤ 0 lists every artifact, newest first,
// on the in-memory and the file store alike.
func TestSpecListAllNonPositiveLimitIsUnlimited(t *testing.T) {
	t.Parallel()
	fs, err := artifact.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fs.Close() })
	mem := artifact.NewMemory()
	for name, st := range map[string]interface {
		artifact.Store
		SetClock(func() time.Time)
	}{"memory": mem, "fs": fs} {
		ctx := context.Background()
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		st.SetClock(func() time.Time { now = now.Add(time.Second); return now })
		var ids []string
		for i := range 3 {
			m, err := st.Put(ctx, artifact.PutParams{Content: []byte(fmt.Sprint("c", i)), RunID: "r"})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, m.ArtifactID)
		}
		for _, limit := range []int{0, -1} {
			got, err := st.ListAll(ctx, limit)
			if err != nil {
				t.Fatalf("%s: ListAll(%d): %v", name, limit, err)
			}
			if len(got) != 3 || got[0].ArtifactID != ids[2] || got[2].ArtifactID != ids[0] {
				t.Errorf("%s: ListAll(%d) = %d artifacts; want all 3, newest first", name, limit, len(got))
			}
		}
	}
}
