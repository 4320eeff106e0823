//go:build unix

package bundle

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A named pipe where Pack expects a flow file (the root, or a subflow's
// <flowsDir>/<id>.json, whose name the flow before it chooses) made Pack
// block for ever in open(2), as Read once did (read_fifo_unix_test.go).
// Pack refuses what is not a regular file.
func TestNamedPipeDoesNotHangPack(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "root.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Pack(fifo, dir, PackOptions{})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a named pipe was packed as a flow")
		}
	case <-time.After(3 * time.Second):
		for { // unblock the opener so no goroutine outlives the test
			if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
			select {
			case <-done:
				t.Fatal("Pack was still blocked after 3s on a named pipe")
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}
