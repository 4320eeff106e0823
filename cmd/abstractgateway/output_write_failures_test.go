package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

type failingWriter struct{}

func (failingWriter) Write(p []byte) (int, error) { return 0, errors.New("no space left on device") }

// Without the fix, `bundle run ... > out.json` on a full disk (or a closed
// pipe): the run JSON cannot be written, the error is ignored, and the
// command exits 0 with an empty out.json. (`bundle inspect` checks the write
// and exits 1.)
func TestCLI_BundleRunFailsWhenItsOutputCannotBeWritten(t *testing.T) {
	t.Parallel()
	path := packGreet(t, t.TempDir())
	var errb bytes.Buffer
	code := bundleRunWith(context.Background(), []string{path, "--answer", "ok"}, strings.NewReader(""), failingWriter{}, &errb)
	if code == 0 {
		t.Errorf("bundle run exited 0 although writing the run JSON to stdout failed; stderr:\n%s", errb.String())
	}
}

// shortWriter accepts one byte less than it is given, without an error.
type shortWriter struct{}

func (shortWriter) Write(p []byte) (int, error) { return max(len(p)-1, 0), nil }

// TestOutWriterReportsShortWrites: a write that reaches its destination
// only in part, even without an error, fails the command (outWriter's
// doc: a truncated output must not end in exit 0).
func TestOutWriterReportsShortWrites(t *testing.T) {
	out := &outWriter{w: shortWriter{}}
	if _, err := fmt.Fprintln(out, "hello"); !errors.Is(err, io.ErrShortWrite) {
		t.Errorf("short write: err = %v, want io.ErrShortWrite", err)
	}
	var stderr bytes.Buffer
	if code := out.exit("cmd", &stderr, 0); code != 1 || !strings.Contains(stderr.String(), "cmd: writing the output") {
		t.Errorf("exit after a short write: %d, stderr %q", code, stderr.String())
	}
}

// failOnceWriter fails its first write (a transient EAGAIN, say) and
// takes the rest.
type failOnceWriter struct {
	failed bool
	got    bytes.Buffer
}

func (w *failOnceWriter) Write(p []byte) (int, error) {
	if !w.failed {
		w.failed = true
		return 0, errors.New("resource temporarily unavailable")
	}
	return w.got.Write(p)
}

// TestOutWriterWritesNothingAfterAFailedWrite: once a write failed, the
// later ones fail too and write nothing, so the output is a prefix of
// what the command meant to print, never one with a hole in it. Would
// break if outWriter went on writing after the first failure.
func TestOutWriterWritesNothingAfterAFailedWrite(t *testing.T) {
	w := &failOnceWriter{}
	out := &outWriter{w: w}
	_, _ = fmt.Fprintln(out, "first")
	if _, err := fmt.Fprintln(out, "second"); err == nil || w.got.Len() != 0 {
		t.Errorf("write after a failed one: err %v, destination got %q; want the first error and nothing written", err, w.got.String())
	}
}
