package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sharedBundlesDir is /work/shared/bundles seen from this package
// (../shared/bundles relative to the repository root).
const sharedBundlesDir = "../../../shared/bundles"

func TestSharedBundles(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(filepath.Join(sharedBundlesDir, "*.flow"))
	if len(files) == 0 {
		t.Skipf("no example bundles in %s (the shared folder is absent); skipping", sharedBundlesDir)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			b, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			m := b.Manifest
			if m.BundleFormatVersion != "1" || m.BundleID == "" || m.CreatedAt == "" || len(m.Entrypoints) == 0 {
				t.Fatalf("manifest = %+v", m)
			}
			if want := strings.TrimSuffix(filepath.Base(path), ".flow"); b.Ref() != want {
				t.Errorf("ref %s does not match file name %s", b.Ref(), want)
			}
			if _, ok := m.Entrypoint(m.DefaultEntrypoint); !ok {
				t.Errorf("default entrypoint %q is not an entrypoint", m.DefaultEntrypoint)
			}
			ns, err := Namespace(b)
			if err != nil {
				t.Fatal(err)
			}
			for flowID := range m.Flows {
				wid := WorkflowID(m.BundleID, m.BundleVersion, flowID)
				flow, ok := ns[wid]
				if !ok || flow["id"] != wid {
					t.Fatalf("flow %s not namespaced as %s", flowID, wid)
				}
				for _, n := range nodeList(flow) {
					switch NodeType(n) {
					case "agent":
						cfg, _ := nodeData(n)["agentConfig"].(map[string]any)
						want := ReactWorkflowID(wid, nodeID(n))
						if cfg["_react_workflow_id"] != want {
							t.Errorf("agent %s react id = %v, want %s", nodeID(n), cfg["_react_workflow_id"], want)
						}
					case "subflow":
						ref, _ := nodeData(n)["subflowId"].(string)
						if _, local := m.Flows[ref]; local {
							t.Errorf("subflow %s still references plain id %s", nodeID(n), ref)
						}
					}
				}
				schema := InputSchema(b.Flows[flowID])
				if _, ok := schema["input_data_schema"].(map[string]any); !ok {
					t.Errorf("flow %s: no input_data_schema", flowID)
				}
			}
		})
	}

	// All of them together in a registry.
	r, errs := OpenRegistry(sharedBundlesDir, nil)
	if len(errs) > 0 {
		t.Fatalf("OpenRegistry: %v", errs)
	}
	if _, _, err := r.ResolveEntrypoint("basic", ""); err != nil {
		if _, statErr := os.Stat(filepath.Join(sharedBundlesDir, "basic@dev.flow")); statErr == nil {
			t.Fatalf("ResolveEntrypoint(basic): %v", err)
		}
	}
}
