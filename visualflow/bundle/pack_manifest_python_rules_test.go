package bundle_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// Reference: AbstractRuntime workflow_bundle/packer.py _now_iso:
// datetime.now(timezone.utc).isoformat(), which omits the fraction when
// the microsecond is 0 ("2024-05-06T07:08:09+00:00", not
// "2024-05-06T07:08:09.000000+00:00") and otherwise writes six digits.
func TestPackCreatedAtOmitsFractionAtWholeSecond(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "main.json")
	if err := os.WriteFile(root, []byte(`{"id":"main","name":"main","nodes":[],"edges":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC) }
	b, err := bundle.Pack(root, dir, bundle.PackOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if want := "2024-05-06T07:08:09+00:00"; b.Manifest.CreatedAt != want {
		t.Errorf("created_at = %q, want %q (Python isoformat)", b.Manifest.CreatedAt, want)
	}
	// Microseconds are kept as Python does.
	now = func() time.Time { return time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC) }
	b, err = bundle.Pack(root, dir, bundle.PackOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if want := "2024-05-06T07:08:09.123456+00:00"; b.Manifest.CreatedAt != want {
		t.Errorf("created_at = %q, want %q", b.Manifest.CreatedAt, want)
	}
}

// Reference: AbstractRuntime workflow_bundle/packer.py
// pack_workflow_bundle: entry_ids = [str(x).strip() for x in entry_ids if
// isinstance(x, str) and str(x).strip()] and de_param =
// str(default_entrypoint).strip(), so " main " names flow main and blank
// entries are dropped (rather than failing with `entrypoint " main " is not
// a collected flow`); entrypoints given but all blank are an error ("No
// valid entrypoints specified"), not the root flow.
func TestPackStripsEntrypointIDs(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "main.json")
	if err := os.WriteFile(root, []byte(`{"id":"main","name":"Main","nodes":[],"edges":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.Pack(root, dir, bundle.PackOptions{Entrypoints: []string{" main ", "  "}, DefaultEntrypoint: " main"})
	if err != nil {
		t.Fatalf("Pack: %v", err)
	}
	if len(b.Manifest.Entrypoints) != 1 || b.Manifest.Entrypoints[0].FlowID != "main" || b.Manifest.DefaultEntrypoint != "main" {
		t.Errorf("entrypoints = %+v, default %q; want [main], main", b.Manifest.Entrypoints, b.Manifest.DefaultEntrypoint)
	}
	if _, err := bundle.Pack(root, dir, bundle.PackOptions{Entrypoints: []string{" ", ""}}); err == nil {
		t.Error("Pack with only blank entrypoints succeeded; want an error as the reference")
	}
}
