//go:build unix

package artifact_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// TestFSFollowsTheUmaskAsPythonsDoes: in a group-shared data dir (umask
// 002) Python's artifact store makes its directories 0777 and its files
// 0666 under the umask (0775, 0664), so another member of the group may
// write them; ours must too, or a Python process of another member fails
// with PermissionError storing an artifact in the directories we created.
func TestFSFollowsTheUmaskAsPythonsDoes(t *testing.T) {
	old := syscall.Umask(0o002)
	defer syscall.Umask(old)
	dir := t.TempDir()
	st, err := artifact.NewFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.Put(context.Background(), artifact.PutParams{Content: []byte("body"), RunID: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "artifacts")
	blobs, err := filepath.Glob(filepath.Join(root, "blobs", "*.bin"))
	if err != nil || len(blobs) != 1 {
		t.Fatalf("blobs: %v, %v", blobs, err)
	}
	for path, want := range map[string]os.FileMode{
		root:                         0o775,
		filepath.Join(root, "blobs"): 0o775,
		filepath.Join(root, "refs"):  0o775,
		blobs[0]:                     0o664,
		filepath.Join(root, "refs", m.ArtifactID+".meta"): 0o664,
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %v under umask 002, want %v (as Python's mkdir and open give)", path, got, want)
		}
	}
}
