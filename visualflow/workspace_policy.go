package visualflow

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// Workspace access modes (spec runtime-model §7.4).
const (
	modeWorkspaceOnly      = "workspace_only"
	modeWorkspaceOrAllowed = "workspace_or_allowed"
	modeAllExceptIgnored   = "all_except_ignored"
)

// maxLinkHops bounds the symlinks followed while resolving one path, so a
// link loop fails instead of spinning.
const maxLinkHops = 255

// errPathEscape is the rejection of a path that leads out of its root,
// naming the path as given, as Python's "Path escapes workspace_root: '<p>'"
// does (the Go runtime's wording, with the path added).
func errPathEscape(text string) error {
	return fmt.Errorf("path escapes the workspace root: %s", strconv.Quote(text))
}

// workspaceScope is the file nodes' workspace policy, built from a node
// input's workspace_* keys as Python's WorkspaceScope.from_input_data.
// Every path in it is resolved (resolveNoStrict).
type workspaceScope struct {
	root    string
	mode    string
	ignored []string
	allowed []string
	// mounts names the allowed folders outside root, so that a relative
	// "<mount>/x" path reaches them (workspace_or_allowed and
	// all_except_ignored only).
	mounts map[string]string
}

// workspaceScopeFrom builds the scope from the node input; nil when there
// is no workspace_root. An invalid policy (unknown access mode, unparsable
// path list, root that is a file) is an error, so the node fails closed.
func workspaceScopeFrom(in map[string]any) (*workspaceScope, error) {
	raw := trimmed(in["workspace_root"])
	if raw == "" {
		return nil, nil
	}
	root, err := expandHome(raw)
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(root) {
		base, err := workspaceBaseDir()
		if err != nil {
			return nil, fmt.Errorf("workspace base dir: %w", err)
		}
		root = joinUncleaned(base, root)
	}
	root, err = resolveNoStrict(root)
	if err != nil {
		return nil, fmt.Errorf("workspace_root: %w", err)
	}
	if info, err := os.Stat(root); err == nil && !info.IsDir() {
		return nil, fmt.Errorf("workspace_root must be a directory (got file): %s", raw)
	}
	// Created if missing (spec §7.4, as Python's scope does), so a new
	// run's workspace lists as empty instead of failing "Folder not found".
	if err := os.MkdirAll(root, 0o777); err != nil {
		return nil, fmt.Errorf("workspace_root: %w", err)
	}
	sc := &workspaceScope{root: root}
	if sc.mode, err = accessMode(in["workspace_access_mode"]); err != nil {
		return nil, err
	}
	if sc.ignored, err = policyPaths(root, "workspace_ignored_paths", in["workspace_ignored_paths"]); err != nil {
		return nil, err
	}
	if sc.mode != modeWorkspaceOnly {
		// workspace_only ignores the allowed list (Python still mounts it
		// for file nodes; refusing is the safe reading of the mode).
		if sc.allowed, err = policyPaths(root, "workspace_allowed_paths", in["workspace_allowed_paths"]); err != nil {
			return nil, err
		}
		var outside []string
		for _, a := range sc.allowed {
			if !beneath(root, a) {
				outside = append(outside, a)
			}
		}
		sc.mounts = workspaceMounts(outside)
	}
	return sc, nil
}

// workspaceBaseDir is where a relative workspace_root lives: env
// ABSTRACT_WORKSPACE_BASE_DIR, else ABSTRACTFLOW_WORKSPACE_BASE_DIR, else
// the working directory (Python's resolve_workspace_base_dir, without its
// source-checkout guess).
func workspaceBaseDir() (string, error) {
	for _, k := range []string{"ABSTRACT_WORKSPACE_BASE_DIR", "ABSTRACTFLOW_WORKSPACE_BASE_DIR"} {
		if v := pyval.Strip(os.Getenv(k)); v != "" {
			p, err := expandHome(v)
			if err != nil {
				return "", err
			}
			return filepath.Abs(p)
		}
	}
	return os.Getwd()
}

// accessMode is Python's _normalize_access_mode: a falsy or blank value
// is workspace_only, an unknown mode an error.
func accessMode(v any) (string, error) {
	if !pyval.Truthy(v) { // str(raw or ""): 0, [] and {} too
		return modeWorkspaceOnly, nil
	}
	s := strings.ToLower(pyval.Strip(pyval.Str(v)))
	switch s {
	case "":
		return modeWorkspaceOnly, nil
	case modeWorkspaceOnly, modeWorkspaceOrAllowed, modeAllExceptIgnored:
		return s, nil
	}
	return "", fmt.Errorf("Invalid workspace_access_mode: %s (expected one of: %s, %s, %s)",
		strconv.Quote(pyval.Str(v)), modeAllExceptIgnored, modeWorkspaceOnly, modeWorkspaceOrAllowed)
}

// policyPaths parses a path list (JSON array, string holding a JSON array,
// or newline-separated text; relative entries against root) and resolves
// its entries, duplicates removed. Unlike Python, a value it cannot read
// (a non-string entry, a malformed array) is an error: these lists deny
// access, so guessing would fail open.
func policyPaths(root, key string, v any) ([]string, error) {
	var entries []string
	switch x := v.(type) {
	case nil:
	case []string:
		entries = x
	case []any:
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%s: entry %s is not a string", key, pyval.Repr(e))
			}
			entries = append(entries, s)
		}
	case string:
		text := pyval.Strip(x)
		if strings.HasPrefix(text, "[") {
			arr, err := pyval.LoadsJSON(text)
			list, ok := arr.([]any)
			if err != nil || !ok {
				return nil, fmt.Errorf("%s: not a valid JSON array", key)
			}
			return policyPaths(root, key, list)
		}
		// Python's str.splitlines: "\r", "\v", "\f", U+2028 ... end a line
		// too; splitting on "\n" only would read "a\rb" as one path and
		// block neither.
		entries = pySplitLines(text)
	default:
		return nil, fmt.Errorf("%s: expected a list or text, got %s", key, pyval.Repr(v))
	}
	var out []string
	for _, e := range entries {
		e = pyval.Strip(e)
		if e == "" {
			continue
		}
		p, err := expandHome(e)
		if err != nil {
			return nil, err
		}
		if !filepath.IsAbs(p) {
			p = joinUncleaned(root, p)
		}
		r, err := resolveNoStrict(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out, nil
}

// resolve resolves a user path under the policy (Python's
// resolve_user_workspace_path) and returns the resolved absolute path and
// the virtual one reported by the node: relative to the root,
// "<mount>/<rel>" in an allowed folder, or the absolute path elsewhere
// (all_except_ignored).
func (sc *workspaceScope) resolve(text string) (string, string, error) {
	text = strings.ReplaceAll(text, `\`, "/")
	var abs, virt string
	p, err := expandHome(text)
	if err != nil {
		return "", "", err
	}
	if filepath.IsAbs(p) {
		r, err := resolveNoStrict(p)
		if err != nil {
			return "", "", err
		}
		abs = r
		if rel, ok := relBeneath(sc.root, r); ok {
			virt = joinVirtual("", rel)
		} else if name, rel, ok := sc.inMount(r); ok {
			virt = joinVirtual(name, rel)
		} else if sc.mode == modeAllExceptIgnored {
			virt = r
		} else if sc.mode == modeWorkspaceOrAllowed {
			return "", "", fmt.Errorf("path is outside the workspace roots: %s", strconv.Quote(text))
		} else {
			return "", "", errPathEscape(text)
		}
	} else {
		for strings.HasPrefix(text, "./") {
			text = text[2:]
		}
		root, mount, rel := sc.root, "", text
		parts := strings.FieldsFunc(text, func(r rune) bool { return r == '/' })
		parts = slices.DeleteFunc(parts, func(s string) bool { return s == "." })
		if len(parts) > 0 {
			if m, ok := sc.mounts[parts[0]]; ok {
				root, mount, rel = m, parts[0], strings.Join(parts[1:], "/")
			} else if parts[0] == filepath.Base(sc.root) && !exists(filepath.Join(sc.root, parts[0])) {
				// "<root name>/x" means x when the root has no such child.
				rel = strings.Join(parts[1:], "/")
			}
		}
		r, err := resolveNoStrict(joinUncleaned(root, filepath.FromSlash(rel)))
		if err != nil {
			return "", "", err
		}
		rr, ok := relBeneath(root, r)
		if !ok {
			return "", "", errPathEscape(text)
		}
		abs, virt = r, joinVirtual(mount, rr)
	}
	if sc.isIgnored(abs) {
		return "", "", fmt.Errorf("path is blocked by workspace_ignored_paths: %s", strconv.Quote(text))
	}
	return abs, virt, nil
}

// isIgnored reports whether the resolved path is an ignored path or lies
// under one.
func (sc *workspaceScope) isIgnored(abs string) bool {
	for _, ig := range sc.ignored {
		if beneath(ig, abs) {
			return true
		}
	}
	return false
}

// inMount finds the mounted allowed folder holding r (the longest match).
func (sc *workspaceScope) inMount(r string) (name, rel string, ok bool) {
	best := -1
	for n, m := range sc.mounts {
		if x, in := relBeneath(m, r); in && len(m) > best {
			best, name, rel, ok = len(m), n, x, true
		}
	}
	return name, rel, ok
}

// relBeneath is r relative to root in slash form ("." for root itself)
// when r is root or beneath it.
func relBeneath(root, r string) (string, bool) {
	if !beneath(root, r) {
		return "", false
	}
	rel, _ := filepath.Rel(root, r)
	return filepath.ToSlash(rel), true
}

// joinVirtual is the virtual path of rel (relBeneath's) in the mounted
// folder mount, or in the workspace root when mount is "": the root
// itself is "" there, as Python's _normalize_rel makes ".".
func joinVirtual(mount, rel string) string {
	switch {
	case mount == "" && rel == ".":
		return ""
	case mount == "":
		return rel
	case rel == "" || rel == ".":
		return mount
	}
	return mount + "/" + rel
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// joinUncleaned joins base and rel as Python's base / rel does, keeping
// rel's ".." segments for resolveNoStrict: filepath.Join would cancel
// "link/.." as text, before the link is followed, and so name another
// file than the path does ("dirlink/../x" is x beside the link's target).
func joinUncleaned(base, rel string) string {
	return strings.TrimRight(base, string(filepath.Separator)) + string(filepath.Separator) + rel
}

// resolveNoStrict is Python's Path.resolve(strict=False) (realpath) of an
// absolute path: every existing symlink component is followed, even when
// its target is missing, and the missing rest is kept as written (with
// "." and ".." applied). So a dangling link "out.txt -> /elsewhere/x"
// resolves to /elsewhere/x, and the caller's containment check sees where
// a write would really land.
func resolveNoStrict(p string) (string, error) {
	vol := filepath.VolumeName(p)
	resolved := vol + string(filepath.Separator)
	pending := splitPath(p[len(vol):])
	for hops := 0; len(pending) > 0; {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		info, err := os.Lstat(next)
		if err != nil || info.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", fmt.Errorf("too many levels of symbolic links: %s", p)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("read link %s: %w", next, err)
		}
		if filepath.IsAbs(target) {
			v := filepath.VolumeName(target)
			resolved, target = v+string(filepath.Separator), target[len(v):]
		}
		pending = append(splitPath(target), pending...)
	}
	return resolved, nil
}

func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r < 0x80 && os.IsPathSeparator(uint8(r)) })
}

// workspaceMounts names the allowed folders outside the root as Python's
// build_workspace_mounts: the slug of the folder's name, made unique with
// a digest of its path (then _2, _3, ...) when names collide.
func workspaceMounts(dirs []string) map[string]string {
	groups := map[string][]string{}
	for _, d := range dirs {
		s := mountSlug(filepath.Base(d))
		if !slices.Contains(groups[s], d) {
			groups[s] = append(groups[s], d)
		}
	}
	bases := make([]string, 0, len(groups))
	for b := range groups {
		bases = append(bases, b)
	}
	slices.Sort(bases)
	used := map[string]bool{}
	out := map[string]string{}
	for _, base := range bases {
		paths := groups[base]
		slices.Sort(paths)
		digestNames := len(paths) > 1 || used[base]
		for _, p := range paths {
			name := base
			if digestNames || used[base] {
				name = ""
				sum := sha256.Sum256([]byte(p))
				digest := hex.EncodeToString(sum[:])
				for w := 8; w <= 32 && name == ""; w += 4 {
					if c := base[:min(len(base), max(1, 32-(1+w)))] + "_" + digest[:w]; !used[c] {
						name = c
					}
				}
				for i := 2; name == ""; i++ {
					suffix := "_" + strconv.Itoa(i)
					if c := base[:min(len(base), max(1, 32-len(suffix)))] + suffix; !used[c] {
						name = c
					}
				}
			}
			used[name] = true
			out[name] = p
		}
	}
	return out
}

// mountSlug is Python's slug_workspace_mount_name: lower-case
// [a-z0-9_-], other runs collapsed to "-", trimmed, at most 32 chars.
func mountSlug(name string) string {
	var b strings.Builder
	prevDash := false
	for _, r := range strings.ToLower(pyval.Strip(name)) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			b.WriteRune(r)
			prevDash = r == '-'
		} else if !prevDash {
			b.WriteByte('-')
			prevDash = true
		}
	}
	s := strings.Trim(b.String(), "-")
	if s == "" {
		return "mount"
	}
	return s[:min(len(s), 32)]
}
