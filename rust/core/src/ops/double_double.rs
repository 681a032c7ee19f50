//! Double-double numbers (an unevaluated sum `hi + lo` of two f64, about
//! 106 bits): the alternating power series of the Bessel and Airy
//! functions cancel terms far larger than their sum, which plain f64 would
//! leave with only a few correct digits.

/// `hi + lo` with |lo| at most half an ulp of `hi`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Dd {
    pub(super) hi: f64,
    lo: f64,
}

/// `a + b` exactly, when |a| >= |b|.
fn quick_two_sum(a: f64, b: f64) -> Dd {
    let hi = a + b;
    Dd {
        hi,
        lo: b - (hi - a),
    }
}

/// `a + b` exactly (Knuth's two-sum).
fn two_sum(a: f64, b: f64) -> Dd {
    let hi = a + b;
    let bb = hi - a;
    Dd {
        hi,
        lo: (a - (hi - bb)) + (b - bb),
    }
}

impl Dd {
    pub(super) const fn new(hi: f64, lo: f64) -> Self {
        Dd { hi, lo }
    }

    pub(super) const fn from_f64(x: f64) -> Self {
        Dd { hi: x, lo: 0.0 }
    }

    /// `a * b` exactly.
    pub(super) fn product(a: f64, b: f64) -> Self {
        let hi = a * b;
        Dd {
            hi,
            lo: a.mul_add(b, -hi),
        }
    }

    pub(super) fn add(self, o: Dd) -> Dd {
        let s = two_sum(self.hi, o.hi);
        let t = two_sum(self.lo, o.lo);
        let u = quick_two_sum(s.hi, s.lo + t.hi);
        quick_two_sum(u.hi, u.lo + t.lo)
    }

    pub(super) fn sub(self, o: Dd) -> Dd {
        self.add(Dd {
            hi: -o.hi,
            lo: -o.lo,
        })
    }

    pub(super) fn mul(self, o: Dd) -> Dd {
        let p = Dd::product(self.hi, o.hi);
        quick_two_sum(p.hi, p.lo + (self.hi * o.lo + self.lo * o.hi))
    }

    pub(super) fn div_f64(self, d: f64) -> Dd {
        let q = self.hi / d;
        let p = Dd::product(q, d);
        // `self.hi - p.hi` is exact: q * d is within an ulp of self.hi.
        let rest = ((self.hi - p.hi) - p.lo + self.lo) / d;
        quick_two_sum(q, rest)
    }

    pub(super) fn to_f64(self) -> f64 {
        self.hi + self.lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_bits_f64_drops() {
        // (1 + 2^-60) - 1 survives, and 1/3 * 3 - 1 is ~2^-106, not 0 or 2^-53.
        let one = Dd::from_f64(1.0);
        let tiny = one.add(Dd::from_f64(2f64.powi(-60))).sub(one);
        assert_eq!(tiny.to_f64(), 2f64.powi(-60));
        let third = one.div_f64(3.0);
        let err = third.mul(Dd::from_f64(3.0)).sub(one).to_f64();
        assert!(err.abs() < 1e-31, "{err}");
        let sq = Dd::product(1.0 + 2f64.powi(-30), 1.0 + 2f64.powi(-30));
        assert_eq!(sq.sub(one).to_f64(), 2f64.powi(-29) + 2f64.powi(-60));
        assert_eq!(
            Dd::new(1.0, 2f64.powi(-80)).sub(one).to_f64(),
            2f64.powi(-80)
        );
    }
}
