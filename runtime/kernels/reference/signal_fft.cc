#include "runtime/kernels/reference/signal_fft.h"

#include <cmath>
#include <type_traits>

namespace boardlab::runtime::kernels {
namespace {

// kissfft's pi (the same double as M_PI).
constexpr double kPi = 3.14159265358979323846264338327;

template <typename T>
struct Cpx {
  T r, i;
};

template <typename T>
Cpx<T> Load(const T* p, int64_t k) {
  return {p[2 * k], p[2 * k + 1]};
}

template <typename T>
void Store(T* p, int64_t k, Cpx<T> v) {
  p[2 * k] = v.r;
  p[2 * k + 1] = v.i;
}

// kissfft's FIXED_POINT arithmetic for a scalar of kFracBits + 1 bits (int16_t: 15,
// int32_t: 31). Every intermediate is computed in 64 bits and wrapped to the width the C source
// keeps it in, which gives the values GCC's code gives (the C source's own int32 sums may
// overflow, which GCC compiles as a wrapping add).
template <typename T, int kFracBits>
struct FixedArith {
  static constexpr int64_t kSampMax = (int64_t{1} << kFracBits) - 1;
  static T Wrap(int64_t v) { return static_cast<T>(v); }
  static T Add(T a, T b) { return Wrap(int64_t{a} + b); }
  static T Sub(T a, T b) { return Wrap(int64_t{a} - b); }
  static T Neg(T a) { return Wrap(-int64_t{a}); }
  // sround: + 2^(FRACBITS - 1), arithmetic shift right by FRACBITS, kept to the scalar.
  static T Round(int64_t x) { return Wrap((x + (int64_t{1} << (kFracBits - 1))) >> kFracBits); }
  // C_FIXDIV: x times SAMP_MAX / div, rounded.
  static T Div(T x, int64_t div) { return Round(int64_t{x} * (kSampMax / div)); }
  // S_MUL (and C_MULBYSCALAR's halves): a product rounded as C_MUL's are.
  static T Scale(T x, T s) { return Round(int64_t{x} * s); }
  static Cpx<T> Mul(Cpx<T> a, Cpx<T> b) {
    return {Round(int64_t{a.r} * b.r - int64_t{a.i} * b.i),
            Round(int64_t{a.r} * b.i + int64_t{a.i} * b.r)};
  }
  // HALF_OF of a sum the C source forms in int (int16_t operands promoted, int32_t ones
  // wrapping), shifted right by one and kept to the scalar.
  static T Half(int64_t sum) { return Wrap(static_cast<int32_t>(sum) >> 1); }
  static T Twiddle(double v) {
    return static_cast<T>(std::floor(0.5 + static_cast<double>(kSampMax) * v));
  }
};

// kissfft's float arithmetic: no scaling, HALF_OF times 0.5f (TFLite Micro's patch).
struct FloatArith {
  static float Add(float a, float b) { return a + b; }
  static float Sub(float a, float b) { return a - b; }
  static float Neg(float a) { return -a; }
  static float Div(float x, int64_t) { return x; }
  static float Scale(float x, float s) { return x * s; }
  static Cpx<float> Mul(Cpx<float> a, Cpx<float> b) {
    return {a.r * b.r - a.i * b.i, a.r * b.i + a.i * b.r};
  }
  static float Half(float sum) { return sum * 0.5f; }
  static float Twiddle(double v) { return static_cast<float>(v); }
};

template <typename T>
struct ArithOf;
template <>
struct ArithOf<int16_t> {
  using type = FixedArith<int16_t, 15>;
};
template <>
struct ArithOf<int32_t> {
  using type = FixedArith<int32_t, 31>;
};
template <>
struct ArithOf<float> {
  using type = FloatArith;
};

template <typename T>
using Arith = typename ArithOf<T>::type;

// The half sums Half takes: int16_t sums are formed in int, int32_t ones in int32_t, float ones
// in float.
template <typename T>
auto SumOf(T a, T b) {
  if constexpr (std::is_same_v<T, float>) {
    return a + b;
  } else {
    return int64_t{a} + b;
  }
}

template <typename T>
auto DifferenceOf(T a, T b) {
  if constexpr (std::is_same_v<T, float>) {
    return a - b;
  } else {
    return int64_t{a} - b;
  }
}

template <typename T>
Cpx<T> AddC(Cpx<T> a, Cpx<T> b) {
  return {Arith<T>::Add(a.r, b.r), Arith<T>::Add(a.i, b.i)};
}

template <typename T>
Cpx<T> SubC(Cpx<T> a, Cpx<T> b) {
  return {Arith<T>::Sub(a.r, b.r), Arith<T>::Sub(a.i, b.i)};
}

template <typename T>
Cpx<T> DivC(Cpx<T> a, int64_t div) {
  return {Arith<T>::Div(a.r, div), Arith<T>::Div(a.i, div)};
}

template <typename T>
Cpx<T> Twiddle(double phase) {
  return {Arith<T>::Twiddle(std::cos(phase)), Arith<T>::Twiddle(std::sin(phase))};
}

// One complex FFT's butterflies, each on `m` groups of its radix, twiddles every `stride`.
template <typename T>
struct ComplexFft {
  const T* twiddles;
  bool inverse;

  Cpx<T> Tw(int64_t k) const { return Load(twiddles, k); }

  void Radix2(T* out, int64_t stride, int64_t m) const {
    for (int64_t k = 0; k < m; ++k) {
      const Cpx<T> a = DivC(Load(out, k), 2);
      const Cpx<T> t = Arith<T>::Mul(DivC(Load(out, k + m), 2), Tw(k * stride));
      Store(out, k + m, SubC(a, t));
      Store(out, k, AddC(a, t));
    }
  }

  void Radix4(T* out, int64_t stride, int64_t m) const {
    using A = Arith<T>;
    for (int64_t k = 0; k < m; ++k) {
      Cpx<T> f0 = DivC(Load(out, k), 4);
      const Cpx<T> s0 = A::Mul(DivC(Load(out, k + m), 4), Tw(k * stride));
      const Cpx<T> s1 = A::Mul(DivC(Load(out, k + 2 * m), 4), Tw(2 * k * stride));
      const Cpx<T> s2 = A::Mul(DivC(Load(out, k + 3 * m), 4), Tw(3 * k * stride));
      const Cpx<T> s5 = SubC(f0, s1);
      f0 = AddC(f0, s1);
      const Cpx<T> s3 = AddC(s0, s2);
      const Cpx<T> s4 = SubC(s0, s2);
      Store(out, k + 2 * m, SubC(f0, s3));
      Store(out, k, AddC(f0, s3));
      // The odd outputs turn s4 by a quarter, one way or the other.
      const Cpx<T> plus{A::Add(s5.r, s4.i), A::Sub(s5.i, s4.r)};
      const Cpx<T> minus{A::Sub(s5.r, s4.i), A::Add(s5.i, s4.r)};
      Store(out, k + m, inverse ? minus : plus);
      Store(out, k + 3 * m, inverse ? plus : minus);
    }
  }

  // kf_bfly3: the two odd inputs' sum and difference, the difference turned by the third of a
  // turn's sine (twiddle n / 3), the sum's half taken from the first input.
  void Radix3(T* out, int64_t stride, int64_t m) const {
    using A = Arith<T>;
    const T sin_third = Tw(stride * m).i;
    for (int64_t k = 0; k < m; ++k) {
      const Cpx<T> f0 = DivC(Load(out, k), 3);
      const Cpx<T> s1 = A::Mul(DivC(Load(out, k + m), 3), Tw(k * stride));
      const Cpx<T> s2 = A::Mul(DivC(Load(out, k + 2 * m), 3), Tw(2 * k * stride));
      const Cpx<T> sum = AddC(s1, s2);
      const Cpx<T> diff = SubC(s1, s2);
      const Cpx<T> mid{A::Sub(f0.r, A::Half(sum.r)), A::Sub(f0.i, A::Half(sum.i))};
      const Cpx<T> turned{A::Scale(diff.r, sin_third), A::Scale(diff.i, sin_third)};
      Store(out, k, AddC(f0, sum));
      Store(out, k + 2 * m, Cpx<T>{A::Add(mid.r, turned.i), A::Sub(mid.i, turned.r)});
      Store(out, k + m, Cpx<T>{A::Sub(mid.r, turned.i), A::Add(mid.i, turned.r)});
    }
  }

  // kf_bfly5, its sums in the C source's order (float rounds each step): ya and yb are the
  // twiddles of a fifth and two fifths of a turn.
  void Radix5(T* out, int64_t stride, int64_t m) const {
    using A = Arith<T>;
    const Cpx<T> ya = Tw(stride * m);
    const Cpx<T> yb = Tw(2 * stride * m);
    for (int64_t u = 0; u < m; ++u) {
      const Cpx<T> s0 = DivC(Load(out, u), 5);
      Cpx<T> s[5] = {s0};
      for (int64_t q = 1; q < 5; ++q) {
        s[q] = A::Mul(DivC(Load(out, u + q * m), 5), Tw(q * u * stride));
      }
      const Cpx<T> s7 = AddC(s[1], s[4]), s10 = SubC(s[1], s[4]);
      const Cpx<T> s8 = AddC(s[2], s[3]), s9 = SubC(s[2], s[3]);
      Store(out, u, Cpx<T>{A::Add(s0.r, A::Add(s7.r, s8.r)), A::Add(s0.i, A::Add(s7.i, s8.i))});
      const Cpx<T> s5{A::Add(A::Add(s0.r, A::Scale(s7.r, ya.r)), A::Scale(s8.r, yb.r)),
                      A::Add(A::Add(s0.i, A::Scale(s7.i, ya.r)), A::Scale(s8.i, yb.r))};
      const Cpx<T> s6{A::Add(A::Scale(s10.i, ya.i), A::Scale(s9.i, yb.i)),
                      A::Sub(A::Neg(A::Scale(s10.r, ya.i)), A::Scale(s9.r, yb.i))};
      Store(out, u + m, SubC(s5, s6));
      Store(out, u + 4 * m, AddC(s5, s6));
      const Cpx<T> s11{A::Add(A::Add(s0.r, A::Scale(s7.r, yb.r)), A::Scale(s8.r, ya.r)),
                       A::Add(A::Add(s0.i, A::Scale(s7.i, yb.r)), A::Scale(s8.i, ya.r))};
      const Cpx<T> s12{A::Add(A::Neg(A::Scale(s10.i, yb.i)), A::Scale(s9.i, ya.i)),
                       A::Sub(A::Scale(s10.r, yb.i), A::Scale(s9.r, ya.i))};
      Store(out, u + 2 * m, AddC(s11, s12));
      Store(out, u + 3 * m, SubC(s11, s12));
    }
  }

  // kissfft's kf_work: `n` points of `in` every `stride` complex values into `out`, the first
  // stage of radix radices[0] over radices[0] smaller FFTs of the stages after it.
  void Run(T* out, const T* in, int64_t stride, int64_t n, const int32_t* radices) const {
    const int64_t radix = radices[0];
    const int64_t m = n / radix;
    for (int64_t j = 0; j < radix; ++j) {
      if (m == 1) {
        Store(out, j, Load(in, j * stride));
      } else {
        Run(out + 2 * j * m, in + 2 * j * stride, stride * radix, m, radices + 1);
      }
    }
    switch (radix) {
      case 2:
        return Radix2(out, stride, m);
      case 3:
        return Radix3(out, stride, m);
      case 4:
        return Radix4(out, stride, m);
      default:
        return Radix5(out, stride, m);
    }
  }
};

// kissfft's kf_factor for an n that IsRealFftLength's half allows: 4s while 4 divides what is
// left, then 2, then 3s, then 5s. (kf_factor tries odd p up to floor(sqrt(n)) and then takes
// the rest whole, which is the same list: a rest with no factor up to its square root is prime.)
struct Stages {
  int32_t radices[32] = {};  // kissfft's MAXFACTORS; n <= 2048 takes at most 11
  int32_t count = 0;
};

Stages StagesOf(int64_t n) {
  Stages s;
  int32_t p = 4;
  while (n > 1) {
    while (n % p != 0) p = p == 4 ? 2 : p == 2 ? 3 : p + 2;
    n /= p;
    s.radices[s.count++] = p;
  }
  return s;
}

template <typename T>
void ComplexFftRun(const T* twiddles, bool inverse, T* out, const T* in, int64_t n) {
  const Stages stages = StagesOf(n);
  ComplexFft<T>{twiddles, inverse}.Run(out, in, 1, n, stages.radices);
}

}  // namespace

template <typename T>
void real_fft_init(RealFftPlan<T>& plan) {
  const int64_t n = plan.fft_length / 2;
  const double sign = plan.inverse ? -1.0 : 1.0;
  for (int64_t i = 0; i < n; ++i) {
    // kissfft's order of operations: (-2 pi i) / n, then the inverse's sign.
    const double phase = -2 * kPi * static_cast<double>(i) / static_cast<double>(n);
    Store(plan.twiddles, i, Twiddle<T>(phase * sign));
  }
  for (int64_t i = 0; i < n / 2; ++i) {
    const double phase = -kPi * (static_cast<double>(i + 1) / static_cast<double>(n) + 0.5);
    Store(plan.super_twiddles, i, Twiddle<T>(phase * sign));
  }
}

template <typename T>
void rfft_apply(const RealFftPlan<T>& plan, const T* input, T* output) {
  using A = Arith<T>;
  const int64_t n = plan.fft_length / 2;
  ComplexFftRun(plan.twiddles, false, plan.work, input, n);
  const Cpx<T> dc = DivC(Load(plan.work, 0), 2);
  Store(output, 0, Cpx<T>{A::Add(dc.r, dc.i), T{0}});
  Store(output, n, Cpx<T>{A::Sub(dc.r, dc.i), T{0}});
  for (int64_t k = 1; k <= n / 2; ++k) {
    const Cpx<T> upper = Load(plan.work, n - k);
    const Cpx<T> fpk = DivC(Load(plan.work, k), 2);
    const Cpx<T> fpnk = DivC(Cpx<T>{upper.r, A::Neg(upper.i)}, 2);
    const Cpx<T> f1k = AddC(fpk, fpnk);
    const Cpx<T> tw = A::Mul(SubC(fpk, fpnk), Load(plan.super_twiddles, k - 1));
    Store(output, k, Cpx<T>{A::Half(SumOf(f1k.r, tw.r)), A::Half(SumOf(f1k.i, tw.i))});
    Store(output, n - k,
          Cpx<T>{A::Half(DifferenceOf(f1k.r, tw.r)), A::Half(DifferenceOf(tw.i, f1k.i))});
  }
}

template <typename T>
void irfft_apply(const RealFftPlan<T>& plan, const T* input, T* output) {
  using A = Arith<T>;
  const int64_t n = plan.fft_length / 2;
  const T dc = input[0];
  const T nyquist = input[2 * n];
  Store(plan.work, 0, DivC(Cpx<T>{A::Add(dc, nyquist), A::Sub(dc, nyquist)}, 2));
  for (int64_t k = 1; k <= n / 2; ++k) {
    const Cpx<T> upper = Load(input, n - k);
    const Cpx<T> fk = DivC(Load(input, k), 2);
    const Cpx<T> fnkc = DivC(Cpx<T>{upper.r, A::Neg(upper.i)}, 2);
    const Cpx<T> fek = AddC(fk, fnkc);
    const Cpx<T> fok = A::Mul(SubC(fk, fnkc), Load(plan.super_twiddles, k - 1));
    Store(plan.work, k, AddC(fek, fok));
    const Cpx<T> lower = SubC(fek, fok);
    Store(plan.work, n - k, Cpx<T>{lower.r, A::Neg(lower.i)});
  }
  ComplexFftRun(plan.twiddles, true, output, plan.work, n);
  if constexpr (std::is_same_v<T, float>) {
    const float length = static_cast<float>(plan.fft_length);
    for (int64_t i = 0; i < plan.fft_length; ++i) output[i] /= length;
  }
}

template void real_fft_init(RealFftPlan<int16_t>&);
template void real_fft_init(RealFftPlan<int32_t>&);
template void real_fft_init(RealFftPlan<float>&);
template void rfft_apply(const RealFftPlan<int16_t>&, const int16_t*, int16_t*);
template void rfft_apply(const RealFftPlan<int32_t>&, const int32_t*, int32_t*);
template void rfft_apply(const RealFftPlan<float>&, const float*, float*);
template void irfft_apply(const RealFftPlan<int16_t>&, const int16_t*, int16_t*);
template void irfft_apply(const RealFftPlan<int32_t>&, const int32_t*, int32_t*);
template void irfft_apply(const RealFftPlan<float>&, const float*, float*);

}  // namespace boardlab::runtime::kernels
