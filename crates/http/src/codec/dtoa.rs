//! Grisu2 double-to-digits, as RapidJSON 1.1.0 (and so Triton 2.51) does it.
//!
//! Grisu2 gives digits that read back to the same double, usually the
//! shortest ones, but not always the closest: Triton writes the f32 0.15 as
//! `0.15000000596046449` where a shortest-round-trip printer (ryu) writes
//! `0.15000000596046448`. Matching Triton's bytes needs the same algorithm,
//! the same cached powers of ten and the same rounding steps; this is
//! Loitsch's Grisu2 laid out as in RapidJSON 1.1.0's `internal/dtoa.h`.

/// A 64-bit significand and a binary exponent: `f * 2^e`.
#[derive(Clone, Copy)]
struct DiyFp {
    f: u64,
    e: i32,
}

const SIGNIFICAND_BITS: u32 = 52;
const HIDDEN_BIT: u64 = 1 << SIGNIFICAND_BITS;
const EXPONENT_BIAS: i32 = 0x3FF + SIGNIFICAND_BITS as i32;

impl DiyFp {
    fn from_f64(value: f64) -> Self {
        let bits = value.to_bits();
        let biased = ((bits >> SIGNIFICAND_BITS) & 0x7FF) as i32;
        let significand = bits & (HIDDEN_BIT - 1);
        if biased != 0 {
            DiyFp {
                f: significand + HIDDEN_BIT,
                e: biased - EXPONENT_BIAS,
            }
        } else {
            DiyFp {
                f: significand,
                e: 1 - EXPONENT_BIAS,
            }
        }
    }

    /// The product, rounded to 64 bits (half up).
    fn mul(self, rhs: DiyFp) -> DiyFp {
        let p = u128::from(self.f) * u128::from(rhs.f);
        let h = (p >> 64) as u64 + ((p >> 63) & 1) as u64;
        DiyFp {
            f: h,
            e: self.e + rhs.e + 64,
        }
    }

    fn normalize(self) -> DiyFp {
        let s = self.f.leading_zeros();
        DiyFp {
            f: self.f << s,
            e: self.e - s as i32,
        }
    }

    fn normalize_boundary(self) -> DiyFp {
        let mut res = self;
        while res.f & (HIDDEN_BIT << 1) == 0 {
            res.f <<= 1;
            res.e -= 1;
        }
        let shift = 64 - SIGNIFICAND_BITS - 2;
        DiyFp {
            f: res.f << shift,
            e: res.e - shift as i32,
        }
    }

    /// The boundaries m- and m+ halfway to the neighbouring doubles, with
    /// m+ normalized and m- on the same exponent.
    fn normalized_boundaries(self) -> (DiyFp, DiyFp) {
        let plus = DiyFp {
            f: (self.f << 1) + 1,
            e: self.e - 1,
        }
        .normalize_boundary();
        let mut minus = if self.f == HIDDEN_BIT {
            DiyFp {
                f: (self.f << 2) - 1,
                e: self.e - 2,
            }
        } else {
            DiyFp {
                f: (self.f << 1) - 1,
                e: self.e - 1,
            }
        };
        minus.f <<= minus.e - plus.e;
        minus.e = plus.e;
        (minus, plus)
    }
}

/// 10^-348, 10^-340, ..., 10^340 as normalized 64-bit significands (rounded
/// to nearest) with their binary exponents.
const CACHED_POWERS: [(u64, i16); 87] = [
    (0xfa8fd5a0081c0288, -1220), // 1e-348
    (0xbaaee17fa23ebf76, -1193), // 1e-340
    (0x8b16fb203055ac76, -1166), // 1e-332
    (0xcf42894a5dce35ea, -1140), // 1e-324
    (0x9a6bb0aa55653b2d, -1113), // 1e-316
    (0xe61acf033d1a45df, -1087), // 1e-308
    (0xab70fe17c79ac6ca, -1060), // 1e-300
    (0xff77b1fcbebcdc4f, -1034), // 1e-292
    (0xbe5691ef416bd60c, -1007), // 1e-284
    (0x8dd01fad907ffc3c, -980),  // 1e-276
    (0xd3515c2831559a83, -954),  // 1e-268
    (0x9d71ac8fada6c9b5, -927),  // 1e-260
    (0xea9c227723ee8bcb, -901),  // 1e-252
    (0xaecc49914078536d, -874),  // 1e-244
    (0x823c12795db6ce57, -847),  // 1e-236
    (0xc21094364dfb5637, -821),  // 1e-228
    (0x9096ea6f3848984f, -794),  // 1e-220
    (0xd77485cb25823ac7, -768),  // 1e-212
    (0xa086cfcd97bf97f4, -741),  // 1e-204
    (0xef340a98172aace5, -715),  // 1e-196
    (0xb23867fb2a35b28e, -688),  // 1e-188
    (0x84c8d4dfd2c63f3b, -661),  // 1e-180
    (0xc5dd44271ad3cdba, -635),  // 1e-172
    (0x936b9fcebb25c996, -608),  // 1e-164
    (0xdbac6c247d62a584, -582),  // 1e-156
    (0xa3ab66580d5fdaf6, -555),  // 1e-148
    (0xf3e2f893dec3f126, -529),  // 1e-140
    (0xb5b5ada8aaff80b8, -502),  // 1e-132
    (0x87625f056c7c4a8b, -475),  // 1e-124
    (0xc9bcff6034c13053, -449),  // 1e-116
    (0x964e858c91ba2655, -422),  // 1e-108
    (0xdff9772470297ebd, -396),  // 1e-100
    (0xa6dfbd9fb8e5b88f, -369),  // 1e-92
    (0xf8a95fcf88747d94, -343),  // 1e-84
    (0xb94470938fa89bcf, -316),  // 1e-76
    (0x8a08f0f8bf0f156b, -289),  // 1e-68
    (0xcdb02555653131b6, -263),  // 1e-60
    (0x993fe2c6d07b7fac, -236),  // 1e-52
    (0xe45c10c42a2b3b06, -210),  // 1e-44
    (0xaa242499697392d3, -183),  // 1e-36
    (0xfd87b5f28300ca0e, -157),  // 1e-28
    (0xbce5086492111aeb, -130),  // 1e-20
    (0x8cbccc096f5088cc, -103),  // 1e-12
    (0xd1b71758e219652c, -77),   // 1e-4
    (0x9c40000000000000, -50),   // 1e4
    (0xe8d4a51000000000, -24),   // 1e12
    (0xad78ebc5ac620000, 3),     // 1e20
    (0x813f3978f8940984, 30),    // 1e28
    (0xc097ce7bc90715b3, 56),    // 1e36
    (0x8f7e32ce7bea5c70, 83),    // 1e44
    (0xd5d238a4abe98068, 109),   // 1e52
    (0x9f4f2726179a2245, 136),   // 1e60
    (0xed63a231d4c4fb27, 162),   // 1e68
    (0xb0de65388cc8ada8, 189),   // 1e76
    (0x83c7088e1aab65db, 216),   // 1e84
    (0xc45d1df942711d9a, 242),   // 1e92
    (0x924d692ca61be758, 269),   // 1e100
    (0xda01ee641a708dea, 295),   // 1e108
    (0xa26da3999aef774a, 322),   // 1e116
    (0xf209787bb47d6b85, 348),   // 1e124
    (0xb454e4a179dd1877, 375),   // 1e132
    (0x865b86925b9bc5c2, 402),   // 1e140
    (0xc83553c5c8965d3d, 428),   // 1e148
    (0x952ab45cfa97a0b3, 455),   // 1e156
    (0xde469fbd99a05fe3, 481),   // 1e164
    (0xa59bc234db398c25, 508),   // 1e172
    (0xf6c69a72a3989f5c, 534),   // 1e180
    (0xb7dcbf5354e9bece, 561),   // 1e188
    (0x88fcf317f22241e2, 588),   // 1e196
    (0xcc20ce9bd35c78a5, 614),   // 1e204
    (0x98165af37b2153df, 641),   // 1e212
    (0xe2a0b5dc971f303a, 667),   // 1e220
    (0xa8d9d1535ce3b396, 694),   // 1e228
    (0xfb9b7cd9a4a7443c, 720),   // 1e236
    (0xbb764c4ca7a44410, 747),   // 1e244
    (0x8bab8eefb6409c1a, 774),   // 1e252
    (0xd01fef10a657842c, 800),   // 1e260
    (0x9b10a4e5e9913129, 827),   // 1e268
    (0xe7109bfba19c0c9d, 853),   // 1e276
    (0xac2820d9623bf429, 880),   // 1e284
    (0x80444b5e7aa7cf85, 907),   // 1e292
    (0xbf21e44003acdd2d, 933),   // 1e300
    (0x8e679c2f5e44ff8f, 960),   // 1e308
    (0xd433179d9c8cb841, 986),   // 1e316
    (0x9e19db92b4e31ba9, 1013),  // 1e324
    (0xeb96bf6ebadf77d9, 1039),  // 1e332
    (0xaf87023b9bf0ee6b, 1066),  // 1e340
];

const POW10: [u64; 20] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
    10_000_000_000,
    100_000_000_000,
    1_000_000_000_000,
    10_000_000_000_000,
    100_000_000_000_000,
    1_000_000_000_000_000,
    10_000_000_000_000_000,
    100_000_000_000_000_000,
    1_000_000_000_000_000_000,
    10_000_000_000_000_000_000,
];

/// The cached power c = 10^-K such that the product with a DiyFp of
/// exponent `e` lands in Grisu's exponent window; returns (c, K).
fn cached_power(e: i32) -> (DiyFp, i32) {
    let dk = f64::from(-61 - e) * 0.301_029_995_663_981_14 + 347.0;
    let mut k = dk as i32;
    if dk - f64::from(k) > 0.0 {
        k += 1;
    }
    let index = ((k >> 3) + 1) as usize;
    let (f, e) = CACHED_POWERS[index];
    (
        DiyFp { f, e: i32::from(e) },
        -(-348 + ((index as i32) << 3)),
    )
}

fn count_decimal_digits(n: u32) -> u32 {
    match n {
        0..=9 => 1,
        10..=99 => 2,
        100..=999 => 3,
        1_000..=9_999 => 4,
        10_000..=99_999 => 5,
        100_000..=999_999 => 6,
        1_000_000..=9_999_999 => 7,
        10_000_000..=99_999_999 => 8,
        // DigitGen never sees 10 digits.
        _ => 9,
    }
}

fn grisu_round(digits: &mut [u8], delta: u64, mut rest: u64, ten_kappa: u64, wp_w: u64) {
    let last = digits.len() - 1;
    // Unsigned arithmetic wraps, as in the C++ original.
    while rest < wp_w
        && delta.wrapping_sub(rest) >= ten_kappa
        && (rest.wrapping_add(ten_kappa) < wp_w
            || wp_w - rest > rest.wrapping_add(ten_kappa).wrapping_sub(wp_w))
    {
        digits[last] -= 1;
        rest = rest.wrapping_add(ten_kappa);
    }
}

/// Writes the digits into `buffer`, returns their count; adds the decimal
/// exponent to `k`.
fn digit_gen(w: DiyFp, mp: DiyFp, mut delta: u64, buffer: &mut [u8; 32], k: &mut i32) -> usize {
    let one_e = -mp.e;
    let one_f = 1u64 << one_e;
    let wp_w = mp.f - w.f;
    let mut p1 = (mp.f >> one_e) as u32;
    let mut p2 = mp.f & (one_f - 1);
    let mut kappa = count_decimal_digits(p1) as i32;
    let mut len = 0;

    while kappa > 0 {
        let divisor = POW10[kappa as usize - 1] as u32;
        let d = p1 / divisor;
        p1 %= divisor;
        if d != 0 || len != 0 {
            buffer[len] = b'0' + d as u8;
            len += 1;
        }
        kappa -= 1;
        let tmp = (u64::from(p1) << one_e) + p2;
        if tmp <= delta {
            *k += kappa;
            grisu_round(
                &mut buffer[..len],
                delta,
                tmp,
                POW10[kappa as usize] << one_e,
                wp_w,
            );
            return len;
        }
    }

    loop {
        p2 = p2.wrapping_mul(10);
        delta = delta.wrapping_mul(10);
        let d = (p2 >> one_e) as u8;
        if d != 0 || len != 0 {
            buffer[len] = b'0' + d;
            len += 1;
        }
        p2 &= one_f - 1;
        kappa -= 1;
        if p2 < delta {
            *k += kappa;
            // RapidJSON 1.1.0, which Triton is built with, only rounds here
            // when fewer than 9 digits were generated past the point (later
            // versions use `index < 20`); this is why Triton writes some
            // 17-digit values one unit off the closest.
            let index = (-kappa) as usize;
            let scale = if index < 9 { POW10[index] } else { 0 };
            grisu_round(
                &mut buffer[..len],
                delta,
                p2,
                one_f,
                wp_w.wrapping_mul(scale),
            );
            return len;
        }
    }
}

/// The Grisu2 digits of a finite `value > 0` and the decimal exponent `k`:
/// value ≈ digits × 10^k.
pub(crate) fn grisu2(value: f64, buffer: &mut [u8; 32]) -> (usize, i32) {
    let v = DiyFp::from_f64(value);
    let (w_m, w_p) = v.normalized_boundaries();
    let (c_mk, mut k) = cached_power(w_p.e);
    let w = v.normalize().mul(c_mk);
    let mut wp = w_p.mul(c_mk);
    let mut wm = w_m.mul(c_mk);
    wm.f += 1;
    wp.f -= 1;
    let len = digit_gen(w, wp, wp.f - wm.f, buffer, &mut k);
    (len, k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digits(value: f64) -> (String, i32) {
        let mut buffer = [0u8; 32];
        let (len, k) = grisu2(value, &mut buffer);
        (String::from_utf8(buffer[..len].to_vec()).unwrap(), k)
    }

    #[test]
    fn known_digits() {
        assert_eq!(digits(1.0), ("1".into(), 0));
        assert_eq!(digits(0.1), ("1".into(), -1));
        assert_eq!(digits(1e300), ("1".into(), 300));
        assert_eq!(digits(123.456), ("123456".into(), -3));
        // Not the closest 17 digits (ryu: ...448), as Triton writes it.
        assert_eq!(
            digits(f64::from(0.15f32)),
            ("15000000596046449".into(), -17)
        );
        assert_eq!(digits(5e-324), ("5".into(), -324));
        assert_eq!(digits(f64::MAX), ("17976931348623157".into(), 292));
    }

    #[test]
    fn digits_read_back_to_the_same_double() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..200_000 {
            // xorshift over all bit patterns of positive finite doubles
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let value = f64::from_bits(x >> 1);
            if !value.is_finite() || value == 0.0 {
                continue;
            }
            let (d, k) = digits(value);
            let text = format!("{d}e{k}");
            assert_eq!(text.parse::<f64>().unwrap(), value, "{text}");
        }
        for i in 1..100_000u32 {
            let value = f64::from(f32::from_bits(i.wrapping_mul(2_654_435_761) >> 1));
            if !value.is_finite() || value == 0.0 {
                continue;
            }
            let (d, k) = digits(value);
            assert_eq!(format!("{d}e{k}").parse::<f64>().unwrap(), value);
        }
    }
}
