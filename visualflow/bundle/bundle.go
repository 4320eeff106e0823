// Package bundle reads, validates, writes and packs `.flow` workflow
// bundles (spec visualflow.md §7), namespaces their flows (§8.2–8.3) and
// resolves bundle references in a directory registry (§8.5).
//
// A bundle is a ZIP archive (or a directory with the same layout) holding
// manifest.json, flows/<flow_id>.json and optional assets. Flows are kept
// as decoded VisualFlow JSON objects (numbers as json.Number) plus their
// raw bytes.
package bundle

import (
	"fmt"
	"path/filepath"
)

// Bundle is one loaded bundle version.
type Bundle struct {
	// Manifest is the validated manifest.
	Manifest Manifest
	// Flows maps flow id → decoded VisualFlow JSON object (UseNumber).
	Flows map[string]map[string]any
	// FlowBytes maps flow id → the raw bytes of the flow file.
	FlowBytes map[string][]byte
	// Assets maps logical asset name → file bytes; an asset the manifest
	// names but the source lacks is absent.
	Assets map[string][]byte
	// Source is the file or directory the bundle was read from ("" when
	// built in memory).
	Source string
}

// Ref returns "<bundle_id>@<bundle_version>".
func (b *Bundle) Ref() string {
	return b.Manifest.BundleID + "@" + b.Manifest.BundleVersion
}

// IsDraft reports whether the version is a draft: it starts with "draft."
// (case-insensitive); any other version, "draft" itself included, is
// published.
func (b *Bundle) IsDraft() bool {
	return isDraftVersion(b.Manifest.BundleVersion)
}

// label names the bundle in error messages: its ref when known, else its
// source file name.
func label(b *Bundle, source string) string {
	if b != nil && b.Manifest.BundleID != "" {
		if source != "" {
			return fmt.Sprintf("%s (%s)", b.Ref(), filepath.Base(source))
		}
		return b.Ref()
	}
	if source == "" {
		return "<memory>"
	}
	return filepath.Base(source)
}
