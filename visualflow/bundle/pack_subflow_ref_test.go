package bundle

import (
	"path/filepath"
	"strings"
	"testing"
)

// A subflow id naming a path ("sub/child") is refused when packing, even
// though <flows_dir>/sub/child.json exists: a flow id is one file name in
// the flows directory, never a path into it or out of it.
func TestPackRefusesSubflowIDWithSeparator(t *testing.T) {
	t.Parallel()
	root := simpleFlow("root", "sub/child")
	dir := packDir(t, map[string]map[string]any{"root": root})
	writeFile(t, filepath.Join(dir, "sub", "child.json"), []byte(mustJSON(t, leafFlow("sub/child"))))
	b, err := Pack(filepath.Join(dir, "root.json"), dir, PackOptions{})
	if err == nil || !strings.Contains(err.Error(), `invalid subflow id "sub/child"`) {
		t.Fatalf("Pack with subflow id sub/child: err = %v (flows %v); want an invalid subflow id error", err, flowKeysOrNil(b))
	}
}

func flowKeysOrNil(b *Bundle) []string {
	if b == nil {
		return nil
	}
	return flowKeys(b)
}

// A flow calling itself (spec §7.3: "self-references are fine") packs
// once: the flow already collected is not loaded again. Loading it again
// would recurse without end (here until the lowered decoded budget
// refuses it). Not parallel: it lowers the package's budget.
func TestPackSelfReferencingSubflowPacksOnce(t *testing.T) {
	lowerDecodedBudget(t, 1<<20)
	root := simpleFlow("root", "root")
	nodes := root["nodes"].([]any)
	root["nodes"] = nodes[:2] // start and the subflow node calling root
	dir := packDir(t, map[string]map[string]any{"root": root})
	b, err := Pack(filepath.Join(dir, "root.json"), dir, PackOptions{})
	if err != nil {
		t.Fatalf("Pack of a flow calling itself: %v", err)
	}
	if keys := flowKeys(b); len(keys) != 1 || keys[0] != "root" {
		t.Fatalf("packed flows = %v, want [root]", keys)
	}
}
