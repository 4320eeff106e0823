package bundle

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// RegistryDirEnv lists, first to last, the environment variables
// DefaultRegistryDir reads; the first one set to a non-blank value wins.
var RegistryDirEnv = []string{
	"ABSTRACTFRAMEWORK_WORKFLOWS_DIR", // shared by every AbstractFramework host
	"ABSTRACTGATEWAY_FLOWS_DIR",       // the gateway's own bundle directory
	"ABSTRACTFLOW_PUBLISH_DIR",        // where the editor publishes bundles
	"ABSTRACTFLOW_FLOWS_DIR",          // legacy
}

// DefaultRegistryDir returns the absolute directory a host loads .flow
// bundles from when it is not told one (spec visualflow §8.5): the first
// variable of RegistryDirEnv set to a non-blank value (trimmed, "~"
// expanded), else ./flows/bundles when it is a directory, else
// ~/.abstractframework/workflows. The directory need not exist.
// Symbolic links are resolved along the part of the path that exists.
func DefaultRegistryDir() (string, error) {
	for _, name := range RegistryDirEnv {
		raw := pyval.Strip(os.Getenv(name))
		if raw == "" {
			continue
		}
		dir, err := expandUser(raw)
		if err != nil {
			return "", fmt.Errorf("bundle directory from %s=%q: %w", name, raw, err)
		}
		return resolvePath(dir)
	}
	dev := filepath.Join("flows", "bundles")
	if st, err := os.Stat(dev); err == nil && st.IsDir() {
		return resolvePath(dev)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("default bundle directory: %w", err)
	}
	return resolvePath(filepath.Join(home, ".abstractframework", "workflows"))
}

// expandUser replaces a leading "~" or "~name" by that home directory, as
// Python's Path.expanduser does, failing where it would.
func expandUser(p string) (string, error) {
	if !strings.HasPrefix(p, "~") {
		return p, nil
	}
	first, rest, _ := strings.Cut(p, string(filepath.Separator))
	var home string
	if first == "~" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("could not determine home directory: %w", err)
		}
		home = h
	} else {
		u, err := user.Lookup(first[1:])
		if err != nil {
			return "", fmt.Errorf("could not determine home directory of %q: %w", first[1:], err)
		}
		home = u.HomeDir
	}
	return filepath.Join(home, rest), nil
}

// resolvePath makes p absolute and resolves the symbolic links of its
// longest existing prefix, keeping the rest as written (Python's
// Path.resolve without strict).
func resolvePath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", p, err)
	}
	var missing []string
	for cur := abs; ; {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			for i := len(missing) - 1; i >= 0; i-- {
				real = filepath.Join(real, missing[i])
			}
			return real, nil
		}
		// Like Python, a part that cannot be read (missing, not a
		// directory, not permitted) is kept as written.
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		missing = append(missing, filepath.Base(cur))
		cur = parent
	}
}
