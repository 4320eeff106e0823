package store

import (
	"strings"
	"testing"
	"unsafe"
)

// TestRunLifecycleOwnsItsStrings: the sanitised lifecycle, which stores
// keep per run, does not share memory with the vars it was read from
// (decoded vars are slices of the whole run document).
func TestRunLifecycleOwnsItsStrings(t *testing.T) {
	doc := strings.Repeat("x", 1000) + "gatewayeditor" + strings.Repeat("y", 1000)
	source, purpose := doc[1000:1007], doc[1007:1013]
	lc := RunLifecycle(map[string]any{RunLifecycleKey: map[string]any{
		"source": source, "purpose": purpose, "retention": map[string]any{"mode": doc[1000:1007]},
	}})
	start := uintptr(unsafe.Pointer(unsafe.StringData(doc)))
	for _, v := range []string{lc["source"].(string), lc["purpose"].(string), lc["retention"].(map[string]any)["mode"].(string)} {
		p := uintptr(unsafe.Pointer(unsafe.StringData(v)))
		if p >= start && p < start+uintptr(len(doc)) {
			t.Errorf("%q shares the document's memory", v)
		}
	}
	if lc["source"] != "gateway" || lc["purpose"] != "editor" {
		t.Errorf("lifecycle = %v", lc)
	}
}
