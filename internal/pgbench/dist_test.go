package pgbench

import (
	"math"
	"testing"
)

// draw evaluates an expression n times with a fixed seed and counts the
// values, failing on errors and on values outside [lb, ub].
func draw(t *testing.T, src string, lb, ub int64, n int) map[int64]int {
	t.Helper()
	e, err := ParseExpr(src)
	if err != nil {
		t.Fatal(err)
	}
	env := newEnv(nil)
	env.r = NewRand(20240229)
	counts := map[int64]int{}
	for i := 0; i < n; i++ {
		v, err := Eval(e, env)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if v.K != Int || v.I < lb || v.I > ub {
			t.Fatalf("%s = %v, outside [%d, %d]", src, v, lb, ub)
		}
		counts[v.I]++
	}
	return counts
}

func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.4f, want %.4f ± %.4f", what, got, want, tol)
	} else {
		t.Logf("%s = %.4f (want %.4f ± %.4f)", what, got, want, tol)
	}
}

func TestRandomBounds(t *testing.T) {
	ranges := [][2]int64{{1, 1}, {0, 1}, {-5, 5}, {1, 2}, {1, 3}, {-1000, -990}, {1, 1 << 40}, {math.MinInt64, -1 - (1 << 62)}, {math.MaxInt64 - 3, math.MaxInt64}}
	for _, r := range ranges {
		for _, fn := range []string{"random(%d, %d)", "random_exponential(%d, %d, 0.5)", "random_exponential(%d, %d, 20)",
			"random_gaussian(%d, %d, 2)", "random_gaussian(%d, %d, 8)", "random_zipfian(%d, %d, 1.001)", "random_zipfian(%d, %d, 3)"} {
			src := sprintfExpr(fn, r[0], r[1])
			draw(t, src, r[0], r[1], 300)
		}
	}
	// Small ranges are fully covered by the uniform generator.
	c := draw(t, "random(-5, 5)", -5, 5, 11000)
	for v := int64(-5); v <= 5; v++ {
		within(t, "share of "+itoa(v)+" in random(-5, 5)", float64(c[v])/11000, 1.0/11, 0.01)
	}
}

// Zipfian with p = 2.5: value 1 is drawn (2/1)^2.5 ≈ 5.66 times as often
// as value 2, and 2 (3/2)^2.5 ≈ 2.76 times as often as 3 (doc 5.3).
func TestZipfianSkew(t *testing.T) {
	const n = 400000
	c := draw(t, "random_zipfian(1, 1000, 2.5)", 1, 1000, n)
	within(t, "zipfian(2.5) count(1)/count(2)", float64(c[1])/float64(c[2]), math.Pow(2, 2.5), 0.15)
	within(t, "zipfian(2.5) count(2)/count(3)", float64(c[2])/float64(c[3]), math.Pow(1.5, 2.5), 0.12)
	// With an offset range the same shape starts at lb.
	c = draw(t, "random_zipfian(101, 1100, 2.5)", 101, 1100, n/4)
	within(t, "zipfian(2.5) on [101, 1100] count(101)/count(102)", float64(c[101])/float64(c[102]), math.Pow(2, 2.5), 0.3)
	// A larger parameter is more skewed.
	c = draw(t, "random_zipfian(1, 1000, 1.5)", 1, 1000, n/4)
	within(t, "zipfian(1.5) count(1)/count(2)", float64(c[1])/float64(c[2]), math.Pow(2, 1.5), 0.15)
}

// Exponential: value i has probability f(i) - f(i+1) with
// f(x) = exp(-p(x-min)/(max-min+1)) / (1 - exp(-p)) (doc 5.3); the lowest
// 1% of the range gets about p% of the draws.
func TestExponentialSkew(t *testing.T) {
	const n = 200000
	p := 5.0
	c := draw(t, "random_exponential(1, 1000, 5.0)", 1, 1000, n)
	low := 0
	for v := int64(1); v <= 10; v++ {
		low += c[v]
	}
	want := (1 - math.Exp(-p*10/1000)) / (1 - math.Exp(-p))
	within(t, "exponential(5) share of [1, 10]", float64(low)/n, want, 0.004)
	// Deciles decrease by a factor exp(-p/10).
	var dec [10]int
	for v, k := range c {
		dec[(v-1)/100] += k
	}
	for i := 1; i < 10; i++ {
		if dec[i] >= dec[i-1] {
			t.Errorf("decile %d (%d draws) not below decile %d (%d)", i, dec[i], i-1, dec[i-1])
		}
	}
	within(t, "exponential(5) decile 1/decile 0", float64(dec[1])/float64(dec[0]), math.Exp(-p/10), 0.03)
}

// Gaussian: the range is a normal truncated at ±p around the middle; about
// 67% of draws fall in the middle 1/p of the range and 95% in the middle
// 2/p (doc 5.3; exactly P(|z|<1)/P(|z|<p) and P(|z|<2)/P(|z|<p)).
func TestGaussianShape(t *testing.T) {
	const n = 200000
	p := 2.5
	c := draw(t, "random_gaussian(1, 1000, 2.5)", 1, 1000, n)
	in1, in2, sum := 0, 0, 0.0
	for v, k := range c {
		// z = 2p(x - min)/(max - min + 1) - p, x the draw's position.
		z := 2*p*float64(v-1)/1000 - p
		if z >= -1 && z < 1 {
			in1 += k
		}
		if z >= -2 && z < 2 {
			in2 += k
		}
		sum += float64(v) * float64(k)
	}
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	trunc := 2*phi(p) - 1
	within(t, "gaussian(2.5) share within 1 stddev", float64(in1)/n, (2*phi(1)-1)/trunc, 0.006)
	within(t, "gaussian(2.5) share within 2 stddev", float64(in2)/n, (2*phi(2)-1)/trunc, 0.004)
	within(t, "gaussian(2.5) mean", sum/n, 500.5, 2)
}

func sprintfExpr(f string, a, b int64) string {
	out := []byte{}
	args := []int64{a, b}
	for i := 0; i < len(f); i++ {
		if f[i] == '%' && i+1 < len(f) && f[i+1] == 'd' {
			v := args[0]
			args = args[1:]
			if v == math.MinInt64 {
				out = append(out, "(-9223372036854775807 - 1)"...)
			} else {
				out = append(out, itoa(v)...)
			}
			i++
			continue
		}
		out = append(out, f[i])
	}
	return string(out)
}

func itoa(v int64) string { return IntValue(v).String() }

// Evaluating the builtin's random(1, 100000 * :scale) does not allocate.
func TestEvalDoesNotAllocate(t *testing.T) {
	env := newEnv(map[string]Value{"scale": IntValue(10), "default_seed": IntValue(1)})
	for _, src := range []string{
		"random(1, 100000 * :scale)",
		"random(-5000, 5000)",
		"random_zipfian(1, 1000, 1.07) + permute(:scale, 1000)",
		"case when :scale > 5 then hash(:scale) else 0 end",
		"greatest(1, 2.5, :scale) * 2",
	} {
		e, err := ParseExpr(src)
		if err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(1000, func() {
			if _, err := Eval(e, env); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("Eval(%s) allocates %.1f times per call", src, allocs)
		}
	}
}

func BenchmarkEvalRandom(b *testing.B) {
	s, err := Builtin("tpcb-like")
	if err != nil {
		b.Fatal(err)
	}
	e := s.Commands[0].Expr
	env := newEnv(map[string]Value{"scale": IntValue(10)})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Eval(e, env); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseBuiltin(b *testing.B) {
	text := BuiltinText("tpcb-like")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Parse("tpcb-like", text); err != nil {
			b.Fatal(err)
		}
	}
}
