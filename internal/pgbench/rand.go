package pgbench

import (
	"math"
	"math/bits"
)

// Rand is pgbench's pseudo-random generator (PostgreSQL's pg_prng):
// xoroshiro128** 1.0, its 128-bit state filled from a 64-bit seed by
// splitmix64. Each client has its own; it is not safe for concurrent use.
// The zero Rand is not seeded: use NewRand.
type Rand struct {
	s0, s1 uint64
}

// NewRand returns a generator seeded as pg_prng_seed(seed).
func NewRand(seed uint64) *Rand {
	r := &Rand{}
	r.Seed(seed)
	return r
}

// Seed re-seeds r as pg_prng_seed(seed).
func (r *Rand) Seed(seed uint64) {
	r.s0 = splitmix64(&seed)
	r.s1 = splitmix64(&seed)
	if r.s0 == 0 && r.s1 == 0 {
		// All zeroes is a fixed point of xoroshiro; pg_prng uses Knuth's
		// LCG constants instead.
		r.s0 = 0x5851F42D4C957F2D
		r.s1 = 0x14057B7EF767814F
	}
}

func splitmix64(state *uint64) uint64 {
	*state += 0x9E3779B97F4A7C15
	v := *state
	v = (v ^ (v >> 30)) * 0xBF58476D1CE4E5B9
	v = (v ^ (v >> 27)) * 0x94D049BB133111EB
	return v ^ (v >> 31)
}

// Uint64 returns the next 64 random bits (pg_prng_uint64).
func (r *Rand) Uint64() uint64 {
	s0 := r.s0
	sx := r.s1 ^ s0
	v := bits.RotateLeft64(s0*5, 7) * 9
	r.s0 = bits.RotateLeft64(s0, 24) ^ sx ^ (sx << 16)
	r.s1 = bits.RotateLeft64(sx, 37)
	return v
}

// Uint64Range returns a uniform value in [min, max] (pg_prng_uint64_range,
// bitmask rejection); min when the range is empty, without drawing.
func (r *Rand) Uint64Range(min, max uint64) uint64 {
	if max <= min {
		return min
	}
	span := max - min
	shift := uint(bits.LeadingZeros64(span))
	for {
		v := r.Uint64() >> shift
		if v <= span {
			return min + v
		}
	}
}

// Int64Range is pgbench's getrand: a uniform integer in [min, max]. The
// difference max-min must not overflow an int64 (random() checks it).
func (r *Rand) Int64Range(min, max int64) int64 {
	return min + int64(r.Uint64Range(0, uint64(max-min)))
}

// Float64 returns a uniform double in [0, 1) with 52 random bits
// (pg_prng_double).
func (r *Rand) Float64() float64 {
	return float64(r.Uint64()>>12) * 0x1p-52
}

// Normal returns a standard normal variate by one Box-Muller transform
// (pg_prng_double_normal).
func (r *Rand) Normal() float64 {
	u1 := 1.0 - r.Float64()
	u2 := 1.0 - r.Float64()
	return math.Sqrt(-2.0*math.Log(u1)) * math.Sin(2.0*math.Pi*u2)
}

// Poisson returns an integer whose mean over many draws is center (pgbench's
// getPoissonRand, used by the --rate schedule).
func (r *Rand) Poisson(center float64) int64 {
	u := 1.0 - r.Float64()
	return int64(-math.Log(u)*center + 0.5)
}

// Exponential is pgbench's getExponentialRand: an integer in [min, max]
// where the density at max is exp(-param) times the density at min.
// param must be > 0.
func (r *Rand) Exponential(min, max int64, param float64) int64 {
	cut := math.Exp(-param)
	u := 1.0 - r.Float64() // (0, 1]
	x := -math.Log(cut+(1.0-cut)*u) / param
	return min + int64(float64(max-min+1)*x)
}

// Gaussian is pgbench's getGaussianRand: a normal variate truncated to
// [-param, param) mapped onto [min, max]. param must be >= 2.
func (r *Rand) Gaussian(min, max int64, param float64) int64 {
	var z float64
	for {
		z = r.Normal()
		if z >= -param && z < param {
			break
		}
	}
	x := (z + param) / (param * 2.0)
	return min + int64(float64(max-min+1)*x)
}

// Zipfian is pgbench's getZipfianRand: a bounded Zipf variate in [min, max]
// with exponent s (1.001 <= s <= 1000), by Devroye's rejection method
// (Non-Uniform Random Variate Generation, 1986, pp. 550-551).
func (r *Rand) Zipfian(min, max int64, s float64) int64 {
	return min - 1 + r.iterativeZipfian(max-min+1, s)
}

func (r *Rand) iterativeZipfian(n int64, s float64) int64 {
	if n <= 1 {
		return 1
	}
	b := math.Pow(2.0, s-1.0)
	for {
		u := r.Float64()
		v := r.Float64()
		x := math.Floor(math.Pow(u, -1.0/(s-1.0)))
		t := math.Pow(1.0+1.0/x, s-1.0)
		if v*x*(t-1.0)/(b-1.0) <= t/b && x <= float64(n) {
			return int64(x)
		}
	}
}

// Hash constants.
const (
	fnvPrime         = 0x100000001b3
	fnvOffsetBasis   = 0xcbf29ce484222325
	murmur2Mul       = 0xc6a4a7935bd1e995
	murmur2MulTimes8 = 0x35253c9ade8f4ca8 // murmur2Mul * sizeof(int64)
	murmur2Rot       = 47
)

// HashFNV1a is pgbench's hash_fnv1a(v, seed): 64-bit FNV-1a over the eight
// bytes of v, least significant first, with the offset basis xor seed.
func HashFNV1a(v int64, seed int64) int64 {
	h := uint64(fnvOffsetBasis) ^ uint64(seed)
	for i := 0; i < 8; i++ {
		// pgbench takes v & 0xff as a signed 32-bit octet of a shifted
		// signed value: the octet is always 0..255.
		h ^= uint64(v & 0xff)
		h *= fnvPrime
		v >>= 8
	}
	return int64(h)
}

// HashMurmur2 is pgbench's hash / hash_murmur2(v, seed): 64-bit MurmurHash2
// (MurmurHash64A) of the eight bytes of v.
func HashMurmur2(v int64, seed int64) int64 {
	h := uint64(seed) ^ murmur2MulTimes8
	k := uint64(v)
	k *= murmur2Mul
	k ^= k >> murmur2Rot
	k *= murmur2Mul
	h ^= k
	h *= murmur2Mul
	h ^= h >> murmur2Rot
	h *= murmur2Mul
	h ^= h >> murmur2Rot
	return int64(h)
}

// Permute is pgbench's permute(v, size, seed): the position of v (modulo
// size) in a pseudo-random permutation of [0, size) chosen by seed. It is a
// bijection of [0, size) for every seed. size must be > 0 (permute() checks
// it); sizes below 2 give 0.
func Permute(v, size, seed int64) int64 {
	if size < 2 {
		return 0
	}
	var st Rand
	st.Seed(uint64(seed))
	n := uint64(size)
	x := uint64(v) % n
	// Work modulo the largest power of two <= size, on the overlapping
	// lower and upper parts of the range.
	masklen := uint(63 - bits.LeadingZeros64(n))
	mask := uint64(1)<<masklen - 1
	for round := 0; round < 6; round++ {
		// Lower part: multiply by an odd number, xor, rotate left by one.
		m := st.Uint64()&mask | 1
		k := st.Uint64() & mask
		if x <= mask {
			x = (x*m ^ k) & mask
			x = (x<<1)&mask | x>>(masklen-1)
		}
		// Upper part, the same on the reflected value.
		m = st.Uint64()&mask | 1
		k = st.Uint64() & mask
		t := n - 1 - x
		if t <= mask {
			t = (t*m ^ k) & mask
			t = (t<<1)&mask | t>>(masklen-1)
			x = n - 1 - t
		}
		// Random offset modulo size.
		x = (x + st.Uint64Range(0, n-1)) % n
	}
	return int64(x)
}
