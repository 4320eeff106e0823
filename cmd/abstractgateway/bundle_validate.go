package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/abstractframework/abstractgateway/visualflow"
	"github.com/abstractframework/abstractgateway/visualflow/bundle"
)

// bundleValidate reads and compiles every given bundle (a directory means
// every *.flow inside it). One bad bundle never stops the others; the
// exit code is 1 when any failed, or when a directory holds no bundle (a
// CI step "validate bundles/" must not pass having validated nothing).
func bundleValidate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	out := &outWriter{w: stdout}
	return out.exit("bundle validate", stderr, bundleValidateMain(args, out, stderr))
}

func bundleValidateMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bundle validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: abstractgateway bundle validate (path.flow | dir)...

Reads and compiles each bundle (a directory: every *.flow in it, or the
unpacked bundle it is) and prints one line per bundle, "ok" or one "FAIL"
line per problem. Exit code: 0 when every bundle is valid, 1 when one is
not or a directory holds no bundle, 2 usage.
`)
	}
	if code, ok := parseFlags(fs, args, stdout); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	var paths []string
	var empty []string // directories without a bundle
	for _, arg := range fs.Args() {
		info, err := os.Stat(arg)
		if err == nil && info.IsDir() && !isBundleDir(arg) {
			entries, err := os.ReadDir(arg)
			if err != nil {
				fmt.Fprintf(stderr, "bundle validate: reading directory %s: %v\n", arg, err)
				return 1
			}
			n := len(paths)
			for _, e := range entries {
				if strings.HasSuffix(e.Name(), ".flow") {
					paths = append(paths, filepath.Join(arg, e.Name()))
				}
			}
			if len(paths) == n {
				empty = append(empty, arg)
			}
			continue
		}
		paths = append(paths, arg)
	}
	sort.Strings(paths)
	name := bundleNamer(paths, len(fs.Args()))
	failed := 0
	for _, p := range paths {
		if err := validateOne(p); err != nil {
			failed++
			for _, e := range leafErrors(err) {
				fmt.Fprintf(stdout, "FAIL %s: %v\n", name(p), e)
			}
			continue
		}
		fmt.Fprintf(stdout, "ok   %s\n", name(p))
	}
	for _, dir := range empty {
		fmt.Fprintf(stderr, "bundle validate: no bundles found in %s\n", dir)
	}
	if failed > 0 {
		fmt.Fprintf(stdout, "%d of %d bundle(s) failed\n", failed, len(paths))
	}
	if failed > 0 || len(empty) > 0 {
		return 1
	}
	return 0
}

// bundleNamer returns how a result line names a bundle: its base name
// when a single argument was given and no two bundles share a base name,
// else the path as given, so that a line tells which file it is about
// (greet.flow in released/ and in staging/).
func bundleNamer(paths []string, nargs int) func(string) string {
	seen := map[string]int{}
	for _, p := range paths {
		seen[filepath.Base(p)]++
	}
	byPath := nargs > 1
	for _, n := range seen {
		byPath = byPath || n > 1
	}
	return func(p string) string {
		if byPath {
			return p
		}
		return filepath.Base(p)
	}
}

// isBundleDir reports whether dir is an unpacked bundle (has a manifest).
func isBundleDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "manifest.json"))
	return err == nil
}

func validateOne(path string) error {
	b, err := bundle.Read(path)
	if err != nil {
		return err
	}
	_, err = visualflow.CompileBundle(b, visualflow.BundleOptions{})
	return err
}

// leafErrors flattens joined errors, one line per problem.
func leafErrors(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leafErrors(e)...)
		}
		return out
	}
	return []error{err}
}
