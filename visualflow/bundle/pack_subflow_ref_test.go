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
