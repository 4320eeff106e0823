package visualflow

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Edges of the workspace path policy (spec runtime-model §7.4, visualflow
// §6.10; Python abstractcore utils/workspace_paths.py and
// workspace_scoped_tools.py WorkspaceScope) found by mutation testing.

// A workspace_root naming an existing file is refused with an error that
// says so (Python: "workspace_root must be a directory (got file): <raw>"),
// not with whatever creating the folder over it happens to report.
func TestWorkspaceFileRootErrorNamesTheRoot(t *testing.T) {
	root := workspaceWith(t, map[string]string{"f.txt": "x"})
	fileRoot := filepath.Join(root, "f.txt")
	_, err := readFile(map[string]any{"workspace_root": fileRoot, "file_path": "a.txt"})
	if err == nil || !strings.Contains(err.Error(), "workspace_root must be a directory (got file): "+fileRoot) {
		t.Errorf("workspace_root naming a file: %v; want %q", err, "workspace_root must be a directory (got file): "+fileRoot)
	}
}

// An unknown access mode is named in the error, so the host sees which
// value it sent.
func TestWorkspaceInvalidAccessModeErrorNamesTheMode(t *testing.T) {
	root := workspaceWith(t, map[string]string{"a.txt": "x"})
	_, err := readFile(map[string]any{"workspace_root": root, "workspace_access_mode": "read_only", "file_path": "a.txt"})
	if err == nil || !strings.Contains(err.Error(), `Invalid workspace_access_mode: "read_only"`) {
		t.Errorf("workspace_access_mode read_only: %v; want it named in the error", err)
	}
}

// A blank access mode ("  ") is the default workspace_only (Python:
// str(raw or "").strip().lower() == "" → workspace_only): an absolute path
// outside the root is refused, not read as all_except_ignored would.
func TestWorkspaceBlankAccessModeIsWorkspaceOnly(t *testing.T) {
	root := workspaceWith(t, nil)
	outside := workspaceWith(t, map[string]string{"secret.txt": "TOP SECRET"})
	for _, mode := range []any{"  ", "", nil, int64(0)} {
		out, err := readFile(map[string]any{"workspace_root": root, "workspace_access_mode": mode,
			"file_path": filepath.Join(outside, "secret.txt")})
		if err == nil || !strings.Contains(err.Error(), "rejected by workspace policy") {
			t.Errorf("workspace_access_mode %#v, absolute path outside the root: %v, %v; want a rejection", mode, out, err)
		}
	}
}

// workspace_or_allowed refuses an absolute path outside every root with
// its own reason (Python: "Path is outside workspace roots"), not the
// workspace_only one, so the flow author knows an allowed path would do.
func TestWorkspaceOrAllowedOutsideErrorSaysRoots(t *testing.T) {
	root := workspaceWith(t, nil)
	outside := workspaceWith(t, map[string]string{"x.txt": "x"})
	_, err := readFile(map[string]any{"workspace_root": root, "workspace_access_mode": "workspace_or_allowed",
		"file_path": filepath.Join(outside, "x.txt")})
	if err == nil || !strings.Contains(err.Error(), "outside the workspace roots") {
		t.Errorf("workspace_or_allowed, path outside every root: %v; want \"outside the workspace roots\"", err)
	}
}

// Ignored paths are resolved like the user path: an ignored entry spelt
// through a symlink ("linkdir" -> secret) still blocks the folder it leads
// to, however the user path names it.
func TestWorkspaceIgnoredEntryThroughSymlinkBlocksTarget(t *testing.T) {
	root := workspaceWith(t, map[string]string{"secret/key.txt": "TOP SECRET"})
	if err := os.Symlink("secret", filepath.Join(root, "linkdir")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"secret/key.txt", "linkdir/key.txt"} {
		out, err := readFile(map[string]any{"workspace_root": root, "workspace_ignored_paths": "linkdir", "file_path": p})
		if err == nil || !strings.Contains(err.Error(), "blocked by workspace_ignored_paths") {
			t.Errorf("ignored linkdir (-> secret), read_file %s: %v, %v; want it blocked", p, out, err)
		}
	}
}

// An allowed folder inside the root is not mounted (Python mounts only the
// allowed folders outside it): its name must not shadow the root's own
// child of that name for a relative path.
func TestWorkspaceAllowedFolderInsideRootNotMounted(t *testing.T) {
	root := workspaceWith(t, map[string]string{"docs/a.txt": "top", "sub/docs/a.txt": "nested"})
	out, err := readFile(map[string]any{"workspace_root": root, "workspace_access_mode": "workspace_or_allowed",
		"workspace_allowed_paths": []any{filepath.Join(root, "sub", "docs")}, "file_path": "docs/a.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if m := out.(map[string]any); m["content"] != "top" || m["file_path"] != "docs/a.txt" {
		t.Errorf("read_file docs/a.txt with allowed <root>/sub/docs: %v; want the root's docs/a.txt", m)
	}
}

// A mounted folder itself is reported by its mount name (Python's
// _normalize_rel: rel "." is "", so the virtual path is the mount alone),
// not "<mount>/.".
func TestWorkspaceMountRootVirtualPathIsMountName(t *testing.T) {
	root := workspaceWith(t, nil)
	other := filepath.Join(t.TempDir(), "Shared Docs")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"shared-docs", other} {
		out, err := listFolder(map[string]any{"workspace_root": root, "workspace_access_mode": "workspace_or_allowed",
			"workspace_allowed_paths": []any{other}, "folder_path": p})
		if err != nil {
			t.Fatalf("list_folder_files %s: %v", p, err)
		}
		if got := out.(map[string]any)["folder_path"]; got != "shared-docs" {
			t.Errorf("list_folder_files %s: folder_path %q, want \"shared-docs\"", p, got)
		}
	}
}

// A chain of symlinks inside the root (l1 -> l2 -> real) is followed to
// the end, as realpath does; only a loop (or an overlong chain) fails.
func TestWorkspaceSymlinkChainFollowed(t *testing.T) {
	root := workspaceWith(t, map[string]string{"real/f.txt": "hello"})
	for _, l := range [][2]string{{"real", "l3"}, {"l3", "l2"}, {"l2", "l1"}} {
		if err := os.Symlink(l[0], filepath.Join(root, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	out, err := readFile(map[string]any{"workspace_root": root, "file_path": "l1/f.txt"})
	if err != nil {
		t.Fatalf("read_file through l1 -> l2 -> l3 -> real: %v", err)
	}
	if m := out.(map[string]any); m["content"] != "hello" || m["file_path"] != "real/f.txt" {
		t.Errorf("output %v, want real/f.txt read", m)
	}
}

// A name that merely starts with ".." ("..notes.txt") is inside the root:
// only a ".." segment leaves it.
func TestWorkspaceDotDotPrefixedNameIsInside(t *testing.T) {
	root := workspaceWith(t, map[string]string{"..notes.txt": "hello"})
	for _, p := range []string{"..notes.txt", filepath.Join(root, "..notes.txt")} {
		out, err := readFile(map[string]any{"workspace_root": root, "file_path": p})
		if err != nil {
			t.Errorf("read_file %s: %v; want it read", p, err)
			continue
		}
		if m := out.(map[string]any); m["content"] != "hello" || m["file_path"] != "..notes.txt" {
			t.Errorf("read_file %s: %v", p, m)
		}
	}
}

// ABSTRACT_WORKSPACE_BASE_DIR wins over ABSTRACTFLOW_WORKSPACE_BASE_DIR
// when both are set, and a relative base dir is taken from the working
// directory (Python: Path(v).expanduser().resolve()).
func TestWorkspaceBaseDirPrecedenceAndRelativeBase(t *testing.T) {
	t.Run("precedence", func(t *testing.T) {
		first, second := t.TempDir(), t.TempDir()
		t.Setenv("ABSTRACT_WORKSPACE_BASE_DIR", first)
		t.Setenv("ABSTRACTFLOW_WORKSPACE_BASE_DIR", second)
		t.Chdir(t.TempDir())
		if _, err := writeFile(map[string]any{"workspace_root": "ws", "file_path": "a.txt", "content": "x"}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(first, "ws", "a.txt")); err != nil {
			t.Errorf("both base dirs set: a.txt not under ABSTRACT_WORKSPACE_BASE_DIR (%v)", err)
		}
	})
	t.Run("relative", func(t *testing.T) {
		cwd := t.TempDir()
		t.Chdir(cwd)
		t.Setenv("ABSTRACT_WORKSPACE_BASE_DIR", "bases")
		_, err := writeFile(map[string]any{"workspace_root": "ws", "file_path": "a.txt", "content": "x"})
		if _, statErr := os.Stat(filepath.Join(cwd, "bases", "ws", "a.txt")); statErr != nil {
			t.Errorf("ABSTRACT_WORKSPACE_BASE_DIR=bases: %v, %v; want a.txt under <cwd>/bases/ws", err, statErr)
		}
	})
}

// mountSlug as Python's slug_workspace_mount_name.
func TestWorkspaceMountSlugAsPython(t *testing.T) {
	long := strings.Repeat("abcdefghij", 4) // 40 chars
	for name, want := range map[string]string{
		"Shared Docs":  "shared-docs",
		"  --Data!!--": "data",
		"a - b":        "a--b",
		"!!!":          "mount",
		"":             "mount",
		long:           long[:32],
		"Été 2024":     "t-2024",
	} {
		if got := mountSlug(name); got != want {
			t.Errorf("mountSlug(%q) = %q, want %q", name, got, want)
		}
	}
}

// Mount names stay within 32 characters when a digest is added (the slug
// is cut to make room), and the groups are named in sorted order, so a
// folder whose own name equals another's digest name never takes it
// first, whatever order the folders come in.
func TestWorkspaceMountDigestNamesBoundedAndOrdered(t *testing.T) {
	digest := func(p string) string {
		sum := sha256.Sum256([]byte(p))
		return hex.EncodeToString(sum[:])
	}
	long := strings.Repeat("x", 32)
	got := workspaceMounts([]string{"/a/" + long, "/b/" + long})
	for name := range got {
		if len(name) > 32 {
			t.Errorf("mount name %q has %d characters, want at most 32", name, len(name))
		}
	}
	if want := long[:23] + "_" + digest("/a/" + long)[:8]; got[want] != "/a/"+long {
		t.Errorf("workspaceMounts(long names) = %v, want %s for /a/%s", got, want, long)
	}

	clash := "data_" + digest("/x/data")[:8]
	dirs := []string{"/z/" + clash, "/x/data", "/y/data"}
	want := map[string]string{
		"data_" + digest("/x/data")[:8]:         "/x/data",
		"data_" + digest("/y/data")[:8]:         "/y/data",
		clash + "_" + digest("/z/" + clash)[:8]: "/z/" + clash,
	}
	for range 32 { // groups live in a map: its order varies between calls
		got := workspaceMounts(dirs)
		for name, p := range want {
			if got[name] != p {
				t.Fatalf("workspaceMounts(%v) = %v, want %v", dirs, got, want)
			}
		}
	}
}

// Path lists: a Go []string is read like a JSON array, blank entries are
// skipped (not read as the root itself, which would block everything),
// and "~" in an entry is the home folder (Python: Path(s).expanduser()).
func TestWorkspaceIgnoredPathsStringsBlanksAndHome(t *testing.T) {
	root := workspaceWith(t, map[string]string{"a.txt": "x", "secret/key.txt": "TOP SECRET"})
	t.Setenv("HOME", root)
	for _, ignored := range []any{[]string{"secret"}, []any{" ", "secret"}, "secret\n\n  \n", "~/secret"} {
		in := map[string]any{"workspace_root": root, "workspace_ignored_paths": ignored}
		in["file_path"] = "secret/key.txt"
		if _, err := readFile(in); err == nil || !strings.Contains(err.Error(), "blocked by workspace_ignored_paths") {
			t.Errorf("ignored %#v, read_file secret/key.txt: %v; want it blocked", ignored, err)
		}
		in["file_path"] = "a.txt"
		if _, err := readFile(in); err != nil {
			t.Errorf("ignored %#v, read_file a.txt: %v; want it read", ignored, err)
		}
	}
}

// A user path starting with "~" is expanded before the policy applies
// (Python: Path(normalized).expanduser()), so "~/a.txt" with the home
// inside the root is that file, not "<root>/~/a.txt".
func TestWorkspaceUserPathTildeExpanded(t *testing.T) {
	root := workspaceWith(t, map[string]string{"home/a.txt": "hello"})
	t.Setenv("HOME", filepath.Join(root, "home"))
	out, err := readFile(map[string]any{"workspace_root": root, "file_path": "~/a.txt"})
	if err != nil {
		t.Fatalf("read_file ~/a.txt with $HOME=<root>/home: %v", err)
	}
	if m := out.(map[string]any); m["content"] != "hello" || m["file_path"] != "home/a.txt" {
		t.Errorf("output %v, want home/a.txt read", m)
	}
}

// A rejected path is named in the error, as Python's "Path escapes
// workspace_root: '<p>'" names it, so a flow author sees which input was
// refused: an absolute path outside the root (workspace_only), one
// outside every root (workspace_or_allowed) and a relative one climbing
// out.
func TestWorkspaceRejectionsNameThePath(t *testing.T) {
	root := workspaceWith(t, nil)
	outside := filepath.Join(workspaceWith(t, map[string]string{"x.txt": "x"}), "x.txt")
	for _, c := range []struct{ mode, path, want string }{
		{"workspace_only", outside, "path escapes the workspace root: " + strconv.Quote(outside)},
		{"workspace_or_allowed", outside, "path is outside the workspace roots: " + strconv.Quote(outside)},
		{"workspace_only", "../up.txt", `path escapes the workspace root: "../up.txt"`},
	} {
		_, err := readFile(map[string]any{"workspace_root": root, "workspace_access_mode": c.mode, "file_path": c.path})
		if err == nil || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("%s, %s: %v; want an error ending %q", c.mode, c.path, err, c.want)
		}
	}
}
