package bundle

import (
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCorruptedSharedBundlesNeverPanicTheReader guarantees, per spec
// visualflow.md §7.1/§8.1 (a bad bundle is refused with an error naming
// it, and never stops the others), that a damaged .flow never crashes the
// reader. Each shared bundle (../shared/bundles, skipped when absent) is
// read with 1–4 random bytes overwritten, 1500 times per bundle with a
// fixed seed; every read must return (an error or a bundle), and an error
// must name the bundle file.
func TestCorruptedSharedBundlesNeverPanicTheReader(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("../../../shared/bundles/*.flow")
	if len(files) == 0 {
		t.Skip("no shared bundles in ../shared/bundles")
	}
	r := rand.New(rand.NewSource(7))
	for _, file := range files {
		orig, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ReadBytes(orig, filepath.Base(file)); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for i := 0; i < 1500; i++ {
			d := append([]byte(nil), orig...)
			for k := 0; k < 1+r.Intn(4); k++ {
				d[r.Intn(len(d))] = byte(r.Intn(256))
			}
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("%s, mutation %d: ReadBytes panicked: %v", file, i, p)
					}
				}()
				_, err := ReadBytes(d, "damaged.flow")
				if err != nil && !strings.Contains(err.Error(), "damaged.flow") {
					t.Fatalf("%s, mutation %d: error does not name the bundle file: %v", file, i, err)
				}
			}()
		}
	}
}
