package visualflow

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// subflowOutputs runs a subflow node declaring the extra output pins
// extra (each wired to the end node) whose child returns output, and
// returns the run's output.
func subflowOutputs(t *testing.T, extra []string, output any) map[string]any {
	t.Helper()
	outs := []string{"exec-out:exec", "output:any"}
	edges := []string{"start.exec-out>sub.exec-in", "sub.exec-out>end.exec-in", "sub.output>end.out"}
	for _, p := range extra {
		outs = append(outs, p+":any")
		edges = append(edges, "sub."+p+">end."+p)
	}
	sub := rsNode("sub", "subflow", []string{"exec-in:exec"}, outs, map[string]any{"subflowId": "child"})
	flow := rsFlow("subout", "start", []map[string]any{rvStart(), sub, rvEnd("end", append([]string{"out"}, extra...), nil)}, edges...)
	sc := &scripted{results: []any{map[string]any{"sub_run_id": "c1", "output": output}}}
	_, st := startRunHandled(t, flow, CompileOptions{}, map[durable.EffectType]runtime.Handler{durable.EffectStartSubworkflow: sc.handler()}, map[string]any{})
	if st.Status != durable.RunCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Error)
	}
	return st.Output
}

// §5.5: a non-object child output fills an extra output pin only when it
// is the single one; with two, neither gets it (they stay null).
func TestSubflowScalarOutputLeavesSeveralExtraPinsUnset(t *testing.T) {
	t.Parallel()
	out := subflowOutputs(t, []string{"answer", "note"}, "hello")
	if out["answer"] != nil || out["note"] != nil {
		t.Fatalf("output %s, want answer and note null (two extra pins)", jsonText(t, out))
	}
}

// §5.5: a child output object containing "result" maps that member to
// the output pin even when it is null (containment, not truthiness).
func TestSubflowNullResultIsTheOutput(t *testing.T) {
	t.Parallel()
	out := subflowOutputs(t, nil, map[string]any{"result": nil, "x": int64(1)})
	if out["out"] != nil {
		t.Fatalf("output %s, want out null (the child's result member)", jsonText(t, out))
	}
}

// runtime-model §7.4: workspace_or_allowed refuses an absolute path that
// is neither under the root nor in an allowed folder (only
// all_except_ignored reads such a path).
func TestWorkspaceOrAllowedRefusesPathOutsideRoots(t *testing.T) {
	root, allowed, elsewhere := filepath.Join(t.TempDir(), "ws"), t.TempDir(), t.TempDir()
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(elsewhere, "f.txt")
	if err := os.WriteFile(abs, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := map[string]any{"workspace_root": root, "workspace_access_mode": "workspace_or_allowed",
		"workspace_allowed_paths": []any{allowed}, "file_path": abs}
	out := runArtifactFlow(t, rvFlow("read_file", []string{"file_path"}, []string{"content", "file_path"}), nil, vars).Output
	if !policyRejected(t, out) {
		t.Fatalf("output %s, want a rejection of %s", jsonText(t, out), abs)
	}
}

// A path in nested allowed folders is reported in the innermost one's
// mount (the longest match), whatever order the mounts are visited in.
func TestWorkspaceNestedAllowedFoldersUseInnermostMount(t *testing.T) {
	root, outer := filepath.Join(t.TempDir(), "ws"), filepath.Join(t.TempDir(), "outer")
	inner := filepath.Join(outer, "inner")
	for _, d := range []string{root, inner} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sc, err := workspaceScopeFrom(map[string]any{"workspace_root": root, "workspace_access_mode": "workspace_or_allowed",
		"workspace_allowed_paths": []any{outer, inner}})
	if err != nil {
		t.Fatal(err)
	}
	for range 32 { // map order varies between visits
		_, virt, err := sc.resolve(filepath.Join(inner, "f.txt"))
		if err != nil || virt != "inner/f.txt" {
			t.Fatalf("resolve = %q, %v; want inner/f.txt", virt, err)
		}
	}
}

// runtime-model §7.4: all_except_ignored mounts the allowed folders too,
// so "<mount>/x" reaches a file in one and is reported that way.
func TestWorkspaceAllExceptIgnoredMountsAllowedFolders(t *testing.T) {
	root, other := filepath.Join(t.TempDir(), "ws"), filepath.Join(t.TempDir(), "Shared Docs")
	for _, d := range []string{root, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(other, "f.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	vars := map[string]any{"workspace_root": root, "workspace_access_mode": "all_except_ignored",
		"workspace_allowed_paths": []any{other}, "file_path": "shared-docs/f.txt"}
	out := runArtifactFlow(t, rvFlow("read_file", []string{"file_path"}, []string{"content", "file_path"}), nil, vars).Output
	if out["content"] != "hello" || out["file_path"] != "shared-docs/f.txt" {
		t.Fatalf("output %s, want shared-docs/f.txt read through its mount", jsonText(t, out))
	}
}

// §6.10: read_file of a non-.json file whose text starts with "[" is
// parsed too, as one starting with "{" is.
func TestReadFileSniffsJSONArray(t *testing.T) {
	p := filepath.Join(t.TempDir(), "list.txt")
	if err := os.WriteFile(p, []byte(" [1, 2]"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := readFile(map[string]any{"file_path": p})
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := out.(map[string]any)["content"].([]any); !ok || len(got) != 2 || got[0] != int64(1) {
		t.Fatalf("content = %#v, want the parsed list [1, 2]", out.(map[string]any)["content"])
	}
}

// list_folder_files reads include_directories by truthiness, as Python's
// bool(): 1 lists the folders as a boolean true does.
func TestListFolderIncludeDirectoriesIsTruthy(t *testing.T) {
	dir := listTree(t, map[string]string{"sub/": ""})
	got, _ := listRel(t, dir, map[string]any{"folder_path": dir, "include_directories": int64(1)})
	if len(got) != 1 || got[0] != "sub/" {
		t.Fatalf("entries %v, want [sub/]", got)
	}
}

// §5.5: the inheritContext alias is no more a forwarded pin than
// inherit_context: a subflow whose only declared input is it passes all
// of the resolved input as child vars.
func TestSubflowOnlyInheritContextAliasPassesResolvedInput(t *testing.T) {
	p, _ := subflowCall(t, subflowParent(`, {"id": "inheritContext", "type": "boolean"}`, `"inheritContext": false`),
		map[string]any{"prompt": "hi"})
	vars, _ := p["vars"].(map[string]any)
	if vars["prompt"] != "hi" {
		t.Fatalf("child vars = %s, want the resolved input (prompt=hi)", jsonText(t, p["vars"]))
	}
}
