package bundle

import (
	"path/filepath"
	"testing"
)

// Spec visualflow.md §7.3: the packed entrypoint's "name = flow `name` or
// id, `description` … copied from the flow", with Python's value
// semantics (Appendix B): AbstractRuntime's pack_workflow_bundle takes
// str(x or "") of both, so a hand-written flow's number name 7 packs as
// "7" while a falsy 0 falls back to the flow id. What would break:
// reading strings only, so the entrypoint is named by the flow id, has no
// description, and the name "7" that resolves the Python-packed bundle
// does not resolve this one.
func TestPackEntrypointNumberNameAndDescriptionAsPython(t *testing.T) {
	for _, c := range []struct {
		name, description  any
		wantName, wantDesc string
	}{
		{7, 7, "7", "7"},
		{1.5, true, "1.5", "True"},
		{0, false, "root", ""},
		{nil, nil, "root", ""},
		{"Main", "text", "Main", "text"},
	} {
		root := leafFlow("root")
		root["name"] = c.name
		root["description"] = c.description
		dir := packDir(t, map[string]map[string]any{"root": root})
		b, err := Pack(filepath.Join(dir, "root.json"), dir, PackOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ep := b.Manifest.Entrypoints[0]; ep.Name != c.wantName || ep.Description != c.wantDesc {
			t.Errorf("flow name %v, description %v: entrypoint name %q, description %q; want %q and %q (Python's str(x or \"\"))",
				c.name, c.description, ep.Name, ep.Description, c.wantName, c.wantDesc)
		}
	}
}
