//! Statistics: median, min, max of repeats; percentiles of latency samples.

/// Median, minimum and maximum of a set of repeats.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// Median (the mean of the two middle values for an even count).
    pub median: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
}

/// Summarises `values`; `None` when empty.
pub fn summarize(values: &[f64]) -> Option<Summary> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    Some(Summary {
        median,
        min: v[0],
        max: v[n - 1],
    })
}

/// The `q`-th percentile (0–100) of sorted samples, nearest-rank; 0 when empty.
pub fn percentile_sorted<T: Copy + Into<f64>>(sorted: &[T], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q / 100.0) * sorted.len() as f64 - 1e-9).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1].into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_min_max() {
        let s = summarize(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
        assert_eq!(summarize(&[1.0, 2.0, 4.0, 3.0]).unwrap().median, 2.5);
        assert!(summarize(&[]).is_none());
    }

    #[test]
    fn percentiles() {
        let v: Vec<u32> = (1..=1000).collect();
        assert_eq!(percentile_sorted(&v, 50.0), 500.0);
        assert_eq!(percentile_sorted(&v, 99.0), 990.0);
        assert_eq!(percentile_sorted(&v, 99.9), 999.0);
        assert_eq!(percentile_sorted(&v, 100.0), 1000.0);
        assert_eq!(percentile_sorted::<u32>(&[], 50.0), 0.0);
    }
}
