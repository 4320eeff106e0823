package bundle

import (
	"testing"
)

func versions(vs ...[2]string) []*Bundle {
	var out []*Bundle
	for _, v := range vs {
		out = append(out, &Bundle{Manifest: Manifest{BundleID: "b", BundleVersion: v[0], CreatedAt: v[1]}})
	}
	return out
}

// §8.5: semver-like versions are compared on their first three parts.
func TestLatestComparesThirdSemverPart(t *testing.T) {
	for _, vs := range [][]*Bundle{
		versions([2]string{"1.2.9", ""}, [2]string{"1.2.10", ""}),
		versions([2]string{"1.2.10", ""}, [2]string{"1.2.9", ""}),
	} {
		if got := latest(vs).Manifest.BundleVersion; got != "1.2.10" {
			t.Errorf("latest(1.2.9, 1.2.10) = %s, want 1.2.10", got)
		}
	}
	// Parts after the third are ignored: 1.2.3.9 ties with 1.2.3 (first wins).
	if got := latest(versions([2]string{"1.2.3", ""}, [2]string{"1.2.3.9", ""})).Manifest.BundleVersion; got != "1.2.3" {
		t.Errorf("latest(1.2.3, 1.2.3.9) = %s, want 1.2.3 (a tie on the first three parts)", got)
	}
}

// §8.5: non-semver versions rank by the (created_at, version) pair, so
// equal created_at falls to the greater version string.
func TestLatestBreaksCreatedAtTieByVersion(t *testing.T) {
	for _, vs := range [][]*Bundle{
		versions([2]string{"alpha", "2026-01-01"}, [2]string{"main", "2026-01-01"}),
		versions([2]string{"main", "2026-01-01"}, [2]string{"alpha", "2026-01-01"}),
	} {
		if got := latest(vs).Manifest.BundleVersion; got != "main" {
			t.Errorf("latest(alpha, main) with equal created_at = %s, want main", got)
		}
	}
}

// IsDraft: only a version starting with "draft." (any case, surrounding
// whitespace ignored) is a draft, as gateway-api §2 and Python's
// _is_draft_bundle_version have it; a plain "draft" is published, so latest
// does not pass it over for an older published version.
func TestPlainDraftVersionIsPublished(t *testing.T) {
	for v, want := range map[string]bool{
		"draft": false, "drafty": false, "Draft.1": true, " draft.x ": true, "draft.": true, "1.0.0": false,
	} {
		if got := (&Bundle{Manifest: Manifest{BundleVersion: v}}).IsDraft(); got != want {
			t.Errorf("IsDraft(%q) = %v, want %v", v, got, want)
		}
	}
	// Both published and not all semver: the greatest (created_at,
	// version) wins, as Python's _pick_latest_version.
	if got := latest(versions([2]string{"draft", "2027-01-01"}, [2]string{"dev", "2026-01-01"})).Manifest.BundleVersion; got != "draft" {
		t.Errorf("latest(draft@2027, dev@2026) = %s, want draft", got)
	}
}
