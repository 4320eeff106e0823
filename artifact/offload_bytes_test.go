package artifact_test

import (
	"context"
	"encoding/base64"
	"reflect"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// rawBytes is a named []byte type: the stores encode it as base64 too.
type rawBytes []byte

// A []byte is offloaded as the base64 string every store encodes it as:
// inline under the threshold (where Python offloads bytes whatever their
// size), as a text artifact of that string past it, measured in the
// container's JSON as that string too; nil stays (stored as null).
func TestOffloadBytesAsTheirBase64String(t *testing.T) {
	t.Parallel()
	b := setupOffload(t)
	ctx := context.Background()
	big := []byte(strings.Repeat("z", limit))
	in := map[string]any{
		"small": []byte("hi"),
		"nil":   []byte(nil),
		"named": rawBytes(big),
		"list":  []any{[]byte(strings.Repeat("y", 30)), []byte(strings.Repeat("x", 30))}, // 2×40 base64 bytes
	}
	outAny, err := artifact.Offload(ctx, b.st, in, b.opts)
	if err != nil {
		t.Fatal(err)
	}
	out := outAny.(map[string]any)
	if !reflect.DeepEqual(out["small"], []byte("hi")) || !reflect.DeepEqual(out["nil"], []byte(nil)) {
		t.Errorf("small and nil bytes = %#v, %#v; want them inline", out["small"], out["nil"])
	}
	m, content := refMeta(t, b.st, out["named"])
	if string(content) != base64.StdEncoding.EncodeToString(big) || m.ContentType != "text/plain" || m.Tags["path"] != "root.named" {
		t.Errorf("named bytes artifact = %+v %q", m, content)
	}
	m, content = refMeta(t, b.st, out["list"])
	want := `["` + base64.StdEncoding.EncodeToString(in["list"].([]any)[0].([]byte)) + `","` +
		base64.StdEncoding.EncodeToString(in["list"].([]any)[1].([]byte)) + `"]`
	if string(content) != want || m.ContentType != "application/json" {
		t.Errorf("list of bytes artifact = %+v %s, want %s", m, content, want)
	}
	// Restore gives back the strings the stores would have.
	restored, err := artifact.Restore(ctx, b.st, out, func(*artifact.Metadata) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if got := restored.(map[string]any)["named"]; got != base64.StdEncoding.EncodeToString(big) {
		t.Errorf("restored named bytes = %#v", got)
	}
}
