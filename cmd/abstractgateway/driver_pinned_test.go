package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestTerminalAnswerDropsCRLF: an answer typed at the terminal is taken
// without its line ending, "\r\n" as well as "\n", and keeps inner blanks.
func TestTerminalAnswerDropsCRLF(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	d := &bundleDriver{in: bufio.NewReader(strings.NewReader("very happy\r\n")), interactive: true, out: &out}
	text, ok := d.answer(context.Background(), &durable.WaitState{Reason: durable.WaitUser, WaitKey: "k", Prompt: "Mood?"}, "")
	if !ok || text != "very happy" {
		t.Fatalf("answer = %q, %v; want \"very happy\", true", text, ok)
	}
}

// TestPromptShowsChoicesAndAsker: a question is printed with its choices
// and, when a run other than the root asks it, with that run's id.
func TestPromptShowsChoicesAndAsker(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	d := &bundleDriver{answers: []string{"yes"}, out: &out}
	w := &durable.WaitState{Reason: durable.WaitUser, WaitKey: "k", Prompt: "Ship?", Choices: []string{"yes", "no"}}
	if text, ok := d.answer(context.Background(), w, "child-1"); !ok || text != "yes" {
		t.Fatalf("answer = %q, %v; want the scripted \"yes\"", text, ok)
	}
	if want := "? [child-1] Ship? [yes no]\n> yes\n"; out.String() != want {
		t.Fatalf("printed %q, want %q", out.String(), want)
	}
}

// TestBundleRunFileNameWithAColon: a bundle file whose own name holds a
// colon is run as that file, not split into FILE:flow.
func TestBundleRunFileNameWithAColon(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data, err := os.ReadFile(packGreet(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "greet:v1.flow")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cliRun(t, strings.NewReader(""), p, "--answer", "ok")
	if code != 0 || cliResult(t, out)["status"] != "completed" {
		t.Fatalf("bundle run %s: exit %d\n%s%s", p, code, out, errOut)
	}
}

// TestRunLabel: a ledger line names a run by the first 8 characters of
// its id, and a listener run (whose id extends the root's) by the root's
// 8 characters plus what follows the root's id.
func TestRunLabel(t *testing.T) {
	t.Parallel()
	d := &bundleDriver{runID: "0123456789abcdef"}
	for id, want := range map[string]string{
		"0123456789abcdef":          "01234567",
		"0123456789abcdef:listen:1": "01234567:listen:1",
		"fedcba9876543210":          "fedcba98",
		"short":                     "short",
	} {
		if got := d.runLabel(id); got != want {
			t.Errorf("runLabel(%q) = %q, want %q", id, got, want)
		}
	}
}

// TestRunIDOfAnotherEntrypointIsRefused: --run-id naming a run of
// another entrypoint of the bundle is refused (exit 1, naming --run-id),
// not continued as if it were a run of the flow asked for.
func TestRunIDOfAnotherEntrypointIsRefused(t *testing.T) {
	t.Parallel()
	p := writeTwoEntrypoints(t, "")
	data := t.TempDir()
	code, out, errOut := cliRun(t, strings.NewReader(""), p, "--flow", "shout", "--data-dir", data, "--input", `{"text":"hi"}`)
	if code != 0 {
		t.Fatalf("setup: exit %d\n%s%s", code, out, errOut)
	}
	id, _ := cliResult(t, out)["run_id"].(string)
	code, out, errOut = cliRun(t, strings.NewReader(""), p, "--flow", "shout2", "--data-dir", data, "--input", `{"text":"hi"}`, "--run-id", id)
	if code != 1 || !strings.Contains(errOut, "--run-id") || strings.Contains(out, "completed") {
		t.Fatalf("--flow shout2 --run-id <a shout run>: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestTerminalAnswerAtEOF: text typed at the terminal and ended with
// EOF (Ctrl-D) rather than Enter is still the answer; EOF alone is none.
func TestTerminalAnswerAtEOF(t *testing.T) {
	t.Parallel()
	w := &durable.WaitState{Reason: durable.WaitUser, WaitKey: "k", Prompt: "Mood?"}
	for in, want := range map[string]bool{"happy": true, "": false} {
		var out bytes.Buffer
		d := &bundleDriver{in: bufio.NewReader(strings.NewReader(in)), interactive: true, out: &out}
		text, ok := d.answer(context.Background(), w, "")
		if ok != want || text != in {
			t.Errorf("stdin %q: answer = %q, %v; want %q, %v", in, text, ok, in, want)
		}
	}
}
