package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"

	"github.com/abstractframework/abstractgateway/visualflow"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// bundleInspect prints a description of a bundle as JSON.
func bundleInspect(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bundle inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: abstractgateway bundle inspect path.flow

Prints a description of a bundle as JSON: its manifest, its flows (node
types, effects, inputs, entrypoints) and the effects it needs.
`)
	}
	if code, ok := parseFlags(fs, args, stdout); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return wrongArgs(fs, "one bundle file")
	}
	b, err := bundle.Read(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "bundle inspect: %v\n", err)
		return 1
	}
	cb, err := visualflow.CompileBundle(b, visualflow.BundleOptions{})
	if err != nil {
		fmt.Fprintf(stderr, "bundle inspect: %v\n", err)
		return 1
	}
	type flowOut struct {
		*visualflow.FlowInfo
		Entrypoint  bool           `json:"entrypoint"`
		Name        string         `json:"name,omitempty"`
		Interfaces  []string       `json:"interfaces,omitempty"`
		InputSchema map[string]any `json:"input_schema"`
	}
	m := b.Manifest
	var flows []flowOut
	for _, fi := range cb.Flows {
		fo := flowOut{FlowInfo: fi, InputSchema: bundle.InputSchema(b.Flows[fi.FlowID])}
		if ep, ok := m.Entrypoint(fi.FlowID); ok {
			fo.Entrypoint = true
			fo.Name = ep.Name
			fo.Interfaces = ep.Interfaces
		}
		flows = append(flows, fo)
	}
	needs := []string{}
	for _, fi := range cb.Flows {
		for _, e := range fi.Effects {
			if !slices.Contains(needs, e) {
				needs = append(needs, e)
			}
		}
	}
	slices.Sort(needs)
	out := map[string]any{
		"bundle": b.Ref(), "bundle_id": m.BundleID, "bundle_version": m.BundleVersion, "created_at": m.CreatedAt,
		"default_entrypoint": m.DefaultEntrypoint, "flows": flows, "effects": needs, "workflows": len(cb.Workflows),
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(stderr, "bundle inspect: writing the description of %s: %v\n", b.Ref(), err)
		return 1
	}
	return 0
}
