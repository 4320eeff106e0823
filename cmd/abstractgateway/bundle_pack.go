package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/abstractframework/abstractgateway/visualflow"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

const bundlePackUsage = `usage: abstractgateway bundle pack [-o out.flow] [-flows DIR] [-id ID] [-version V] [-entrypoint FLOW]... root-flow.json

Builds a .flow bundle from a root VisualFlow JSON file and the subflows it
references, compiles it to check it, and writes it (creating the output
file's directory when missing). A bundle id may hold
only A-Z a-z 0-9 _ - and a version only those and '.', as a registry
requires (spec visualflow §7.2).

flags:
`

// Registry rules for bundle ids and versions (spec visualflow §7.2). The
// default output file is named after them, so they are checked before a
// file name is built: an id such as "../x" or "a/b" would become a path.
var (
	bundleIDRule      = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	bundleVersionRule = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	unsafeIDChars     = regexp.MustCompile(`[^A-Za-z0-9_-]+`)
	repeatedDashes    = regexp.MustCompile(`-{2,}`)
)

// suggestBundleID is the sanitised id a registry suggests for a refused
// one (§7.2: other runs become '-', repeated '-' collapse, trimmed).
func suggestBundleID(id string) string {
	s := repeatedDashes.ReplaceAllString(unsafeIDChars.ReplaceAllString(id, "-"), "-")
	return strings.Trim(s, "-")
}

// checkBundleID refuses an id a registry would refuse; what names where
// the id comes from (a flag, the root flow).
func checkBundleID(what, id string) error {
	if bundleIDRule.MatchString(id) {
		return nil
	}
	err := fmt.Errorf("%s %q: a bundle id may hold only A-Z a-z 0-9 _ -", what, id)
	if s := suggestBundleID(id); s != "" {
		err = fmt.Errorf("%w (try %q)", err, s)
	}
	return err
}

// bundlePack builds a bundle from a root flow file and its flows folder,
// compiles it to check it, and writes it.
func bundlePack(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	out := &outWriter{w: stdout}
	return out.exit("bundle pack", stderr, bundlePackMain(args, out, stderr))
}

func bundlePackMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bundle pack", flag.ContinueOnError)
	fs.SetOutput(stderr)
	outPath := fs.String("o", "", "output .flow file (default <bundle_id>@<version>.flow)")
	flowsDir := fs.String("flows", "", "folder holding referenced subflows as <id>.json (default: the root file's folder)")
	id := fs.String("id", "", "bundle id, [A-Za-z0-9_-]+ (default: the root flow id)")
	ver := fs.String("version", "", "bundle version, [A-Za-z0-9_.-]+ (default 0.0.0)")
	var entries stringList
	fs.Var(&entries, "entrypoint", "entrypoint flow id (repeatable; default: the root flow)")
	fs.Usage = func() { fmt.Fprint(fs.Output(), bundlePackUsage); fs.PrintDefaults() }
	if code, ok := parseFlags(fs, args, stdout); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return wrongArgs(fs, "one flow file")
	}
	if *id != "" {
		if err := checkBundleID("-id", *id); err != nil {
			fmt.Fprintf(stderr, "bundle pack: %v\n", err)
			return 2
		}
	}
	if *ver != "" && !bundleVersionRule.MatchString(*ver) {
		fmt.Fprintf(stderr, "bundle pack: -version %q: a bundle version may hold only A-Z a-z 0-9 _ . -\n", *ver)
		return 2
	}
	root := fs.Arg(0)
	dir := *flowsDir
	if dir == "" {
		dir = filepath.Dir(root)
	}
	b, err := bundle.Pack(root, dir, bundle.PackOptions{BundleID: *id, BundleVersion: *ver, Entrypoints: entries})
	if err != nil {
		fmt.Fprintf(stderr, "bundle pack: %v\n", err)
		return 1
	}
	if _, err := visualflow.CompileBundle(b, visualflow.BundleOptions{}); err != nil {
		fmt.Fprintf(stderr, "bundle pack: %v\n", err)
		return 1
	}
	path := *outPath
	if path == "" {
		// Without -id the id is the root flow's, which no rule checked.
		if err := checkBundleID("the root flow's id", b.Manifest.BundleID); err != nil {
			fmt.Fprintf(stderr, "bundle pack: %v; give -id (or -o)\n", err)
			return 1
		}
		path = b.Ref() + ".flow"
	}
	if err := checkNotAnInput(path, packInputs(root, dir, b)); err != nil {
		fmt.Fprintf(stderr, "bundle pack: %v\n", err)
		return 1
	}
	// -o dist/x.flow creates dist/ as Python's packer does
	// (out.parent.mkdir(parents=True, exist_ok=True)).
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		fmt.Fprintf(stderr, "bundle pack: creating the output directory: %v\n", err)
		return 1
	}
	if err := bundle.WriteFile(path, b); err != nil {
		fmt.Fprintf(stderr, "bundle pack: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "packed %s (%d flows) -> %s\n", b.Ref(), len(b.Manifest.Flows), path)
	return 0
}

// packInputs lists the flow files bundle.Pack read for b: the root file
// and, for every other flow, <dir>/<id>.json.
func packInputs(root, dir string, b *bundle.Bundle) []string {
	rootID := ""
	if data, err := os.ReadFile(root); err == nil {
		if flow, err := bundle.DecodeFlow(data); err == nil {
			rootID = bundle.FlowID(flow)
		}
	}
	inputs := []string{root}
	for id := range b.Flows {
		if id != rootID {
			inputs = append(inputs, filepath.Join(dir, id+".json"))
		}
	}
	return inputs
}

// checkNotAnInput refuses an output path that is one of the input flow
// files (compared with os.SameFile, so another spelling or a link to it
// counts): writing the bundle there would destroy the flow it was built
// from.
func checkNotAnInput(out string, inputs []string) error {
	outInfo, err := os.Stat(out)
	if err != nil {
		return nil // no such file yet: nothing to overwrite
	}
	for _, in := range inputs {
		if info, err := os.Stat(in); err == nil && os.SameFile(outInfo, info) {
			return fmt.Errorf("output %s is the flow file %s being packed: give another -o", out, in)
		}
	}
	return nil
}
