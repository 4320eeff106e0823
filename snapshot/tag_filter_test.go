package snapshot_test

import (
	"context"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/snapshot"
)

// Python's _filter_snapshots keeps a snapshot when any(t.lower() ==
// tag.lower()); ListParams.Tag used strings.EqualFold, Unicode simple case
// folding, which is not that: "ſ" (long s) folds to "s" but lower()
// leaves it, "ς"/"σ" fold together but lower() keeps them apart, and
// "İ".lower() is "i̇" (two code points), which EqualFold never matches.
// (Query already uses pyval.Lower for exactly this reason.)
func TestSnapshotTagFilterIsPythonLower(t *testing.T) {
	t.Parallel()
	cases := []struct {
		tag, filter string
		want        bool // Python: tag.lower() == filter.lower()
	}{
		{"ſ", "S", false},
		{"ΟΔΟΣ", "οδοσ", false},
		{"ς", "σ", false},
		{"İ", "i̇", true},
		{"Release", "rELEASE", true},
	}
	for name, mk := range stores() {
		st := mk(t)
		for _, c := range cases {
			s := &durable.Snapshot{RunID: "r", Name: "n", Tags: []string{c.tag}}
			if err := st.Save(context.Background(), s); err != nil {
				t.Fatal(err)
			}
			got, err := st.List(context.Background(), snapshot.ListParams{RunID: "r", Tag: c.filter, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, g := range got {
				if g.SnapshotID == s.SnapshotID {
					found = true
				}
			}
			if found != c.want {
				t.Errorf("%s: snapshot tagged %q listed for tag filter %q = %v; Python: %v", name, c.tag, c.filter, found, c.want)
			}
		}
	}
}
