//go:build unix

package bundle

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A named pipe where a bundle file (or a bundle directory's manifest) is
// expected made Read block for ever in open(2): `bundle validate DIR`,
// `bundle inspect`, `bundle run` and a registry Reload hung, and Ctrl-C
// could not stop them. Read must refuse what is not a regular file.
func TestNamedPipeDoesNotHangRead(t *testing.T) {
	cases := []struct {
		name string
		// returns the path to Read and the fifo it creates
		setup func(t *testing.T, dir string) (string, string)
	}{
		{"fifo .flow file", func(t *testing.T, dir string) (string, string) {
			p := filepath.Join(dir, "x.flow")
			return p, p
		}},
		{"fifo manifest in a bundle directory", func(t *testing.T, dir string) (string, string) {
			return dir, filepath.Join(dir, "manifest.json")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path, fifo := tc.setup(t, dir)
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := Read(path)
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("a named pipe was read as a bundle")
				}
			case <-time.After(3 * time.Second):
				// Unblock the reader (a writer opens and closes the pipe)
				// so that no goroutine outlives the test.
				for {
					if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
						f.Close()
					}
					select {
					case <-done:
						t.Fatalf("Read(%s) was still blocked after 3s on a named pipe", filepath.Base(fifo))
					case <-time.After(50 * time.Millisecond):
					}
				}
			}
		})
	}
}
