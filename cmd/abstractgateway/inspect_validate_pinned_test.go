package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// zzAnswerFlow answers the user: an effect that sorts before those of
// greet, in a flow that comes after it.
const zzAnswerFlow = `{"id":"zz","nodes":[
 {"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"say","type":"answer_user","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"message","type":"string"}],"outputs":[{"id":"exec-out","type":"execution"}],"pinDefaults":{"message":"hi"}}}],
 "edges":[{"source":"s","sourceHandle":"exec-out","target":"say","targetHandle":"exec-in"}]}`

// TestInspectDescribesEntrypointsAndEffects: inspect shows an
// entrypoint's name and interfaces from the manifest, the effects the
// bundle needs sorted and without repeats, and writes a -Infinity pin
// default as Python's json.dumps does.
func TestInspectDescribesEntrypointsAndEffects(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "greet@1.flow")
	greet := strings.Replace(askFlow, `"pinDefaults":{"name":"world"}`, `"pinDefaults":{"name":"world","low":-Infinity}`, 1)
	greet = strings.Replace(greet, `{"id":"name","type":"string"}],"pinDefaults"`, `{"id":"name","type":"string"},{"id":"low","type":"number"}],"pinDefaults"`, 1)
	writeZip(t, p, map[string]string{
		"manifest.json": `{"bundle_format_version":"1","bundle_id":"greet","bundle_version":"1",
			"entrypoints":[{"flow_id":"greet","name":"Greeter","interfaces":["abstractcode.agent.v1"]}],
			"flows":{"greet":"flows/greet.json","shout":"flows/shout.json","zz":"flows/zz.json"}}`,
		"flows/greet.json": greet,
		"flows/shout.json": shoutFlow,
		"flows/zz.json":    zzAnswerFlow,
	})
	code, out, errOut := call(t, "inspect", p)
	if code != 0 {
		t.Fatalf("inspect: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, `"default": -Infinity`) {
		t.Errorf("the -Infinity pin default is not written as Python's literal:\n%s", out)
	}
	var info struct {
		Effects []string         `json:"effects"`
		Flows   []map[string]any `json:"flows"`
	}
	// -Infinity is not JSON: decode a copy without it.
	if err := json.Unmarshal([]byte(strings.ReplaceAll(out, "-Infinity", "null")), &info); err != nil {
		t.Fatalf("inspect output: %v\n%s", err, out)
	}
	if len(info.Effects) < 2 || !slices.IsSorted(info.Effects) || len(slices.Compact(slices.Clone(info.Effects))) != len(info.Effects) ||
		!slices.Contains(info.Effects, "ask_user") || !slices.Contains(info.Effects, "answer_user") {
		t.Errorf("effects = %q, want them sorted, without repeats, ask_user and answer_user among them", info.Effects)
	}
	found := false
	for _, f := range info.Flows {
		switch f["flow_id"] {
		case "greet":
			found = true
			ifs, _ := f["interfaces"].([]any)
			if f["entrypoint"] != true || f["name"] != "Greeter" || len(ifs) != 1 || ifs[0] != "abstractcode.agent.v1" {
				t.Errorf("entrypoint greet described as %v", f)
			}
		case "shout":
			if f["entrypoint"] != false || f["name"] == "Greeter" || f["interfaces"] != nil {
				t.Errorf("flow shout (no entrypoint) described as %v", f)
			}
		}
	}
	if !found {
		t.Errorf("flow greet missing from %s", out)
	}
}

// TestInspectCountsListenerWorkflows: "workflows" counts the compiled
// workflows, each flow's plus one per event listener, not the flows.
func TestInspectCountsListenerWorkflows(t *testing.T) {
	t.Parallel()
	path := packFlows(t, t.TempDir(), "evmain.json", map[string]string{"evmain.json": eventsFlow})
	code, out, errOut := call(t, "inspect", path)
	var info map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &info) != nil {
		t.Fatalf("inspect: exit %d\n%s%s", code, out, errOut)
	}
	if n, _ := info["workflows"].(float64); n != 2 || len(info["flows"].([]any)) != 1 {
		t.Fatalf("workflows = %v, flows = %v; want 2 workflows (the flow and its listener) for 1 flow", info["workflows"], info["flows"])
	}
}

// TestValidateAnUnpackedBundleDirectory: a directory holding a
// manifest.json is itself an (unpacked) bundle and is validated as one,
// not searched for *.flow files.
func TestValidateAnUnpackedBundleDirectory(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "greet")
	for name, body := range map[string]string{
		"manifest.json": `{"bundle_format_version":"1","bundle_id":"greet","bundle_version":"1",
			"entrypoints":[{"flow_id":"greet"}],"flows":{"greet":"flows/greet.json","shout":"flows/shout.json"}}`,
		"flows/greet.json": askFlow,
		"flows/shout.json": shoutFlow,
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := call(t, "validate", dir)
	if code != 0 || !strings.HasPrefix(out, "ok ") {
		t.Fatalf("validate of an unpacked bundle dir: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
