package visualflow

import (
	"cmp"
	"errors"
	"io/fs"
	"math"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// runFileNode executes the file nodes (§6.10). read_file, write_file,
// list_folder_files and the artifact nodes (read_artifact,
// import_workspace_file, export_artifact, which need the runtime's artifact
// store) run; the PDF nodes need a host PDF engine this runtime does not
// wire yet and fail with a clear error (a function-node failure: the run
// completes with success=false).
func (s *step) runFileNode(n *node, in map[string]any) (any, error) {
	switch n.Type {
	case "read_file":
		return readFile(in)
	case "write_file":
		return writeFile(in)
	case "list_folder_files":
		return listFolder(in)
	case "import_workspace_file", "read_artifact", "export_artifact":
		return s.runArtifactNode(n, in)
	}
	return nil, nodeErrorf("%s requires a host capability (PDF engine) that is not configured", n.Type)
}

// resolvePath resolves a user path and returns (absolute, reported)
// paths. With a workspace_root the workspace policy applies (spec
// runtime-model §7.4, Python's resolve_user_workspace_path): symlinks are
// followed as Path.resolve(strict=False) does, dangling ones included,
// before the containment, access-mode and ignored-path checks, so no link
// inside the workspace leads out of it; a link swapped between this check
// and the use is not caught (nor is it by Python's). pin names the input
// holding the path.
func resolvePath(node string, in map[string]any, pin string) (string, string, error) {
	abs, shown, _, err := resolveScoped(node, in, pin)
	return abs, shown, err
}

// resolveScoped is resolvePath also returning the workspace scope (nil
// without a workspace_root), for callers that must apply it further.
func resolveScoped(node string, in map[string]any, pin string) (string, string, *workspaceScope, error) {
	p := trimmed(in[pin])
	sc, err := workspaceScopeFrom(in)
	if err != nil {
		return "", "", nil, nodeErrorf("%s path rejected by workspace policy: %v", node, err)
	}
	if sc != nil && strings.HasPrefix(p, "@") {
		// The policy takes "@path" handles (attachments, some UIs).
		p = pyval.Strip(p[1:])
	}
	if p == "" {
		return "", "", nil, nodeErrorf("%s requires a non-empty '%s' input.", node, pin)
	}
	if sc != nil {
		abs, shown, err := sc.resolve(p)
		if err != nil {
			return "", "", nil, nodeErrorf("%s path rejected by workspace policy: %v", node, err)
		}
		return abs, shown, sc, nil
	}
	p, err = expandHome(p)
	if err != nil {
		return "", "", nil, nodeErrorf("%v", err) // Python's RuntimeError, unwrapped
	}
	abs, err := pathlibAbs(p)
	if err != nil {
		return "", "", nil, nodeErrorf("%s: %v", node, err)
	}
	return abs, abs, nil, nil
}

// pathlibAbs is Python's Path.cwd() / p for a relative p, p itself
// otherwise, in pathlib's form: "." and empty segments dropped, ".."
// kept. Removing ".." as text (filepath.Abs) would read another file than
// the OS does when the segment before it is a link ("lnk/../x" is x beside
// the link's target) or missing (the OS refuses "nodir/../x").
func pathlibAbs(p string) (string, error) {
	if !filepath.IsAbs(p) {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		p = joinUncleaned(wd, p)
	}
	vol := filepath.VolumeName(p)
	parts := slices.DeleteFunc(splitPath(p[len(vol):]), func(s string) bool { return s == "." })
	return vol + string(filepath.Separator) + strings.Join(parts, string(filepath.Separator)), nil
}

// errNoHome is pathlib's error for a "~" it cannot expand.
var errNoHome = errors.New("Could not determine home directory.")

// expandHome is Python's Path.expanduser: "~" and "~/…" start at $HOME
// (else the current user's home), "~name/…" at that user's home; a user
// (or home) that cannot be found is an error, as pathlib's RuntimeError,
// never a guess ("~name" is not "$HOME/name").
func expandHome(p string) (string, error) {
	if !strings.HasPrefix(p, "~") {
		return p, nil
	}
	end := strings.IndexByte(p, '/')
	if end < 0 {
		end = len(p)
	}
	var home string
	if end == 1 {
		if h, ok := os.LookupEnv("HOME"); ok {
			home = h
		} else if u, err := user.Current(); err == nil {
			home = u.HomeDir
		} else {
			return "", errNoHome
		}
	} else {
		u, err := user.Lookup(p[1:end])
		if err != nil {
			return "", errNoHome
		}
		home = u.HomeDir
	}
	// posixpath.expanduser: the home without trailing slashes, "/" if
	// nothing is left.
	return cmp.Or(strings.TrimRight(home, "/")+p[end:], "/"), nil
}

// beneath reports whether abs is root or inside it (both clean).
func beneath(root, abs string) bool {
	rel, err := filepath.Rel(root, abs)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// readWorkspaceFile resolves the node's file_path and reads that file: a
// missing path is "File not found", anything but a regular file (a
// directory, a FIFO that would block the read, a device) "Not a file";
// both name the path as the flow gave it, as Python's do.
func readWorkspaceFile(node string, in map[string]any) (abs, shown string, data []byte, err error) {
	abs, shown, err = resolvePath(node, in, "file_path")
	if err != nil {
		return "", "", nil, err
	}
	info, err := os.Stat(abs)
	if err != nil {
		return "", "", nil, nodeErrorf("File not found: %s", trimmed(in["file_path"]))
	}
	if !info.Mode().IsRegular() {
		return "", "", nil, nodeErrorf("Not a file: %s", trimmed(in["file_path"]))
	}
	if data, err = os.ReadFile(abs); err != nil {
		return "", "", nil, nodeErrorf("%s: %v", node, err)
	}
	return abs, shown, data, nil
}

func readFile(in map[string]any) (any, error) {
	abs, shown, data, err := readWorkspaceFile("read_file", in)
	if err != nil {
		return nil, err
	}
	if err := utf8DecodeError(data); err != nil {
		return nil, nodeErrorf("Cannot read '%s' as UTF-8: %v", trimmed(in["file_path"]), err)
	}
	// Python reads in text mode: \r\n and \r become \n.
	text := strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n")
	var content any = text
	if strings.EqualFold(filepath.Ext(abs), ".json") {
		v, err := pyval.LoadsJSON(text)
		if err != nil {
			// The path as the flow gave it, and Python's JSONDecodeError text.
			return nil, nodeErrorf("Invalid JSON in '%s': %v", trimmed(in["file_path"]), err)
		}
		content = v
	} else if t := strings.TrimLeft(text, " \t\r\n"); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		if v, err := pyval.LoadsJSON(text); err == nil {
			content = v
		}
	}
	return map[string]any{"content": content, "file_path": shown}, nil
}

func writeFile(in map[string]any) (any, error) {
	abs, shown, err := resolvePath("write_file", in, "file_path")
	if err != nil {
		return nil, err
	}
	var text string
	content := in["content"]
	if strings.EqualFold(filepath.Ext(abs), ".json") {
		if s, ok := content.(string); ok {
			v, err := pyval.LoadsJSON(s)
			if err != nil {
				return nil, nodeErrorf("write_file JSON content must be valid JSON: %v", err)
			}
			content = v
		}
		t, err := pyval.Dumps(content, pyval.DumpOptions{Indent: 2})
		if err != nil {
			return nil, nodeErrorf("write_file: %v", err)
		}
		text = t + "\n"
	} else {
		switch x := content.(type) {
		case nil:
		case string:
			text = x
		case map[string]any, []any:
			text, _ = pyval.Dumps(x, pyval.DumpOptions{Indent: 2})
		default:
			text = pyval.Str(x)
		}
	}
	if err := writeWorkspaceFile("write_file", abs, []byte(text), in["file_path"]); err != nil {
		return nil, err
	}
	return map[string]any{"bytes": int64(len(text)), "file_path": shown}, nil
}

// writeWorkspaceFile creates or replaces the file at abs (its folders
// made first) with data. An existing path that is not a regular file (a
// FIFO, a device) is refused as "Not a file", naming the path as the flow
// gave it, without writing: opening a FIFO nobody reads for writing
// blocks for ever, and the node's tick with it. The open does not block
// (O_NONBLOCK; it changes nothing for a regular file) and the check is
// made on the opened file, so a path swapped meanwhile is judged by what
// was opened.
func writeWorkspaceFile(node, abs string, data []byte, given any) error {
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nodeErrorf("%s: %v", node, err)
	}
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK, 0o644)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) { // a FIFO with no reader
			return nodeErrorf("Not a file: %s", trimmed(given))
		}
		return nodeErrorf("%s: %v", node, err)
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil {
		return nodeErrorf("%s: %v", node, err)
	} else if !info.Mode().IsRegular() {
		return nodeErrorf("Not a file: %s", trimmed(given))
	}
	if err := f.Truncate(0); err != nil {
		return nodeErrorf("%s: %v", node, err)
	}
	if _, err := f.Write(data); err != nil {
		return nodeErrorf("%s: %v", node, err)
	}
	if err := f.Close(); err != nil {
		return nodeErrorf("%s: %v", node, err)
	}
	return nil
}

func listFolder(in map[string]any) (any, error) {
	abs, shown, scope, err := resolveScoped("list_folder_files", in, "folder_path")
	if err != nil {
		return nil, err
	}
	if info, err := os.Stat(abs); err != nil {
		return nil, nodeErrorf("Folder not found: %s", trimmed(in["folder_path"]))
	} else if !info.IsDir() {
		return nil, nodeErrorf("Not a folder: %s", trimmed(in["folder_path"]))
	}
	// The walk and the ignore rules see the folder resolved (Python walks
	// the resolved path); a scoped path is resolved already.
	if real, err := resolveNoStrict(abs); err == nil {
		abs = real
	}
	recursive := pyval.Truthy(in["recursive"])
	includeDirs := pyval.Truthy(in["include_directories"])
	family := "any"
	if v := in["family"]; pyval.Truthy(v) {
		if f := pyval.Lower(pyval.Strip(pyval.Str(v))); f != "" {
			family = f
		}
	}
	// limit and max_depth are read with Python's int(x) (the reference
	// falls back on any error): true is 1, a float is truncated, "2.5"
	// and "1e0" are not ints and give the default. An int past int64,
	// which Python keeps exact, clamps the same.
	limit := 500
	if i, err := pyval.ToIndex(in["limit"]); err == nil {
		limit = int(max(1, min(i, 5000)))
	}
	maxDepth := 0
	if i, err := pyval.ToIndex(in["max_depth"]); err == nil && i > 0 {
		maxDepth = int(min(i, math.MaxInt32))
	}
	exts := listExtensions(in["extensions"])
	l := lister{scope: scope, ignore: loadAbstractIgnore(abs), shown: shown, recursive: recursive,
		includeDirs: includeDirs, limit: limit, maxDepth: maxDepth, family: family, exts: exts,
		entries: []any{}, files: []any{}}
	l.walk(abs, "", 0)
	return map[string]any{"folder_path": shown, "files": l.files, "entries": l.entries, "count": int64(len(l.files)), "truncated": l.truncated}, nil
}

// listExtensions is the reference's _parse_extensions: the items of a
// list as str(item or ""), any other non-None value as str(value) split
// on commas and newlines; each Python-stripped and lowered (the full
// mapping, as the suffixes it is compared with), one leading dot dropped.
func listExtensions(v any) map[string]bool {
	var items []string
	switch x := v.(type) {
	case nil:
	case []any:
		for _, e := range x {
			items = append(items, pyval.StrOrEmpty(e))
		}
	default:
		items = strings.Split(strings.ReplaceAll(pyval.Str(x), "\n", ","), ",")
	}
	exts := map[string]bool{}
	for _, e := range items {
		if e = strings.TrimPrefix(pyval.Lower(pyval.Strip(e)), "."); e != "" {
			exts[e] = true
		}
	}
	return exts
}

// lister walks a folder as Python's os.walk top-down does: a folder's
// sub-folders (as folder entries) and own files are listed before anything
// inside its sub-folders, so "the first limit files" are the shallow ones.
// Entries the .abstractignore rules or the workspace's ignored paths hide
// are neither listed, counted toward limit, nor entered.
type lister struct {
	scope                  *workspaceScope
	ignore                 *abstractIgnore
	shown                  string
	recursive, includeDirs bool
	limit, maxDepth        int
	family                 string
	exts                   map[string]bool
	entries, files         []any
	truncated              bool
}

// add appends an entry and reports whether the listing is full (Python
// sets truncated once len(entries) >= limit after an append).
func (l *lister) add(e map[string]any) bool {
	l.entries = append(l.entries, e)
	if len(l.entries) >= l.limit {
		l.truncated = true
		return true
	}
	return false
}

// hidden reports whether the ignore rules or the workspace's ignored
// paths hide the entry at path (a link by its path or its target). Python
// matches the resolved path; the walked folder is resolved already, so
// only a link needs resolving (a link leading out of the ignore root is
// matched by its absolute target).
func (l *lister) hidden(path string, d fs.DirEntry, isDir bool) bool {
	if l.scope != nil && l.scope.isIgnored(path) {
		return true
	}
	if d.Type()&fs.ModeSymlink != 0 {
		if real, err := resolveNoStrict(path); err == nil {
			path = real
		}
		// A link whose target is an ignored path is hidden as the
		// target is: the policy refuses the link (it resolves it), and
		// listing it would show the ignored file's name and size.
		if l.scope != nil && l.scope.isIgnored(path) {
			return true
		}
	}
	return l.ignore.ignored(path, isDir)
}

// walk lists dir (rel to the listed folder, at depth, the listed folder
// being 0) and reports whether the listing is full. Unreadable folders
// are skipped, as os.walk does without onerror.
func (l *lister) walk(dir, rel string, depth int) bool {
	des, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	var subdirs []string
	var fileEntries []fs.DirEntry
	for _, d := range des {
		path := filepath.Join(dir, d.Name())
		isDir := d.IsDir()
		if d.Type()&fs.ModeSymlink != 0 {
			// os.walk lists a link to a folder among the folders but
			// does not follow it (followlinks=False).
			info, err := os.Stat(path)
			isDir = err == nil && info.IsDir()
		}
		if !isDir {
			fileEntries = append(fileEntries, d)
			continue
		}
		// An ignored folder, or one deeper than max_depth, is neither
		// listed nor entered.
		if l.hidden(path, d, true) || l.maxDepth > 0 && depth+1 > l.maxDepth {
			continue
		}
		if l.includeDirs && l.add(map[string]any{"path": joinShown(l.shown, filepath.Join(rel, d.Name())), "name": d.Name(), "kind": "folder", "family": "folder"}) {
			return true
		}
		if d.IsDir() {
			subdirs = append(subdirs, d.Name())
		}
	}
	for _, d := range fileEntries {
		path := filepath.Join(dir, d.Name())
		if l.hidden(path, d, false) {
			continue
		}
		// Filters as the reference's file_matches_filters: extension
		// first, then family (computed once, it may read the file).
		suffix := nameSuffix(d.Name())
		if len(l.exts) > 0 && !l.exts[suffix] {
			continue
		}
		family := ""
		familyOf := func() string {
			if family == "" {
				family = fileFamily(path)
			}
			return family
		}
		if !familyFilterMatches(l.family, suffix, familyOf) {
			continue
		}
		e := map[string]any{"path": joinShown(l.shown, filepath.Join(rel, d.Name())), "name": d.Name(), "kind": "file", "family": familyOf()}
		if info, err := os.Stat(path); err == nil {
			e["size_bytes"] = info.Size()
		}
		l.files = append(l.files, e["path"])
		if l.add(e) {
			return true
		}
	}
	if !l.recursive {
		return false
	}
	for _, name := range subdirs {
		if l.walk(filepath.Join(dir, name), filepath.Join(rel, name), depth+1) {
			return true
		}
	}
	return false
}

func joinShown(base, rel string) string {
	return filepath.ToSlash(filepath.Join(base, rel))
}
