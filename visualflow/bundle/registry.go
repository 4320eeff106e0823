package bundle

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/abstractframework/abstractgateway/internal/pyval"
	"golang.org/x/text/cases"
)

// ErrNotFound is wrapped by Resolve errors for unknown bundles, versions
// and entrypoints.
var ErrNotFound = errors.New("not found")

// Registry holds every bundle version found in a directory.
type Registry struct {
	dir    string
	logger *slog.Logger

	mu      sync.RWMutex
	byID    map[string][]*Bundle // bundle id → versions
	byFile  map[string]*Bundle   // base file name of every valid file → bundle
	ordered []*Bundle            // sorted by (id, version)
}

// OpenRegistry loads every *.flow file of dir. A bad bundle never stops the
// others: each failure (naming the file) is logged and returned. A nil
// logger discards logs.
func OpenRegistry(dir string, logger *slog.Logger) (*Registry, []error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := &Registry{dir: dir, logger: logger.WithGroup("bundle_registry")}
	return r, r.Reload()
}

// Reload rescans the directory and replaces the registry contents.
func (r *Registry) Reload() []error {
	var errs []error
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		err = fmt.Errorf("scanning bundle directory %s: %w", r.dir, err)
		r.logger.Error("scan failed", slog.String("dir", r.dir), slog.Any("error", err))
		return []error{err}
	}
	byID := map[string][]*Bundle{}
	byFile := map[string]*Bundle{}
	kept := map[string]*Bundle{} // ref → the bundle kept for it
	keptFile := map[string]string{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".flow") {
			continue
		}
		path := filepath.Join(r.dir, e.Name())
		// Only regular files (symlinks followed) are bundles, as Python's
		// scan has it (`if not path.is_file(): continue`): Read would load
		// a directory named *.flow as a bundle.
		if info, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) || err == nil && !info.Mode().IsRegular() {
			r.logger.Debug("skipping non-file", slog.String("file", e.Name()))
			continue
		}
		b, err := Read(path)
		if err != nil {
			r.logger.Warn("skipping bundle", slog.String("file", e.Name()), slog.Any("error", err))
			errs = append(errs, err)
			continue
		}
		if prev, dup := kept[b.Ref()]; dup {
			// The file name still resolves (as Python's resolve_entrypoint
			// opens <dir>/<name>.flow whatever other files hold), to the
			// bundle kept for its ref: that is what a host runs for it.
			byFile[e.Name()] = prev
			err := fmt.Errorf("bundle %s: %s duplicates %s; keeping %s", b.Ref(), e.Name(), keptFile[b.Ref()], keptFile[b.Ref()])
			r.logger.Warn("duplicate bundle", slog.String("file", e.Name()), slog.Any("error", err))
			errs = append(errs, err)
			continue
		}
		kept[b.Ref()], keptFile[b.Ref()] = b, e.Name()
		byID[b.Manifest.BundleID] = append(byID[b.Manifest.BundleID], b)
		byFile[e.Name()] = b
	}
	var ordered []*Bundle
	for _, list := range byID {
		ordered = append(ordered, list...)
	}
	sort.Slice(ordered, func(i, j int) bool {
		if ordered[i].Manifest.BundleID != ordered[j].Manifest.BundleID {
			return ordered[i].Manifest.BundleID < ordered[j].Manifest.BundleID
		}
		return ordered[i].Manifest.BundleVersion < ordered[j].Manifest.BundleVersion
	})
	r.mu.Lock()
	r.byID, r.byFile, r.ordered = byID, byFile, ordered
	r.mu.Unlock()
	r.logger.Info("bundles loaded", slog.Int("count", len(ordered)), slog.Int("errors", len(errs)))
	return errs
}

// List returns every loaded bundle version sorted by (bundle id, version).
func (r *Registry) List() []*Bundle {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]*Bundle(nil), r.ordered...)
}

// Resolve finds a bundle by "bundle_id" (latest version) or
// "bundle_id@version"; a trailing ".flow" (any case) is stripped from a
// ref naming no path.
func (r *Registry) Resolve(ref string) (*Bundle, error) {
	ref = pyval.Strip(ref)
	// As Python's _split_bundle_ref: "mybundle.FLOW" names bundle mybundle,
	// while "dir/x.flow" is a path, not a bundle id, and stays as it is.
	if isFlowFileName(ref) {
		ref = ref[:len(ref)-len(".flow")]
	}
	// Each side of the '@' is stripped, as Python's _split_bundle_ref
	// does: "b @ 1.0" is b@1.0, and "b@ " is b's latest.
	id, version, _ := strings.Cut(ref, "@")
	id, version = pyval.Strip(id), pyval.Strip(version)
	if id == "" {
		return nil, fmt.Errorf("resolving bundle: empty bundle reference")
	}
	r.mu.RLock()
	versions := r.byID[id]
	r.mu.RUnlock()
	if len(versions) == 0 {
		return nil, fmt.Errorf("bundle '%s': %w", id, ErrNotFound)
	}
	if version == "" {
		return latest(versions), nil
	}
	var avail []string
	for _, b := range versions {
		if b.Manifest.BundleVersion == version {
			return b, nil
		}
		avail = append(avail, b.Manifest.BundleVersion)
	}
	sort.Strings(avail)
	return nil, fmt.Errorf("bundle '%s@%s' %w (available: %s)", id, version, ErrNotFound, strings.Join(avail, ", "))
}

// ResolveEntrypoint resolves ref to a bundle and one of its entrypoints.
// ref may be "bundle", "bundle@version", "bundle:flow",
// "bundle@version:flow", a ".flow" file name in the registry directory
// (any valid file, a duplicate of another's bundle_id@bundle_version
// included), or an entrypoint name (compared case-folded, over every
// installed version; it must match exactly one entrypoint).
// flowID, when non-empty, must be an entrypoint; otherwise the default
// entrypoint, else the first entrypoint, is used.
func (r *Registry) ResolveEntrypoint(ref, flowID string) (*Bundle, string, error) {
	ref = pyval.Strip(ref)
	b, namedFlow, err := r.resolveBundleRef(ref)
	if err != nil {
		return nil, "", err
	}
	if _, refFlow, ok := splitRefFlow(ref); ok {
		if flowID != "" && flowID != refFlow {
			return nil, "", fmt.Errorf("resolving %s: flow %q conflicts with flow %q in the reference", ref, flowID, refFlow)
		}
		flowID = refFlow
	} else if flowID == "" {
		flowID = namedFlow
	}
	m := b.Manifest
	switch {
	case flowID != "":
		if _, ok := m.Entrypoint(flowID); !ok {
			return nil, "", fmt.Errorf("bundle %s: flow '%s' is not an entrypoint: %w", b.Ref(), flowID, ErrNotFound)
		}
	case m.DefaultEntrypoint != "":
		flowID = m.DefaultEntrypoint
	default:
		flowID = m.Entrypoints[0].FlowID
	}
	return b, flowID, nil
}

// resolveBundleRef handles every accepted reference form except the flow
// part of a workflow id. When ref resolved as an entrypoint name (only
// then), namedFlow is that entrypoint's flow.
func (r *Registry) resolveBundleRef(ref string) (b *Bundle, namedFlow string, err error) {
	if bundleRef, _, ok := splitRefFlow(ref); ok {
		// "x.flow:main" names flow main of the file x.flow, whatever
		// bundle id it holds, as Python's resolve_entrypoint splits first.
		if byFile := r.fileBundle(bundleRef); byFile != nil {
			return byFile, "", nil
		}
		b, err = r.Resolve(bundleRef)
		return b, "", err
	}
	if byFile := r.fileBundle(ref); byFile != nil {
		return byFile, "", nil
	}
	b, err = r.Resolve(ref)
	if err == nil {
		return b, "", nil
	}
	// Any failure to resolve a bundle falls back to the entrypoint names,
	// as Python's resolve_entrypoint does: "@home" is no bundle reference
	// (its bundle part is empty) but may be a name.
	ep, nameErr := r.entrypointByName(ref)
	if nameErr != nil {
		return nil, "", nameErr
	}
	if ep.b != nil {
		return ep.b, ep.flowID, nil
	}
	return nil, "", err
}

// fileBundle returns the bundle read from the registry directory's file
// named ref, when ref is a ".flow" file name (a path, "dir/x.flow", is
// not looked up), as Python's resolve_entrypoint does; else nil.
func (r *Registry) fileBundle(ref string) *Bundle {
	if !isFlowFileName(ref) {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.byFile[ref]
}

// isFlowFileName reports whether ref ends in ".flow", in any case, and
// names no path (no '/' or '\\'): Python's test
// `s.lower().endswith(".flow") and "/" not in s and "\\" not in s`.
func isFlowFileName(ref string) bool {
	n := len(ref) - len(".flow")
	return n >= 0 && strings.EqualFold(ref[n:], ".flow") && !strings.ContainsAny(ref, `/\`)
}

// splitRefFlow splits "<bundle ref>:<flow>" on the first ':', each side
// stripped, as Python's _parse_namespaced_workflow_id: "b@1.0 : main" names
// flow main of b@1.0. ok is false unless both sides are non-empty.
func splitRefFlow(ref string) (bundleRef, flowID string, ok bool) {
	bundleRef, flowID, found := strings.Cut(ref, ":")
	bundleRef, flowID = pyval.Strip(bundleRef), pyval.Strip(flowID)
	if !found || bundleRef == "" || flowID == "" {
		return "", "", false
	}
	return bundleRef, flowID, true
}

type namedEntrypoint struct {
	b      *Bundle
	flowID string
}

// entrypointByName finds the entrypoint named name, comparing names as
// Python's str.casefold() does (full Unicode case folding: "ß" matches
// "ss"), over every installed bundle version: a name only an older version
// carries is found. The name must match exactly one bundle (spec §8.5):
// when several versions of that bundle carry it, the latest of them wins,
// so installing a new version does not make the name ambiguous (Python
// refuses it then; docs/compatibility.md). No match gives a zero
// namedEntrypoint and a nil error; matches in several bundles, or two
// entrypoints of the chosen version with the name, are an error naming
// them, wrapping ErrNotFound.
func (r *Registry) entrypointByName(name string) (namedEntrypoint, error) {
	if name == "" {
		return namedEntrypoint{}, nil
	}
	needle := casefold(name)
	r.mu.RLock()
	defer r.mu.RUnlock()
	versions := map[string][]*Bundle{} // bundle id → versions carrying the name
	for _, b := range r.ordered {
		for _, ep := range b.Manifest.Entrypoints {
			if epName := pyval.Strip(ep.Name); epName != "" && casefold(epName) == needle {
				versions[b.Manifest.BundleID] = append(versions[b.Manifest.BundleID], b)
				break
			}
		}
	}
	switch len(versions) {
	case 0:
		return namedEntrypoint{}, nil
	case 1:
	default:
		return namedEntrypoint{}, fmt.Errorf("entrypoint name '%s' matches multiple bundles (%s); use bundle_id[@version] instead: %w",
			name, strings.Join(slices.Sorted(maps.Keys(versions)), ", "), ErrNotFound)
	}
	var b *Bundle
	for _, vs := range versions {
		b = latest(vs)
	}
	var found []string
	for _, ep := range b.Manifest.Entrypoints {
		if epName := pyval.Strip(ep.Name); epName != "" && casefold(epName) == needle {
			found = append(found, ep.FlowID)
		}
	}
	if len(found) > 1 {
		return namedEntrypoint{}, fmt.Errorf("entrypoint name '%s' matches several entrypoints of bundle %s (%s); use bundle_id:flow_id instead: %w",
			name, b.Ref(), strings.Join(found, ", "), ErrNotFound)
	}
	return namedEntrypoint{b: b, flowID: found[0]}, nil
}

// casefold returns s case-folded as Python's str.casefold() does.
func casefold(s string) string {
	return cases.Fold().String(s)
}
