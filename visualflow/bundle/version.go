package bundle

import (
	"cmp"
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// isDraftVersion reports whether v names a draft: a version starting with
// "draft." in any case, surrounding whitespace ignored (gateway-api §2, as
// Python's _is_draft_bundle_version). A plain "draft" is published.
func isDraftVersion(v string) bool {
	return strings.HasPrefix(pyval.Lower(pyval.Strip(v)), "draft.")
}

// semverParts parses a semver-like version as Python's _try_parse_semver:
// dot-separated non-negative integers (each part stripped), compared on
// the first three (missing parts = 0). Parts are kept as decimal digits
// without leading zeros, so that numbers of any size compare as Python's
// ints do.
func semverParts(v string) ([3]string, bool) {
	out := [3]string{"0", "0", "0"}
	v = pyval.Strip(v)
	if v == "" {
		return out, false
	}
	for i, p := range strings.Split(v, ".") {
		p = pyval.Strip(p)
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return out, false
		}
		if i < 3 {
			if p = strings.TrimLeft(p, "0"); p == "" {
				p = "0"
			}
			out[i] = p
		}
	}
	return out, true
}

// cmpDigits compares two decimal numbers without leading zeros.
func cmpDigits(a, b string) int {
	if len(a) != len(b) {
		return cmp.Compare(len(a), len(b))
	}
	return strings.Compare(a, b)
}

// latest picks the newest of several versions of one bundle (§8.5):
// non-draft versions are preferred when any exists; if every candidate is
// semver-like the maximum wins, else the greatest (created_at, version).
func latest(versions []*Bundle) *Bundle {
	var cands []*Bundle
	for _, b := range versions {
		if !b.IsDraft() {
			cands = append(cands, b)
		}
	}
	if len(cands) == 0 {
		cands = versions
	}
	allSemver := true
	for _, b := range cands {
		if _, ok := semverParts(b.Manifest.BundleVersion); !ok {
			allSemver = false
			break
		}
	}
	var best *Bundle
	for _, b := range cands {
		if best == nil || newer(b, best, allSemver) {
			best = b
		}
	}
	return best
}

func newer(a, b *Bundle, bySemver bool) bool {
	if bySemver {
		pa, _ := semverParts(a.Manifest.BundleVersion)
		pb, _ := semverParts(b.Manifest.BundleVersion)
		for i := range pa {
			if c := cmpDigits(pa[i], pb[i]); c != 0 {
				return c > 0
			}
		}
		return false
	}
	if a.Manifest.CreatedAt != b.Manifest.CreatedAt {
		return a.Manifest.CreatedAt > b.Manifest.CreatedAt
	}
	return a.Manifest.BundleVersion > b.Manifest.BundleVersion
}
