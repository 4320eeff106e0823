package main

import (
	"context"
	"fmt"
	"io"
)

const bundleUsage = `usage: abstractgateway bundle <command> [flags]

commands:
  pack      build a .flow bundle from a root VisualFlow JSON file
  inspect   describe a bundle: manifest, flows, node types, effects, inputs
  validate  read and compile bundles (files or directories); exit 1 if any fails
  run       run a bundle entrypoint on the embedded SQLite store (or the
            JSON-file store, per --store) and print its output

"abstractgateway bundle <command> -h" describes a command and its flags.
`

// runBundleIO is the "bundle" subcommand.
func runBundleIO(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, bundleUsage)
		return 2
	}
	switch args[0] {
	case "pack":
		return bundlePack(ctx, args[1:], stdout, stderr)
	case "inspect":
		return bundleInspect(ctx, args[1:], stdout, stderr)
	case "validate":
		return bundleValidate(ctx, args[1:], stdout, stderr)
	case "run":
		return bundleRun(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		out := &outWriter{w: stdout}
		fmt.Fprint(out, bundleUsage)
		return out.exit("bundle help", stderr, 0)
	}
	fmt.Fprintf(stderr, "abstractgateway bundle: unknown command %q\n\n%s", args[0], bundleUsage)
	return 2
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return fmt.Sprint(*s) }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
