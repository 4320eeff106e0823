package bundle

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRegistry(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T) *Registry {
		t.Helper()
		dir := t.TempDir()
		put := func(file string, o fixtureOptions) {
			writeFile(t, filepath.Join(dir, file), bundleZip(t, o))
		}
		put("semver@0.9.0.flow", fixtureOptions{ID: "semver", Version: "0.9.0"})
		put("semver@0.10.0.flow", fixtureOptions{ID: "semver", Version: "0.10.0"})
		put("semver@1.flow", fixtureOptions{ID: "semver", Version: "0.2"})
		put("mixed@dev.flow", fixtureOptions{ID: "mixed", Version: "dev", CreatedAt: "2026-02-01"})
		put("mixed@1.0.0.flow", fixtureOptions{ID: "mixed", Version: "1.0.0", CreatedAt: "2026-01-01"})
		put("mixed@draft.x.flow", fixtureOptions{ID: "mixed", Version: "draft.x", CreatedAt: "2027-01-01"})
		put("drafty.flow", fixtureOptions{ID: "drafty", Version: "draft.a", CreatedAt: "2026-01-01"})
		put("drafty2.flow", fixtureOptions{ID: "drafty", Version: "draft.b", CreatedAt: "2026-03-01"})
		put("dup.flow", fixtureOptions{ID: "semver", Version: "0.9.0"}) // sorts before semver@…
		writeFile(t, filepath.Join(dir, "broken.flow"), []byte("not a zip"))
		writeFile(t, filepath.Join(dir, "ignored.txt"), []byte("x"))
		logger := slog.New(slog.NewTextHandler(testWriter{t}, nil))
		r, errs := OpenRegistry(dir, logger)
		if len(errs) != 2 {
			t.Fatalf("OpenRegistry errors = %v, want broken.flow and a duplicate", errs)
		}
		joined := errors.Join(errs...).Error()
		if !strings.Contains(joined, "broken.flow") || !strings.Contains(joined, "duplicates") {
			t.Fatalf("errors do not name the files: %v", joined)
		}
		return r
	}

	t.Run("List", func(t *testing.T) {
		t.Parallel()
		r := setup(t)
		var refs []string
		for _, b := range r.List() {
			refs = append(refs, b.Ref())
		}
		want := "drafty@draft.a drafty@draft.b mixed@1.0.0 mixed@dev mixed@draft.x semver@0.10.0 semver@0.2 semver@0.9.0"
		if strings.Join(refs, " ") != want {
			t.Fatalf("List = %v", refs)
		}
	})

	t.Run("Resolve", func(t *testing.T) {
		t.Parallel()
		r := setup(t)
		tests := []struct{ ref, want, wantErr string }{
			{ref: "semver", want: "semver@0.10.0"},
			{ref: "semver.flow", want: "semver@0.10.0"},
			{ref: "semver@0.2", want: "semver@0.2"},
			{ref: "mixed", want: "mixed@dev"},       // non-semver: greatest created_at, drafts dropped
			{ref: "drafty", want: "drafty@draft.b"}, // only drafts: considered
			{ref: "mixed@draft.x", want: "mixed@draft.x"},
			{ref: "semver@9", wantErr: "bundle 'semver@9' not found (available: 0.10.0, 0.2, 0.9.0)"},
			{ref: "nope", wantErr: "bundle 'nope': not found"},
			{ref: " ", wantErr: "empty bundle reference"},
		}
		for _, tt := range tests {
			b, err := r.Resolve(tt.ref)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("Resolve(%q) err = %v, want %q", tt.ref, err, tt.wantErr)
				}
				continue
			}
			if err != nil || b.Ref() != tt.want {
				t.Errorf("Resolve(%q) = %v, %v; want %s", tt.ref, b, err, tt.want)
			}
		}
	})

	t.Run("ResolveEntrypoint", func(t *testing.T) {
		t.Parallel()
		r := setup(t)
		tests := []struct{ ref, flow, wantRef, wantFlow, wantErr string }{
			{ref: "semver", wantRef: "semver@0.10.0", wantFlow: "main"},
			{ref: "semver@0.9.0:main", wantRef: "semver@0.9.0", wantFlow: "main"},
			{ref: "semver:main", wantRef: "semver@0.10.0", wantFlow: "main"},
			{ref: "mixed@1.0.0.flow", wantRef: "mixed@1.0.0", wantFlow: "main"},
			// Every installed version of mixed names its entrypoint
			// mixed-entry: one bundle, so its latest version.
			{ref: "MIXED-ENTRY", wantRef: "mixed@dev", wantFlow: "main"},
			{ref: "semver", flow: "main", wantRef: "semver@0.10.0", wantFlow: "main"},
			{ref: "semver", flow: "child", wantErr: "flow 'child' is not an entrypoint"},
			{ref: "semver:main", flow: "other", wantErr: "conflicts"},
			{ref: "unknown-entry", wantErr: "not found"},
		}
		for _, tt := range tests {
			b, flow, err := r.ResolveEntrypoint(tt.ref, tt.flow)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("ResolveEntrypoint(%q, %q) err = %v, want %q", tt.ref, tt.flow, err, tt.wantErr)
				}
				continue
			}
			if err != nil || b.Ref() != tt.wantRef || flow != tt.wantFlow {
				t.Errorf("ResolveEntrypoint(%q, %q) = %v, %q, %v", tt.ref, tt.flow, b, flow, err)
			}
		}
	})

	t.Run("Reload", func(t *testing.T) {
		t.Parallel()
		r := setup(t)
		writeFile(t, filepath.Join(r.dir, "new.flow"), bundleZip(t, fixtureOptions{ID: "fresh"}))
		if _, err := r.Resolve("fresh"); err == nil {
			t.Fatal("new bundle visible before Reload")
		}
		r.Reload()
		if _, err := r.Resolve("fresh"); err != nil {
			t.Fatalf("after Reload: %v", err)
		}
	})
}

func TestOpenRegistry_MissingDir(t *testing.T) {
	t.Parallel()
	_, errs := OpenRegistry(filepath.Join(t.TempDir(), "absent"), nil)
	if len(errs) != 1 || !errors.Is(errs[0], os.ErrNotExist) {
		t.Fatalf("errs = %v", errs)
	}
}

// testWriter routes log output to t.Log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
