package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const askFlow = `{"id":"greet","name":"greet","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"},{"id":"name","type":"string"}],"pinDefaults":{"name":"world"}}},
 {"id":"ask","type":"ask_user","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"prompt","type":"string"}],"outputs":[{"id":"exec-out","type":"execution"},{"id":"response","type":"string"}],"pinDefaults":{"prompt":"Mood?"}}},
 {"id":"sub","type":"subflow","data":{"subflowId":"shout","inputs":[{"id":"exec-in","type":"execution"},{"id":"text","type":"string"}],"outputs":[{"id":"exec-out","type":"execution"},{"id":"loud","type":"string"}]}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"mood","type":"string"},{"id":"loud","type":"string"}]}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"ask","targetHandle":"exec-in"},
 {"source":"ask","sourceHandle":"exec-out","target":"sub","targetHandle":"exec-in"},
 {"source":"start","sourceHandle":"name","target":"sub","targetHandle":"text"},
 {"source":"sub","sourceHandle":"exec-out","target":"end","targetHandle":"exec-in"},
 {"source":"ask","sourceHandle":"response","target":"end","targetHandle":"mood"},
 {"source":"sub","sourceHandle":"loud","target":"end","targetHandle":"loud"}]}`

const shoutFlow = `{"id":"shout","nodes":[
 {"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"},{"id":"text","type":"string"}]}},
 {"id":"up","type":"uppercase","data":{"inputs":[{"id":"text","type":"string"}],"outputs":[{"id":"result","type":"string"}]}},
 {"id":"e","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"loud","type":"string"}]}}],
 "edges":[{"source":"s","sourceHandle":"exec-out","target":"e","targetHandle":"exec-in"},
 {"source":"s","sourceHandle":"text","target":"up","targetHandle":"text"},
 {"source":"up","sourceHandle":"result","target":"e","targetHandle":"loud"}]}`

// call runs the bundle command in-process.
func call(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runBundleIO(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// packGreet packs the test flows into dir and returns the bundle path.
func packGreet(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "greet@1.0.0.flow")
	code, stdout, stderr := call(t, "pack", "-o", out, "-version", "1.0.0", writeGreetSources(t, dir))
	if code != 0 {
		t.Fatalf("pack: code %d: %s%s", code, stdout, stderr)
	}
	return out
}

// writeGreetSources writes the test flows (greet.json, which calls
// shout.json) into dir/src and returns the root flow's path.
func writeGreetSources(t *testing.T, dir string) string {
	t.Helper()
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"greet.json": askFlow, "shout.json": shoutFlow} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(src, "greet.json")
}

// writeZip writes a zip with the given files.
func writeZip(t *testing.T, path string, files map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBundle_PackInspectRun(t *testing.T) {
	t.Parallel()
	path := packGreet(t, t.TempDir())

	code, out, stderr := call(t, "inspect", path)
	if code != 0 {
		t.Fatalf("inspect: %d %s", code, stderr)
	}
	var info map[string]any
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("inspect output is not JSON: %v\n%s", err, out)
	}
	if info["bundle"] != "greet@1.0.0" || len(info["flows"].([]any)) != 2 {
		t.Fatalf("inspect = %s", out)
	}

	code, out, stderr = call(t, "run", "-answer", "happy", path)
	if code != 0 {
		t.Fatalf("run: %d %s %s", code, out, stderr)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"mood": "happy", "loud": "WORLD", "success": true}
	got, _ := json.Marshal(res["output"])
	w, _ := json.Marshal(want)
	if res["status"] != "completed" || string(got) != string(w) {
		t.Fatalf("run result = %s", out)
	}

	// Without an answer (and stdin not a terminal) the run stops at the
	// question with exit code 3.
	code, out, _ = call(t, "run", path)
	if code != exitWaiting || !strings.Contains(out, `"status": "waiting"`) {
		t.Fatalf("run without answer: %d %s", code, out)
	}

	// Flags may follow the file, the flow may be named FILE:flow, the
	// ledger is printed as it is written, and --data-dir keeps the store.
	data := t.TempDir()
	code, out, stderr = call(t, "run", path+":greet", "--answer", "sad", "--data-dir", data)
	if code != 0 || !strings.Contains(out, `"mood": "sad"`) {
		t.Fatalf("run FILE:flow with trailing flags: %d %s %s", code, out, stderr)
	}
	if !strings.Contains(stderr, "ask_user") || !strings.Contains(stderr, "waiting") || !strings.Contains(stderr, "emit_event") {
		t.Fatalf("ledger records not printed:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(data, "runtime.sqlite3")); err != nil {
		t.Fatalf("--data-dir store not kept: %v", err)
	}
	if code, _, stderr = call(t, "run", path+":nope"); code != 1 || !strings.Contains(stderr, `"nope" is not an entrypoint`) {
		t.Fatalf("unknown flow: %d %s", code, stderr)
	}
}

func TestBundle_ValidateDirectoryKeepsGoing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	packGreet(t, dir)
	_ = os.RemoveAll(filepath.Join(dir, "src"))
	if err := os.WriteFile(filepath.Join(dir, "garbage.flow"), []byte("not a zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeZip(t, filepath.Join(dir, "nomanifestid.flow"), map[string]string{
		"manifest.json": `{"bundle_format_version":"1","entrypoints":[{"flow_id":"x"}],"flows":{"x":"flows/x.json"}}`,
		"flows/x.json":  shoutFlow,
	})
	writeZip(t, filepath.Join(dir, "badnode@1.flow"), map[string]string{
		"manifest.json":    `{"bundle_format_version":"1","bundle_id":"badnode","bundle_version":"1","entrypoints":[{"flow_id":"shout"}],"flows":{"shout":"flows/shout.json"}}`,
		"flows/shout.json": strings.Replace(shoutFlow, `"type":"uppercase"`, `"type":"make_it_loud"`, 1),
	})
	writeZip(t, filepath.Join(dir, "badpin@1.flow"), map[string]string{
		"manifest.json":    `{"bundle_format_version":"1","bundle_id":"badpin","bundle_version":"1","entrypoints":[{"flow_id":"shout"}],"flows":{"shout":"flows/shout.json"}}`,
		"flows/shout.json": strings.Replace(shoutFlow, `"targetHandle":"loud"`, `"targetHandle":"quiet"`, 1),
	})
	// Every problem of a bundle is reported, one line each.
	writeZip(t, filepath.Join(dir, "badboth@1.flow"), map[string]string{
		"manifest.json": `{"bundle_format_version":"1","bundle_id":"badboth","bundle_version":"1","entrypoints":[{"flow_id":"shout"}],"flows":{"shout":"flows/shout.json"}}`,
		"flows/shout.json": strings.Replace(strings.Replace(shoutFlow, `"type":"uppercase"`, `"type":"make_it_loud"`, 1),
			`"targetHandle":"loud"`, `"targetHandle":"quiet"`, 1),
	})
	code, out, _ := call(t, "validate", dir)
	if code != 1 {
		t.Fatalf("validate code = %d, want 1\n%s", code, out)
	}
	for _, want := range []string{
		"ok   greet@1.0.0.flow",
		"FAIL garbage.flow",
		"FAIL nomanifestid.flow",
		`FAIL badnode@1.flow: bundle badnode@1: flow shout: node up: unknown node type "make_it_loud"`,
		"FAIL badpin@1.flow: bundle badpin@1: flow shout: node e: pin quiet:",
		`FAIL badboth@1.flow: bundle badboth@1: flow shout: node up: unknown node type "make_it_loud"`,
		"FAIL badboth@1.flow: bundle badboth@1: flow shout: node e: pin quiet:",
		"5 of 6 bundle(s) failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("validate output lacks %q:\n%s", want, out)
		}
	}
}

func TestBundle_Usage(t *testing.T) {
	t.Parallel()
	if code, _, _ := call(t); code != 2 {
		t.Fatalf("no args: code %d", code)
	}
	if code, _, errOut := call(t, "frobnicate"); code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Fatalf("unknown: %d %s", code, errOut)
	}
	if code, _, _ := call(t, "run"); code != 2 {
		t.Fatalf("run without path: code %d", code)
	}
}

// A bundle with several entrypoints and no default_entrypoint, run without
// naming a flow (no FILE:flow, no --flow).
//
// Reference: lpalbou/AbstractGateway src/abstractgateway/hosts/bundle_host.py,
// start_run (spec gateway-api §3.2 "Flow selection rules"): with no flow_id
// the host takes the bundle's only entrypoint, else
// manifest.default_entrypoint, else refuses with ValueError "Bundle
// '<id>@<ver>' has N entrypoints; specify flow_id to select which
// entrypoint to start (or set manifest.default_entrypoint)". Nothing runs.
//
// bundle run used to fall back to the manifest's first entrypoint: which
// flow ran depended on the order of the list, and a user who forgot the
// flow got some other workflow's run instead of a usage error (exit 2)
// naming the entrypoints to choose from.
func TestBundleRunRefusesToChooseAmongSeveralEntrypoints(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "two@1.flow")
	second := strings.Replace(shoutFlow, `"id":"shout"`, `"id":"shout2"`, 1)
	writeZip(t, p, map[string]string{
		"manifest.json": `{"bundle_format_version":"1","bundle_id":"two","bundle_version":"1",
			"entrypoints":[{"flow_id":"shout"},{"flow_id":"shout2"}],
			"flows":{"shout":"flows/shout.json","shout2":"flows/shout2.json"}}`,
		"flows/shout.json":  shoutFlow,
		"flows/shout2.json": second,
	})
	code, out, errOut := cliRun(t, strings.NewReader(""), p, "--input", `{"text":"hi"}`)
	if code != 2 || strings.TrimSpace(out) != "" {
		t.Fatalf("bundle with 2 entrypoints and no default_entrypoint, no flow named: exit %d, ran a flow anyway:\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"shout", "shout2"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the refusal does not name entrypoint %q to choose from:\n%s", want, errOut)
		}
	}
	// Naming the flow, either way, runs it.
	for _, args := range [][]string{{p + ":shout2"}, {p, "--flow", "shout2"}} {
		code, out, errOut = cliRun(t, strings.NewReader(""), append(args, "--input", `{"text":"hi"}`)...)
		if code != 0 || !strings.Contains(out, `"two@1:shout2"`) {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
}

// cliRun runs "bundle run" in-process with the given stdin.
func cliRun(t *testing.T, stdin io.Reader, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := bundleRunWith(context.Background(), args, stdin, &out, &errb)
	return code, out.String(), errb.String()
}

// cliResult decodes the run JSON bundle run prints on stdout.
func cliResult(t *testing.T, stdout string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatalf("bundle run stdout is not JSON: %v\n%s", err, stdout)
	}
	return m
}
