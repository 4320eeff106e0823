package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/abstractframework/abstractgateway/visualflow"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// bundlePack builds a bundle from a root flow file and its flows folder,
// compiles it to check it, and writes it.
func bundlePack(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bundle pack", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "output .flow file (default <bundle_id>@<version>.flow)")
	flowsDir := fs.String("flows", "", "folder holding referenced subflows as <id>.json (default: the root file's folder)")
	id := fs.String("id", "", "bundle id (default: the root flow id)")
	ver := fs.String("version", "", "bundle version (default 0.0.0)")
	var entries stringList
	fs.Var(&entries, "entrypoint", "entrypoint flow id (repeatable; default: the root flow)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: abstractgateway bundle pack [-o out.flow] [-flows DIR] [-id ID] [-version V] root-flow.json")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
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
	path := *out
	if path == "" {
		path = b.Ref() + ".flow"
	}
	if err := bundle.WriteFile(path, b); err != nil {
		fmt.Fprintf(stderr, "bundle pack: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "packed %s (%d flows) -> %s\n", b.Ref(), len(b.Manifest.Flows), path)
	return 0
}
