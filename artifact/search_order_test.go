package artifact_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
)

// TestSearchTieBreaksByArtifactIDInTheOrderDirection: artifacts created
// at the same instant are ordered by artifact_id in the direction of the
// listing, as Python sorts by (created_at, artifact_id) with reverse for
// "desc" and its catalog orders "created_at DIR, artifact_id DIR".
func TestSearchTieBreaksByArtifactIDInTheOrderDirection(t *testing.T) {
	t.Parallel()
	fixed := func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }
	fsStore, err := artifact.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fsStore.SetClock(fixed)
	mem := artifact.NewMemory()
	mem.SetClock(fixed)
	for name, st := range map[string]interface {
		artifact.Store
	}{"memory": mem, "fs": fsStore} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			var ids []string
			for _, id := range []string{"bbb", "aaa", "ccc"} {
				m, err := st.Put(ctx, artifact.PutParams{Content: []byte(id), ArtifactID: id, RunID: "r"})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, m.ArtifactID)
			}
			slices.Sort(ids)
			asc, err := st.Search(ctx, artifact.SearchParams{Order: "asc"})
			if err != nil {
				t.Fatal(err)
			}
			desc, err := st.Search(ctx, artifact.SearchParams{})
			if err != nil {
				t.Fatal(err)
			}
			byRun, err := st.ListByRun(ctx, "r")
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(ids)
			slices.Reverse(want)
			if g := idsOf(asc); !slices.Equal(g, ids) {
				t.Errorf("asc = %v, want %v", g, ids)
			}
			if g := idsOf(desc); !slices.Equal(g, want) {
				t.Errorf("desc = %v, want %v", g, want)
			}
			if g := idsOf(byRun); !slices.Equal(g, want) {
				t.Errorf("ListByRun = %v, want %v (newest first, ties by id descending)", g, want)
			}
		})
	}
}

func idsOf(ms []*artifact.Metadata) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.ArtifactID)
	}
	return out
}
