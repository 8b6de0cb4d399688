package codec

import (
	"math"
	"math/bits"
)

// Binary float formats by their bit layout: float16, float32, float64 and
// the registered machine-learning floats of zarr-extensions/data-types
// (bfloat16, float8_*, float6_*, float4_e2m1fn), for scale_offset and
// cast_value, which compute and round in them, and for zarr/meta, which
// reads their fill values and widens them for previews.

// FloatSpecial is how a float format spells NaN and infinity.
type FloatSpecial int

// The float formats' special values.
const (
	IEEESpecials  FloatSpecial = iota // all-ones exponent: ±Inf (mantissa 0) or NaN
	FNUZSpecials                      // no infinity, no negative zero: 0x80 is NaN
	FNSpecials                        // neither infinity nor NaN
	E8M0Specials                      // no sign, no zero, no mantissa; 0xff is NaN
	FNNaNSpecials                     // no infinity; exponent and mantissa all ones is NaN (float8_e4m3fn)
)

// FloatFormat is the layout of a binary float: Bits stored bits (the low
// ones of its 1, 2, 4 or 8 bytes), a sign bit (except E8M0Specials), Exp
// exponent bits with bias Bias, Man mantissa bits, subnormals when the
// exponent is 0 (except E8M0Specials).
type FloatFormat struct {
	Bits, Exp, Man, Bias int
	Special              FloatSpecial
}

// The formats by their v3 data type names, each README's layout.
var floatFormats = map[string]FloatFormat{
	"float16":            {Bits: 16, Exp: 5, Man: 10, Bias: 15},
	"float32":            {Bits: 32, Exp: 8, Man: 23, Bias: 127},
	"float64":            {Bits: 64, Exp: 11, Man: 52, Bias: 1023},
	"bfloat16":           {Bits: 16, Exp: 8, Man: 7, Bias: 127},
	"float8_e3m4":        {Bits: 8, Exp: 3, Man: 4, Bias: 3},
	"float8_e4m3":        {Bits: 8, Exp: 4, Man: 3, Bias: 7},
	"float8_e4m3b11fnuz": {Bits: 8, Exp: 4, Man: 3, Bias: 11, Special: FNUZSpecials},
	"float8_e4m3fnuz":    {Bits: 8, Exp: 4, Man: 3, Bias: 8, Special: FNUZSpecials},
	// Not registered in zarr-extensions, but TensorStore's zarr2 driver
	// writes it as a v2 dtype (and as a field type of structured dtypes):
	// ml_dtypes's float8_e4m3fn, the OCP FP8 E4M3.
	"float8_e4m3fn":   {Bits: 8, Exp: 4, Man: 3, Bias: 7, Special: FNNaNSpecials},
	"float8_e5m2":     {Bits: 8, Exp: 5, Man: 2, Bias: 15},
	"float8_e5m2fnuz": {Bits: 8, Exp: 5, Man: 2, Bias: 16, Special: FNUZSpecials},
	"float8_e8m0fnu":  {Bits: 8, Exp: 8, Man: 0, Bias: 127, Special: E8M0Specials},
	"float6_e2m3fn":   {Bits: 6, Exp: 2, Man: 3, Bias: 1, Special: FNSpecials},
	"float6_e3m2fn":   {Bits: 6, Exp: 3, Man: 2, Bias: 3, Special: FNSpecials},
	"float4_e2m1fn":   {Bits: 4, Exp: 2, Man: 1, Bias: 1, Special: FNSpecials},
}

// FloatFormatOf returns the layout of the float data type name.
func FloatFormatOf(name string) (FloatFormat, bool) {
	f, ok := floatFormats[name]
	return f, ok
}

// HasNaN and HasInf report whether the format spells NaN and ±Inf.
func (f FloatFormat) HasNaN() bool { return f.Special != FNSpecials }

// HasInf reports whether the format has ±Inf.
func (f FloatFormat) HasInf() bool { return f.Special == IEEESpecials }

// signBit is the sign's bit (0 for unsigned E8M0).
func (f FloatFormat) signBit() uint64 {
	if f.Special == E8M0Specials {
		return 0
	}
	return 1 << (f.Exp + f.Man)
}

// Value returns the number code stands for (its bits above Bits ignored).
func (f FloatFormat) Value(code uint64) float64 {
	switch f.Bits {
	case 64:
		return math.Float64frombits(code)
	case 32:
		return float64(math.Float32frombits(uint32(code)))
	}
	if f.Exp == 8 && f.Bits == 16 { // bfloat16: the top half of a float32
		return float64(math.Float32frombits(uint32(code) << 16))
	}
	code &= 1<<f.Bits - 1
	switch f.Special {
	case E8M0Specials:
		if code == 0xff {
			return math.NaN()
		}
		return math.Ldexp(1, int(code)-f.Bias)
	case FNUZSpecials:
		if code == 0x80 {
			return math.NaN()
		}
	case FNNaNSpecials:
		if code&(f.signBit()-1) == f.signBit()-1 {
			return math.NaN()
		}
	}
	sign := 1.0
	if code&f.signBit() != 0 {
		sign = -1
	}
	e := int(code >> f.Man & (1<<f.Exp - 1))
	m := float64(code & (1<<f.Man - 1))
	if f.Special == IEEESpecials && e == 1<<f.Exp-1 {
		if m == 0 {
			return math.Inf(int(sign))
		}
		return math.NaN()
	}
	if e == 0 {
		return sign * math.Ldexp(m, 1-f.Bias-f.Man)
	}
	return sign * math.Ldexp(1+math.Ldexp(m, -f.Man), e-f.Bias)
}

// NaNCode is the NaN each README names for the "NaN" fill value: 0x80
// (fnuz), 0xff (e8m0), else the exponent all ones with the top mantissa
// bit set (0x7e00 float16, 0x7fc0 bfloat16, 0x7c e4m3 …).
func (f FloatFormat) NaNCode() uint64 {
	switch f.Special {
	case FNUZSpecials:
		return 0x80
	case E8M0Specials:
		return 0xff
	case FNNaNSpecials:
		return f.signBit() - 1 // 0x7f
	}
	return (1<<f.Exp-1)<<f.Man | 1<<(f.Man-1)
}

// InfCode is ±Inf of an IEEE format.
func (f FloatFormat) InfCode(neg bool) uint64 {
	c := uint64(1<<f.Exp-1) << f.Man
	if neg {
		c |= f.signBit()
	}
	return c
}

// maxExp is the largest biased exponent of a finite value.
func (f FloatFormat) maxExp() int {
	if f.Special == IEEESpecials || f.Special == E8M0Specials {
		return 1<<f.Exp - 2
	}
	return 1<<f.Exp - 1
}

// ClampCode is the value an out-of-range value of that sign is clamped to
// (cast_value's "clamp"): ±Inf where the format has it, else its largest
// finite value of that sign (E8M0: its least value for negatives).
func (f FloatFormat) ClampCode(neg bool) uint64 {
	if f.HasInf() {
		return f.InfCode(neg)
	}
	if f.Special == E8M0Specials {
		if neg {
			return 0
		}
		return uint64(f.maxExp())
	}
	c := uint64(f.maxExp())<<f.Man | (1<<f.Man - 1)
	if f.Special == FNNaNSpecials {
		c-- // all ones is NaN
	}
	if neg {
		c |= f.signBit()
	}
	return c
}

// Round returns the code of the number (−1)^neg × mant × 2^exp rounded to
// the format by rounding (a cast_value rounding name; "" is nearest-even).
// over reports a value beyond the finite range after rounding (and, for
// E8M0, a negative value, or one that rounds to zero): no code is given
// then. Zero keeps its sign where the format has a negative zero.
func (f FloatFormat) Round(neg bool, mant uint64, exp int, rounding string) (code uint64, over bool) {
	if f.Special == E8M0Specials && neg && mant != 0 {
		return 0, true
	}
	var sign uint64
	if neg {
		sign = f.signBit()
	}
	if mant == 0 {
		return f.zero(sign), f.Special == E8M0Specials
	}
	top := exp + bits.Len64(mant) - 1 // mant × 2^exp is in [2^top, 2^(top+1))
	emin := 1 - f.Bias                // the least normal exponent
	if f.Special == E8M0Specials {
		emin = -f.Bias
	}
	q := max(top-f.Man, emin-f.Man) // the exponent of the last kept bit
	var m uint64
	if s := q - exp; s <= 0 {
		m = mant << -s // exact: at most Man+1 bits
	} else {
		var rem, half uint64
		switch {
		case s > 64:
			m, rem, half = 0, 1, 2 // below half, not zero
		case s == 64:
			m, rem, half = 0, mant, 1<<63
		default:
			m, rem, half = mant>>s, mant&(1<<s-1), 1<<(s-1)
		}
		up := false
		switch rounding {
		case "towards-zero":
		case "towards-positive":
			up = rem != 0 && !neg
		case "towards-negative":
			up = rem != 0 && neg
		case "nearest-away":
			up = rem >= half
		default: // nearest-even
			up = rem > half || rem == half && m&1 == 1
		}
		if up {
			m++
		}
	}
	if m == 1<<(f.Man+1) { // rounded up to the next power of two
		m >>= 1
		q++
	}
	if m < 1<<f.Man { // subnormal, or zero
		if f.Special == E8M0Specials {
			return 0, true
		}
		if m == 0 {
			return f.zero(sign), false
		}
		return sign | m, false
	}
	e := q + f.Man + f.Bias
	if e > f.maxExp() || f.Special == FNNaNSpecials && e == f.maxExp() && m == 1<<(f.Man+1)-1 {
		return 0, true // (all ones is float8_e4m3fn's NaN)
	}
	return sign | uint64(e)<<f.Man | (m - 1<<f.Man), false
}

// zero is the zero of that sign: +0 where there is no −0 (fnuz, whose
// 0x80 is NaN).
func (f FloatFormat) zero(sign uint64) uint64 {
	if f.Special == FNUZSpecials {
		return 0
	}
	return sign
}

// exactParts splits a finite float64 into sign, an integer mantissa and a
// power of two, exactly.
func exactParts(v float64) (neg bool, mant uint64, exp int) {
	frac, e := math.Frexp(math.Abs(v))
	return math.Signbit(v), uint64(math.Ldexp(frac, 53)), e - 53
}
