package bundle

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// FormatVersion is the only supported bundle_format_version.
const FormatVersion = "1"

// Manifest is manifest.json with its canonical snake_case keys.
type Manifest struct {
	BundleFormatVersion string            `json:"bundle_format_version"`
	BundleID            string            `json:"bundle_id"`
	BundleVersion       string            `json:"bundle_version"`
	CreatedAt           string            `json:"created_at"`
	Entrypoints         []Entrypoint      `json:"entrypoints"`
	DefaultEntrypoint   string            `json:"default_entrypoint,omitempty"`
	Flows               map[string]string `json:"flows"`
	Artifacts           map[string]string `json:"artifacts"`
	Assets              map[string]string `json:"assets"`
	Metadata            map[string]any    `json:"metadata"`
}

// Entrypoint is one runnable flow of a bundle.
type Entrypoint struct {
	FlowID      string   `json:"flow_id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Interfaces  []string `json:"interfaces"`
}

// Entrypoint returns the entrypoint for flowID.
func (m *Manifest) Entrypoint(flowID string) (Entrypoint, bool) {
	for _, ep := range m.Entrypoints {
		if ep.FlowID == flowID {
			return ep, true
		}
	}
	return Entrypoint{}, false
}

// ParseManifest decodes and validates manifest.json, accepting the camelCase
// aliases of §7.2 on read.
func ParseManifest(data []byte) (Manifest, error) {
	var raw map[string]any
	if err := decodeDocument(data, &raw); errors.Is(err, errTrailingData) || errors.Is(err, errBOM) {
		return Manifest{}, fmt.Errorf("manifest.json: %w", err)
	} else if err != nil {
		return Manifest{}, fmt.Errorf("manifest.json is not a JSON object: %w", err)
	}
	if raw == nil {
		return Manifest{}, errors.New("manifest.json is not a JSON object")
	}
	m := Manifest{
		BundleFormatVersion: pyval.Strip(scalarString(pick(raw, "bundle_format_version", "bundleFormatVersion"))),
		BundleID:            pyval.Strip(scalarString(pick(raw, "bundle_id", "bundleId"))),
		BundleVersion:       pyval.Strip(scalarString(pick(raw, "bundle_version", "bundleVersion"))),
		CreatedAt:           scalarString(pick(raw, "created_at", "createdAt")),
		DefaultEntrypoint: pyval.Strip(scalarString(pick(raw, "default_entrypoint", "defaultEntrypoint",
			"default_entrypoint_flow_id", "defaultEntrypointFlowId"))),
	}
	if m.BundleVersion == "" { // absent, null or blank, as Python's reader has it
		m.BundleVersion = "0.0.0"
	}
	if m.BundleFormatVersion != FormatVersion {
		return Manifest{}, fmt.Errorf("unsupported bundle_format_version %q (want %q)", m.BundleFormatVersion, FormatVersion)
	}
	var err error
	if m.Entrypoints, err = parseEntrypoints(raw["entrypoints"]); err != nil {
		return Manifest{}, err
	}
	for _, f := range []struct {
		key string
		dst *map[string]string
	}{{"flows", &m.Flows}, {"artifacts", &m.Artifacts}, {"assets", &m.Assets}} {
		if *f.dst, err = parsePathMap(f.key, raw[f.key]); err != nil {
			return Manifest{}, err
		}
	}
	switch md := raw["metadata"].(type) {
	case nil:
		m.Metadata = map[string]any{}
	case map[string]any:
		m.Metadata = md
	default:
		return Manifest{}, errors.New("manifest metadata must be an object")
	}
	if err := m.Validate(); err != nil {
		return Manifest{}, err
	}
	return m, nil
}

func pick(raw map[string]any, keys ...string) any {
	v, _ := pickOK(raw, keys...)
	return v
}

// pickOK returns the first alias with a value Python finds true, as the
// reader's `raw.get(a) or raw.get(b)` picks: null, "" and 0 fall through.
func pickOK(raw map[string]any, keys ...string) (any, bool) {
	for _, k := range keys {
		if v, ok := raw[k]; ok && pyval.Truthy(v) {
			return v, true
		}
	}
	return nil, false
}

// scalarString renders strings and numbers as text; other values give "".
// A number reads as Python's str() of what json.loads built (the reader's
// `str(raw.get(...))`): 1.10 is "1.1" and 1e2 is "100.0", so that a bundle
// gets the ref, and workflow ids, that Python gives it.
func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return pyval.Str(x)
	}
	return ""
}

func parseEntrypoints(v any) ([]Entrypoint, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, errors.New("manifest entrypoints must be a non-empty array")
	}
	out := make([]Entrypoint, 0, len(list))
	for i, item := range list {
		obj, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("manifest entrypoints[%d] must be an object", i)
		}
		ep := Entrypoint{
			FlowID:      pyval.Strip(scalarString(pick(obj, "flow_id", "flowId"))),
			Description: scalarString(obj["description"]),
			Interfaces:  []string{},
		}
		switch n := obj["name"].(type) {
		case nil:
		case string:
			ep.Name = n
		default:
			return nil, fmt.Errorf("manifest entrypoints[%d].name must be a string or null", i)
		}
		if d, ok := obj["description"]; ok && d != nil {
			if _, isStr := d.(string); !isStr {
				return nil, fmt.Errorf("manifest entrypoints[%d].description must be a string", i)
			}
		}
		if raw, ok := obj["interfaces"]; ok && raw != nil {
			ifaces, ok := raw.([]any)
			if !ok {
				return nil, fmt.Errorf("manifest entrypoints[%d].interfaces must be an array of strings", i)
			}
			for _, x := range ifaces {
				s, ok := x.(string)
				if !ok {
					return nil, fmt.Errorf("manifest entrypoints[%d].interfaces must be an array of strings", i)
				}
				if s = pyval.Strip(s); s != "" {
					ep.Interfaces = append(ep.Interfaces, s)
				}
			}
		}
		out = append(out, ep)
	}
	return out, nil
}

func parsePathMap(key string, v any) (map[string]string, error) {
	out := map[string]string{}
	if v == nil {
		return out, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("manifest %s must be an object", key)
	}
	for k, raw := range obj {
		s, ok := raw.(string)
		if !ok {
			return nil, fmt.Errorf("manifest %s[%q] must be a path string", key, k)
		}
		// Python reads the stripped path (reader.py read_bytes).
		out[k] = pyval.Strip(s)
	}
	return out, nil
}

// Validate checks the manifest rules of §7.2.
func (m *Manifest) Validate() error {
	if m.BundleFormatVersion != FormatVersion {
		return fmt.Errorf("unsupported bundle_format_version %q (want %q)", m.BundleFormatVersion, FormatVersion)
	}
	if pyval.Strip(m.BundleID) == "" {
		return errors.New("manifest bundle_id is required")
	}
	if pyval.Strip(m.BundleVersion) == "" {
		return errors.New("manifest bundle_version must be non-empty")
	}
	if len(m.Entrypoints) == 0 {
		return errors.New("manifest entrypoints must be a non-empty array")
	}
	seen := map[string]bool{}
	for i, ep := range m.Entrypoints {
		if pyval.Strip(ep.FlowID) == "" {
			return fmt.Errorf("manifest entrypoints[%d].flow_id is required", i)
		}
		if seen[ep.FlowID] {
			return fmt.Errorf("manifest entrypoints: duplicate flow_id %q", ep.FlowID)
		}
		seen[ep.FlowID] = true
		if _, ok := m.Flows[ep.FlowID]; !ok {
			return fmt.Errorf("manifest entrypoint %q has no entry in flows", ep.FlowID)
		}
	}
	if m.DefaultEntrypoint != "" && !seen[m.DefaultEntrypoint] {
		return fmt.Errorf("manifest default_entrypoint %q is not an entrypoint flow_id", m.DefaultEntrypoint)
	}
	for _, f := range []struct {
		key string
		m   map[string]string
	}{{"flows", m.Flows}, {"artifacts", m.Artifacts}, {"assets", m.Assets}} {
		for k, p := range f.m {
			// Python refuses a key blank once stripped (models.py validate).
			if pyval.Strip(k) == "" {
				return fmt.Errorf("manifest %s has an empty key %q", f.key, k)
			}
			if err := CheckPath(p); err != nil {
				return fmt.Errorf("manifest %s[%q]: %w", f.key, k, err)
			}
		}
	}
	if len(m.Flows) == 0 {
		return errors.New("manifest flows must not be empty")
	}
	return nil
}

// CheckPath enforces the §7.2 path safety rules for a bundle-relative path:
// non-empty, not absolute ('/' or '\' prefix), no ':' before the first '/'
// (a drive-like prefix), and no '.' or '..' segment. The path is checked with
// surrounding whitespace stripped, as Python's _is_safe_relpath checks it
// and its reader opens it: " /etc/x" is absolute there.
func CheckPath(p string) error {
	s := pyval.Strip(p)
	if s == "" {
		return errors.New("empty path")
	}
	if strings.HasPrefix(s, "/") || strings.HasPrefix(s, `\`) {
		return fmt.Errorf("absolute path %q not allowed", p)
	}
	segs := strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == '\\' })
	if len(segs) == 0 {
		return fmt.Errorf("invalid path %q", p)
	}
	// The first segment is what comes before the first '/', a backslash
	// and what follows it included, as Python's reader takes it: it
	// refuses `flows\C:x`, which is not safer to accept.
	if first, _, _ := strings.Cut(s, "/"); strings.Contains(first, ":") {
		return fmt.Errorf("drive-like path %q not allowed", p)
	}
	for _, seg := range segs {
		if seg == "." || seg == ".." {
			return fmt.Errorf("path %q must not contain '.' or '..' segments", p)
		}
	}
	return nil
}

// normPath converts a checked manifest path to a forward-slash zip name.
func normPath(p string) string {
	return strings.Join(strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }), "/")
}
