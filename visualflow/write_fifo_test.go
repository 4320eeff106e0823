//go:build unix

package visualflow

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// write_file to a FIFO inside the workspace is refused as "Not a file"
// at once: opening a FIFO that nobody reads for writing blocks, and the
// run's tick (and the runner driving it) blocked with it for ever. A
// FIFO with a reader is refused too, without writing to it.
func TestWriteFileRefusesAFIFO(t *testing.T) {
	root := t.TempDir()
	fifo := filepath.Join(root, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo not available here: %v", err)
	}
	write := func() *durable.RunState {
		flow := rsFlow("f", "start", []map[string]any{
			startNode(),
			rsNode("wf", "write_file", []string{"exec-in:exec", "file_path:string", "content:string"}, []string{"exec-out:exec", "file_path:string"},
				map[string]any{"pinDefaults": map[string]any{"file_path": "pipe", "content": "x"}}),
		}, "start.exec-out>wf.exec-in")
		return runFlow(t, flow, map[string]any{"workspace_root": root})
	}
	check := func(st *durable.RunState, when string) {
		t.Helper()
		if st.Output["success"] != false || !strings.Contains(jsonText(t, st.Output), "Not a file: pipe") {
			t.Fatalf("%s: status %s, output %s; want the node's error \"Not a file: pipe\"", when, st.Status, jsonText(t, st.Output))
		}
	}
	check(write(), "no reader")

	// With a reader the open succeeds; the node still refuses to write.
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	check(write(), "a reader")
	buf := make([]byte, 8)
	if n, _ := r.Read(buf); n != 0 {
		t.Fatalf("%d bytes were written to the FIFO: %q", n, buf[:n])
	}

	// A regular file is still created, then replaced.
	for _, content := range []string{"first text", "x"} {
		flow := rsFlow("f", "start", []map[string]any{
			startNode(),
			rsNode("wf", "write_file", []string{"exec-in:exec", "file_path:string", "content:string"}, []string{"exec-out:exec", "file_path:string"},
				map[string]any{"pinDefaults": map[string]any{"file_path": "sub/f.txt", "content": content}}),
		}, "start.exec-out>wf.exec-in")
		if st := runFlow(t, flow, map[string]any{"workspace_root": root}); st.Status != durable.RunCompleted || st.Output["success"] != true {
			t.Fatalf("regular file: status %s (%s), output %s", st.Status, st.Error, jsonText(t, st.Output))
		}
		if got, err := os.ReadFile(filepath.Join(root, "sub", "f.txt")); err != nil || string(got) != content {
			t.Fatalf("f.txt = %q, %v; want %q", got, err, content)
		}
	}
}
