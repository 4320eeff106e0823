package bundle

import (
	"strconv"
	"strings"
)

// isDraftVersion reports whether v names a draft: "draft", or a version
// starting with "draft." in any case (gateway-api §2).
func isDraftVersion(v string) bool {
	return v == "draft" || strings.HasPrefix(strings.ToLower(v), "draft.")
}

// semverParts parses a semver-like version: dot-separated non-negative
// integers, compared on the first three (missing parts = 0).
func semverParts(v string) ([3]uint64, bool) {
	var out [3]uint64
	if v == "" {
		return out, false
	}
	for i, p := range strings.Split(v, ".") {
		n, err := strconv.ParseUint(p, 10, 64)
		if err != nil {
			return out, false
		}
		if i < 3 {
			out[i] = n
		}
	}
	return out, true
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
			if pa[i] != pb[i] {
				return pa[i] > pb[i]
			}
		}
		return false
	}
	if a.Manifest.CreatedAt != b.Manifest.CreatedAt {
		return a.Manifest.CreatedAt > b.Manifest.CreatedAt
	}
	return a.Manifest.BundleVersion > b.Manifest.BundleVersion
}
