package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
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
	m := b.Manifest
	var flows []any
	for _, fi := range cb.Flows {
		// The flow's summary as its JSON fields, then the input schema,
		// whose pin defaults are written as Python would.
		text, err := json.Marshal(fi)
		if err != nil {
			fmt.Fprintf(stderr, "bundle inspect: describing flow %s: %v\n", fi.FlowID, err)
			return 1
		}
		fo, err := pyjson.DecodeObject(text)
		if err != nil {
			fmt.Fprintf(stderr, "bundle inspect: describing flow %s: %v\n", fi.FlowID, err)
			return 1
		}
		fo["input_schema"] = nonFiniteAsLiterals(bundle.InputSchema(b.Flows[fi.FlowID]))
		fo["entrypoint"] = false
		if ep, ok := m.Entrypoint(fi.FlowID); ok {
			fo["entrypoint"] = true
			if ep.Name != "" {
				fo["name"] = ep.Name
			}
			if len(ep.Interfaces) > 0 {
				fo["interfaces"] = ep.Interfaces
			}
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
	// pyjson, as bundle run's output: pin defaults may hold NaN or
	// ±Infinity (Python tools write them), which it writes as Python does.
	text, err := pyjson.Marshal(out, pyjson.Style{SortKeys: true, Indent: 2})
	if err != nil {
		fmt.Fprintf(stderr, "bundle inspect: encoding the description of %s: %v\n", b.Ref(), err)
		return 1
	}
	if _, err := fmt.Fprintf(stdout, "%s\n", text); err != nil {
		fmt.Fprintf(stderr, "bundle inspect: writing the description of %s: %v\n", b.Ref(), err)
		return 1
	}
	return 0
}

// nonFiniteAsLiterals returns v with every NaN or ±Inf float replaced by
// the literal Python's json.dumps writes for it (NaN, Infinity,
// -Infinity): pin defaults of flows Python tools wrote may hold them, and
// the encoder refuses such floats where they would become run state.
func nonFiniteAsLiterals(v any) any {
	switch x := v.(type) {
	case float64:
		switch {
		case math.IsNaN(x):
			return json.Number("NaN")
		case math.IsInf(x, 1):
			return json.Number("Infinity")
		case math.IsInf(x, -1):
			return json.Number("-Infinity")
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = nonFiniteAsLiterals(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = nonFiniteAsLiterals(e)
		}
		return out
	}
	return v
}
