package pyval

import (
	"bufio"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestFloatPowGolden checks FloatPow's arithmetic bit for bit against
// CPython 3.11's float ** on every line of the golden files (written by
// testdata/gen_pow_golden.py): pow_golden.txt holds what CPython returns
// when glibc runs its FMA build of pow, pow_golden_nofma.txt what it
// returns with the plain build, and each is checked against the matching
// flavour of libmPow, whatever the CPU running the test. Exceptions are
// compared by kind; any NaN matches a NaN.
func TestFloatPowGolden(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file  string
		fused bool
	}{
		{"testdata/pow_golden.txt", true},
		{"testdata/pow_golden_nofma.txt", false},
	} {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			checkPowGolden(t, c.file, func(x, y float64) (float64, error) { return floatPow(x, y, c.fused) })
		})
	}
}

// TestFloatPowGoldenThisCPU checks FloatPow itself, with the flavour it
// picked for this CPU, against the matching golden file.
func TestFloatPowGoldenThisCPU(t *testing.T) {
	t.Parallel()
	file := "testdata/pow_golden_nofma.txt"
	if powFused {
		file = "testdata/pow_golden.txt"
	}
	checkPowGolden(t, file, FloatPow)
}

func checkPowGolden(t *testing.T, file string, pow func(x, y float64) (float64, error)) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wantErr := map[string]error{
		"ZeroDivisionError": ErrPowZeroToNegative,
		"complex":           ErrPowComplex,
		"OverflowError":     ErrPowOverflow,
	}
	parse := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("bad float %q in %s: %v", s, file, err)
		}
		return v
	}
	sc := bufio.NewScanner(f)
	cases, failures := 0, 0
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) != 3 {
			t.Fatalf("%s:%d: want 3 fields, got %q", file, line, text)
		}
		x, y := parse(fields[0]), parse(fields[1])
		got, gotErr := pow(x, y)
		cases++
		ok := false
		if want, isErr := wantErr[fields[2]]; isErr {
			ok = errors.Is(gotErr, want)
		} else {
			want := parse(fields[2])
			ok = gotErr == nil && (math.Float64bits(got) == math.Float64bits(want) || math.IsNaN(got) && math.IsNaN(want))
		}
		if !ok {
			failures++
			t.Errorf("%s:%d: %v ** %v = %v (%x), %v; want %s", file, line, x, y, got, got, gotErr, fields[2])
			if failures > 50 {
				t.Fatal("too many failures")
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cases < 5000 {
		t.Fatalf("only %d cases in %s", cases, file)
	}
}

// TestFloatPowExamples pins a few results where Go's math.Pow and Python
// disagree in the last bit.
func TestFloatPowExamples(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ x, y, want float64 }{
		{100, 1.5, 1000},
		{1.05, 30, 4.321942375150668},
		{1.1, 10, 2.5937424601000023},
		{1.001, 365, 1.4402513134295205},
		{1e22, 10, 1e220},
		{-2, 3, -8},
		{-1, 1e300, 1},
		{2, -1074, 5e-324},
	} {
		if got, err := FloatPow(c.x, c.y); err != nil || got != c.want {
			t.Errorf("FloatPow(%v, %v) = %v, %v; want %v", c.x, c.y, got, err, c.want)
		}
	}
	if got, err := FloatPow(-1e-200, 3); err != nil || got != 0 || !math.Signbit(got) {
		t.Errorf("(-1e-200)**3 = %v, %v; want -0.0", got, err)
	}
}

// BenchmarkFloatPow compares FloatPow (and each flavour of libmPow behind
// it) with math.Pow on ordinary inputs.
func BenchmarkFloatPow(b *testing.B) {
	xs := []float64{100, 1.05, 0.37, 12345.678, 2.5e-8, 7}
	ys := []float64{1.5, 30, -2.25, 0.333, 3.7, -11}
	b.Run("FloatPow", func(b *testing.B) {
		var sink float64
		for i := 0; b.Loop(); i++ {
			r, _ := FloatPow(xs[i%len(xs)], ys[i%len(ys)])
			sink += r
		}
		_ = sink
	})
	for _, fused := range []bool{true, false} {
		name := "plain"
		if fused {
			name = "fma"
		}
		b.Run("libm-"+name, func(b *testing.B) {
			var sink float64
			for i := 0; b.Loop(); i++ {
				r, _ := floatPow(xs[i%len(xs)], ys[i%len(ys)], fused)
				sink += r
			}
			_ = sink
		})
	}
	b.Run("math.Pow", func(b *testing.B) {
		var sink float64
		for i := 0; b.Loop(); i++ {
			sink += math.Pow(xs[i%len(xs)], ys[i%len(ys)])
		}
		_ = sink
	})
}
