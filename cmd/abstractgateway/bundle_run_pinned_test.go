package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// writeTwoEntrypoints writes a bundle with the entrypoints shout and
// shout2 and the given extra manifest fields, and returns its path.
func writeTwoEntrypoints(t *testing.T, extra string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "two@1.flow")
	writeZip(t, p, map[string]string{
		"manifest.json": `{"bundle_format_version":"1","bundle_id":"two","bundle_version":"1",` + extra + `
			"entrypoints":[{"flow_id":"shout"},{"flow_id":"shout2"}],
			"flows":{"shout":"flows/shout.json","shout2":"flows/shout2.json"}}`,
		"flows/shout.json":  shoutFlow,
		"flows/shout2.json": strings.Replace(shoutFlow, `"id":"shout"`, `"id":"shout2"`, 1),
	})
	return p
}

// TestBundleRunUsesTheDefaultEntrypoint: with several entrypoints and
// no flow named, bundle run runs the manifest's default_entrypoint (not
// the first entrypoint, not a refusal).
func TestBundleRunUsesTheDefaultEntrypoint(t *testing.T) {
	t.Parallel()
	p := writeTwoEntrypoints(t, `"default_entrypoint":"shout2",`)
	code, out, errOut := cliRun(t, strings.NewReader(""), p, "--input", `{"text":"hi"}`)
	if code != 0 || cliResult(t, out)["workflow_id"] != "two@1:shout2" {
		t.Fatalf("default_entrypoint shout2: exit %d\n%s%s", code, out, errOut)
	}
}

// TestBundleRunBadInputIsAUsageError: an --input that is not a JSON
// object is a usage error (exit 2) naming --input, and runs nothing.
func TestBundleRunBadInputIsAUsageError(t *testing.T) {
	t.Parallel()
	path := packGreet(t, t.TempDir())
	for _, in := range []string{`{"name":`, `[1,2]`} {
		code, out, errOut := cliRun(t, strings.NewReader(""), path, "--input", in, "--answer", "ok")
		if code != 2 || out != "" || !strings.Contains(errOut, "--input") {
			t.Errorf("--input %s: exit %d, stdout %q, stderr %q; want exit 2 naming --input", in, code, out, errOut)
		}
	}
}

// TestBundleRunRefusesABlankRunID: a --run-id of only blanks is a
// usage error (exit 2), as an empty one is: no run is created under it.
func TestBundleRunRefusesABlankRunID(t *testing.T) {
	t.Parallel()
	path := packGreet(t, t.TempDir())
	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", t.TempDir(), "--run-id", "  ", "--answer", "ok")
	if code != 2 || out != "" || !strings.Contains(errOut, "--run-id") {
		t.Fatalf("--run-id \"  \": exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestBundleRunJSONShowsTheWait: the run JSON of a run left waiting
// (exit 3) carries its wait state: reason, wait key and the prompt.
func TestBundleRunJSONShowsTheWait(t *testing.T) {
	t.Parallel()
	path := packGreet(t, t.TempDir())
	code, out, errOut := cliRun(t, strings.NewReader(""), path)
	if code != exitWaiting {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitWaiting, out, errOut)
	}
	w, _ := cliResult(t, out)["waiting"].(map[string]any)
	if w["reason"] != "user" || w["prompt"] != "Mood?" || w["wait_key"] == nil || w["wait_key"] == "" {
		t.Fatalf("waiting = %v, want reason user, prompt \"Mood?\" and a wait key\n%s", w, out)
	}
}

// TestBundleRunContinueCommandKeepsTheFlow: the continue command
// printed for a run of a flow named with --flow names that flow again,
// so it continues the same entrypoint.
func TestBundleRunContinueCommandKeepsTheFlow(t *testing.T) {
	t.Parallel()
	p := writeTwoEntrypoints(t, "")
	data := t.TempDir()
	code, out, errOut := cliRun(t, strings.NewReader(""), p, "--flow", "shout2", "--data-dir", data, "--input", `{"text":"hi"}`)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	id, _ := cliResult(t, out)["run_id"].(string)
	want := shellCommand("abstractgateway", "bundle", "run", p, "--flow", "shout2", "--data-dir", data,
		"--input", `{"text":"hi"}`, "--run-id", id)
	if !strings.Contains(errOut, want) {
		t.Fatalf("continue command missing, want %q in:\n%s", want, errOut)
	}
}

// TestBundleRunTemporaryDataDirPrintsNoContinueCommand: a run in a
// temporary data dir (no --data-dir) cannot be continued, so no continue
// command is printed for it.
func TestBundleRunTemporaryDataDirPrintsNoContinueCommand(t *testing.T) {
	t.Parallel()
	path := packGreet(t, t.TempDir())
	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--answer", "ok")
	if code != 0 || strings.Contains(errOut, "--run-id") || strings.Contains(errOut, "continue it with") {
		t.Fatalf("exit %d; a run in a temporary data dir was given a continue command:\n%s%s", code, out, errOut)
	}
}

// TestBundleRunNamesTheMissingFile: the error for a bundle file that
// does not exist names the file as given, even one starting with a colon.
func TestBundleRunNamesTheMissingFile(t *testing.T) {
	t.Parallel()
	code, _, errOut := cliRun(t, strings.NewReader(""), ":nope.flow")
	if code != 1 || !strings.Contains(errOut, ":nope.flow") {
		t.Fatalf("bundle run :nope.flow: exit %d, stderr %q; want exit 1 naming \":nope.flow\"", code, errOut)
	}
}
