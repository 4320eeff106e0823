package pyval

import (
	"math"
	"runtime"

	"golang.org/x/sys/cpu"
)

// libmPow is a Go rendering of the C library pow() that CPython's float **
// ends in on Linux. glibc (since 2.28) and musl both use the double
// precision pow written by Szabolcs Nagy for ARM's optimized-routines
// (Copyright (c) 2018 Arm Limited, MIT licence; see pow_data.go for the
// licence text and the tables): x**y = exp(y*log(x)), where log(x) is
// computed with about 68 bits of precision from a 128-entry table and a
// degree-8 polynomial, and exp from a second 128-entry table of 2^(j/128)
// and a degree-5 polynomial; worst-case error about 0.52 ulp.
//
// It is not correctly rounded, so matching CPython bit for bit means
// repeating its exact sequence of roundings, and glibc has two of them on
// x86-64: at load time it picks a copy of pow built with -mfma -mavx2 when
// the CPU has FMA and AVX2 (x86-64 CPUs since about 2013), and a plain
// SSE2 build otherwise. They differ in the last bit for roughly 1 input in
// 1600. The FMA copy uses fused multiply-adds both where the C source asks
// for them (__FP_FAST_FMA) and wherever GCC contracted a*b+c. With fused
// set, libmPow (powLogFMA, and powExp with fused) follows that machine
// code (glibc 2.36, Debian 12) instruction for instruction: each math.FMA
// is a fused instruction there, every other product is rounded on its own.
// Without it, libmPow (powLogPlain, powExp) is the C code's non-FMA path,
// which the SSE2 build runs. FloatPow passes powFused, which makes the
// same choice as glibc. The explicit float64 conversions keep the Go
// compiler from fusing anything else (it may on arm64, ppc64 and s390x).
//
// The structure of the special cases follows the C code; libmPow returns
// what C pow returns, without errno. FloatPow filters the inputs first, as
// CPython's float_pow does, so only finite x > 0 with x != 1 and a finite,
// non-zero y reach here from Python code paths.
func libmPow(x, y float64, fused bool) float64 {
	ix := math.Float64bits(x)
	iy := math.Float64bits(y)
	topx := uint32(ix >> 52)
	topy := uint32(iy >> 52)
	var signBias uint64

	// Fast path: x normal and positive, 2^-65 <= |y| < 2^63.
	if topx-0x001 >= 0x7ff-0x001 || (topy&0x7ff)-0x3be >= 0x43e-0x3be {
		if isZeroInfNaN(iy) {
			switch {
			case iy<<1 == 0:
				return 1
			case ix == powOneBits:
				return 1
			case ix<<1 > powInfBits<<1 || iy<<1 > powInfBits<<1:
				return x + y
			case ix<<1 == powOneBits<<1:
				return 1
			case (ix<<1 < powOneBits<<1) == (iy>>63 == 0):
				return 0 // |x| < 1 and y == +inf, or |x| > 1 and y == -inf
			}
			return y * y
		}
		if isZeroInfNaN(ix) {
			x2 := float64(x * x)
			if ix>>63 != 0 && powCheckInt(iy) == 1 {
				x2 = -x2
			}
			if iy>>63 != 0 {
				return 1 / x2
			}
			return x2
		}
		// x and y are finite and non-zero.
		if ix>>63 != 0 {
			switch powCheckInt(iy) {
			case 0:
				return math.NaN() // negative ** non-integer: domain error
			case 1:
				signBias = powSignBias
			}
			ix &^= 1 << 63
			topx &= 0x7ff
		}
		if (topy&0x7ff)-0x3be >= 0x43e-0x3be {
			// y is even here if x was negative, so the sign is +.
			if ix == powOneBits {
				return 1
			}
			if topy&0x7ff < 0x3be {
				// |y| < 2^-65: x**y ~= 1 + y*log(x), rounded.
				if ix > powOneBits {
					return 1 + y
				}
				return 1 - y
			}
			if (ix > powOneBits) == (topy < 0x800) {
				return powOverflow(0)
			}
			return powUnderflow(0)
		}
		if topx == 0 {
			// Subnormal x: normalise it, letting the exponent go negative.
			ix = math.Float64bits(x*0x1p52) &^ (1 << 63)
			ix -= 52 << 52
		}
	}

	if !fused {
		hi, lo := powLogPlain(ix)
		// y*(hi+lo) as ehi+elo, splitting y and hi so that yhi*lhi is exact.
		yhi := math.Float64frombits(iy &^ (1<<27 - 1))
		ylo := y - yhi
		lhi := math.Float64frombits(math.Float64bits(hi) &^ (1<<27 - 1))
		llo := hi - lhi + lo
		ehi := float64(yhi * lhi)
		elo := float64(ylo*lhi) + float64(y*llo)
		return powExp(ehi, elo, signBias, false)
	}
	hi, lo := powLogFMA(ix)
	// y*(hi+lo) as ehi+elo.
	ehi := float64(y * hi)
	elo := math.FMA(y, lo, math.FMA(hi, y, -ehi))
	return powExp(ehi, elo, signBias, true)
}

// powFused tells libmPow to follow glibc's FMA build of pow rather than
// its plain one. glibc on x86-64 selects the FMA build when the CPU has
// both FMA and AVX2. Elsewhere the FMA flavour is a best guess: aarch64,
// for one, always has fused multiply-add and glibc compiles pow with it,
// but that machine code has not been compared with this port.
var powFused = runtime.GOARCH != "amd64" && runtime.GOARCH != "386" ||
	cpu.X86.HasFMA && cpu.X86.HasAVX2

const (
	powOneBits = 0x3ff0000000000000 // math.Float64bits(1)
	powInfBits = 0x7ff0000000000000 // math.Float64bits(+Inf)

	powLogTableSize = 128
	powExpTableSize = 128

	// powLogOff is the bit pattern of 0x1.69555p-1: the reduced argument z
	// of the logarithm lies in [powLogOff, 2*powLogOff).
	powLogOff = 0x3fe6955500000000

	// ln2 split so that k*powLn2Hi is exact for the exponents k in use.
	powLn2Hi = 0x1.62e42fefa3800p-1
	powLn2Lo = 0x1.ef35793c76730p-45

	// log1p(r) ~= r + A0*r^2 + ... (relative error 0x1.11922ap-70 for
	// |r| < 0x1.6bp-8); the coefficients are pre-scaled for the way the
	// polynomial is evaluated.
	powA0 = -0x1p-1
	powA1 = 0x1.555555555556p-2 * -2
	powA2 = -0x1.0000000000006p-2 * -2
	powA3 = 0x1.999999959554ep-3 * 4
	powA4 = -0x1.555555529a47ap-3 * 4
	powA5 = 0x1.2495b9b4845e9p-3 * -8
	powA6 = -0x1.0002b8b263fc3p-3 * -8

	// exp: 128/ln2, -ln2/128 in two parts, and the rounding shifter.
	powInvLn2N   = 0x1.71547652b82fep0 * powExpTableSize
	powNegLn2HiN = -0x1.62e42fefa0000p-8
	powNegLn2LoN = -0x1.cf79abc9e3b3ap-47
	powShift     = 0x1.8p52

	// exp(r) - 1 ~= r + C2*r^2 + ... + C5*r^5 for |r| < ln2/256.
	powC2 = 0x1.ffffffffffdbdp-2
	powC3 = 0x1.555555555543cp-3
	powC4 = 0x1.55555cf172b91p-5
	powC5 = 0x1.1111167a4d017p-7

	// powSignBias, added to the exponent index k, flips the sign bit of
	// the scale built from it (k is shifted left by 45 bits).
	powSignBias = 0x800 << 7
)

// powLogReduce splits x (bit pattern ix) as 2^k * z with z in
// [powLogOff, 2*powLogOff) and returns k, z and the table entry for z's
// slice.
func powLogReduce(ix uint64) (kd, z float64, e *powLogEntry) {
	tmp := ix - powLogOff
	i := (tmp >> (52 - 7)) % powLogTableSize
	k := int32(int64(tmp) >> 52)
	z = math.Float64frombits(ix - tmp&(0xfff<<52))
	return float64(k), z, &powLogTable[i]
}

// powLogPlain returns log(x) as hi+lo, with about 15 bits beyond a float64
// in lo, as glibc's pow computes it without fused multiply-add. ix is the
// bit pattern of x > 0, a subnormal x being pre-normalised with a negative
// exponent.
func powLogPlain(ix uint64) (hi, lo float64) {
	kd, z, e := powLogReduce(ix)

	// log(x) = k*ln2 + log(c) + log1p(r), r = z/c - 1. z is split so that
	// rhi, rlo and rhi*rhi are exact.
	zhi := math.Float64frombits((math.Float64bits(z) + 1<<31) &^ (1<<32 - 1))
	zlo := z - zhi
	rhi := float64(zhi*e.invc) - 1
	rlo := float64(zlo * e.invc)
	r := rhi + rlo

	t1 := float64(kd*powLn2Hi) + e.logc
	t2 := t1 + r
	lo1 := float64(kd*powLn2Lo) + e.logctail
	lo2 := t1 - t2 + r

	ar := float64(powA0 * r)
	ar2 := float64(r * ar)
	ar3 := float64(r * ar2)
	arhi := float64(powA0 * rhi)
	arhi2 := float64(rhi * arhi)
	h := t2 + arhi2
	lo3 := float64(rlo * (ar + arhi))
	lo4 := t2 - h + arhi2

	inner := powA5 + float64(r*powA6)
	mid := powA3 + float64(r*powA4) + float64(ar2*inner)
	q := powA1 + float64(r*powA2) + float64(ar2*mid)
	p := float64(ar3 * q)
	l := lo1 + lo2 + lo3 + lo4 + p

	hi = h + l
	lo = h - hi + l
	return hi, lo
}

// powLogFMA is powLogPlain as glibc's FMA build of pow computes it.
func powLogFMA(ix uint64) (hi, lo float64) {
	kd, z, e := powLogReduce(ix)

	// log(x) = k*ln2 + log(c) + log1p(r), r = z/c - 1 (exact).
	r := math.FMA(z, e.invc, -1)
	t1 := math.FMA(kd, powLn2Hi, e.logc)
	t2 := t1 + r
	lo1 := math.FMA(kd, powLn2Lo, e.logctail)
	lo2 := t1 - t2 + r

	ar := float64(powA0 * r)
	ar2 := float64(r * ar)
	ar3 := float64(r * ar2)
	h := t2 + ar2
	lo3 := math.FMA(ar, r, -ar2) // rounding error of ar2
	lo4 := t2 - h + ar2

	// The rest of log1p(r) - r - A0*r^2, as GCC fused it.
	q := math.FMA(ar2,
		math.FMA(ar2, math.FMA(r, powA6, powA5), math.FMA(r, powA4, powA3)),
		math.FMA(r, powA2, powA1))
	l := math.FMA(ar3, q, lo1+lo2+lo3+lo4)

	hi = h + l
	lo = h - hi + l
	return hi, lo
}

// powExp returns ±exp(x+xtail), negative when signBias is powSignBias.
// |xtail| is tiny compared with |x|. fused picks the rounding sequence of
// glibc's FMA build, as for powLogFMA.
func powExp(x, xtail float64, signBias uint64, fused bool) float64 {
	abstop := uint32(math.Float64bits(x)>>52) & 0x7ff
	const tiny, big = 0x3c9, 0x408 // exponent fields of 2^-54 and 512
	if abstop-tiny >= big-tiny {
		if abstop < tiny {
			// |x| < 2^-54: exp(x) rounds to 1+x (1 for x == 0).
			one := 1 + x
			if signBias != 0 {
				return -one
			}
			return one
		}
		if abstop >= 0x409 { // |x| >= 1024; inf and NaN cannot get here
			if math.Signbit(x) {
				return powUnderflow(signBias)
			}
			return powOverflow(signBias)
		}
		abstop = 0 // 512 <= |x| < 1024: the result may overflow or underflow
	}

	// exp(x) = 2^(k/128) * exp(r), x = k*ln2/128 + r, |r| <= ln2/256.
	// Adding powShift rounds k*... to an integer kept in the low bits.
	var kdShifted, r float64
	if fused {
		kdShifted = math.FMA(x, powInvLn2N, powShift)
	} else {
		kdShifted = float64(x*powInvLn2N) + powShift
	}
	ki := math.Float64bits(kdShifted)
	kd := kdShifted - powShift
	if fused {
		r = math.FMA(kd, powNegLn2LoN, math.FMA(kd, powNegLn2HiN, x))
	} else {
		r = x + float64(kd*powNegLn2HiN) + float64(kd*powNegLn2LoN)
	}
	r += xtail

	// 2^(k/128) ~= scale * (1 + tail).
	idx := 2 * (ki % powExpTableSize)
	top := (ki + signBias) << (52 - 7)
	tail := math.Float64frombits(powExpTable[idx])
	sbits := powExpTable[idx+1] + top

	// exp(x) ~= scale + scale*(tail + exp(r) - 1).
	r2 := float64(r * r)
	var tmp float64
	if fused {
		tmp = math.FMA(math.FMA(r, powC3, powC2), r2, r+tail)
		tmp = math.FMA(math.FMA(r, powC5, powC4), float64(r2*r2), tmp)
	} else {
		tmp = tail + r + float64(r2*(powC2+float64(r*powC3))) +
			float64(float64(r2*r2)*(powC4+float64(r*powC5)))
	}
	if abstop == 0 {
		return powExpSpecial(tmp, sbits, ki, fused)
	}
	scale := math.Float64frombits(sbits)
	if fused {
		return math.FMA(tmp, scale, scale)
	}
	return scale + float64(scale*tmp)
}

// powExpSpecial finishes powExp when scale*(1+tmp) may overflow or fall
// into the subnormal range, where scale's bit pattern sbits cannot be used
// as it is. The sign of the low 32 bits of ki tells which side k is on.
func powExpSpecial(tmp float64, sbits, ki uint64, fused bool) float64 {
	if ki&0x80000000 == 0 {
		// k > 0: scale's exponent may have overflowed; lower it by 1009.
		sbits -= 1009 << 52
		scale := math.Float64frombits(sbits)
		var y float64
		if fused {
			y = math.FMA(scale, tmp, scale)
		} else {
			y = scale + float64(scale*tmp)
		}
		return float64(y * 0x1p1009)
	}
	// k < 0: raise scale by 1022 and round the result to its final
	// precision before scaling it down into the subnormal range, which
	// avoids a double rounding.
	sbits += 1022 << 52
	scale := math.Float64frombits(sbits)
	st := float64(scale * tmp)
	y := scale + st
	if math.Abs(y) < 1 {
		one := 1.0
		if y < 0 {
			one = -1
		}
		lo := scale - y + st
		hi := y + one
		lo = one - hi + y + lo
		y = (lo + hi) - one
		if y == 0 { // keep the sign of zero
			y = math.Float64frombits(sbits & (1 << 63))
		}
	}
	return float64(y * 0x1p-1022)
}

// powOverflow is C's __math_oflow: ±Inf (the C code also sets errno).
func powOverflow(signBias uint64) float64 {
	if signBias != 0 {
		return math.Inf(-1)
	}
	return math.Inf(1)
}

// powUnderflow is C's __math_uflow: ±0.
func powUnderflow(signBias uint64) float64 {
	if signBias != 0 {
		return math.Copysign(0, -1)
	}
	return 0
}

// powCheckInt classifies the bit pattern of a finite, non-zero y: 0 if y
// is not an integer, 1 if it is an odd integer and 2 if an even one.
func powCheckInt(iy uint64) int {
	e := int(iy >> 52 & 0x7ff)
	switch {
	case e < 0x3ff:
		return 0
	case e > 0x3ff+52:
		return 2
	}
	frac := uint64(1)<<(0x3ff+52-e) - 1
	if iy&frac != 0 {
		return 0
	}
	if iy&(frac+1) != 0 {
		return 1
	}
	return 2
}

// isZeroInfNaN reports whether the bit pattern i is ±0, ±Inf or a NaN.
func isZeroInfNaN(i uint64) bool {
	return i<<1-1 >= powInfBits<<1-1
}
