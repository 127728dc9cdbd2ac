//! A table of strings held in one buffer, each found by where it ends: a graph's node names
//! and edge details load and store as two blocks instead of a million small allocations.

#[derive(Default, Clone)]
pub(crate) struct Strings {
    text: String,
    ends: Vec<u32>,
}

impl Strings {
    /// The table of `text` cut at `ends`, when every end is in order and on a character
    /// boundary (a stored table is checked, not trusted).
    pub(crate) fn from_parts(text: String, ends: Vec<u32>) -> Option<Strings> {
        let mut start = 0;
        for &end in &ends {
            let end = end as usize;
            if end < start || end > text.len() || !text.is_char_boundary(end) {
                return None;
            }
            start = end;
        }
        Some(Strings { text, ends })
    }

    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    pub(crate) fn ends(&self) -> &[u32] {
        &self.ends
    }

    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    pub(crate) fn get(&self, i: u32) -> &str {
        let i = i as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..self.ends[i] as usize]
    }

    pub(crate) fn push(&mut self, s: &str) -> u32 {
        self.text.push_str(s);
        self.ends.push(self.text.len() as u32);
        (self.ends.len() - 1) as u32
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.len() as u32).map(|i| self.get(i))
    }

    /// In a sorted table, the index of `s`.
    pub(crate) fn find(&self, s: &str) -> Option<u32> {
        let at = self.lower_bound(s);
        (at < self.len() && self.get(at as u32) == s).then_some(at as u32)
    }

    /// In a sorted table, the first index whose string is not below `s`.
    fn lower_bound(&self, s: &str) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.get(mid as u32) < s {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    pub(crate) fn is_sorted(&self) -> bool {
        (1..self.len() as u32).all(|i| self.get(i - 1) < self.get(i))
    }
}

/// rustc's FxHash word step (a rotate, an xor and a multiply per 8 bytes) with a finaliser:
/// several times quicker than the default SipHash on the path keys of a large tree's indexes.
/// Its weakness, keys crafted to collide, does not apply to a repository's own paths.
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher(u64);

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            self.add(u64::from_le_bytes(w.try_into().expect("8 bytes")));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(last));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.add(i.into());
    }

    fn write_u32(&mut self, i: u32) {
        self.add(i.into());
    }

    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    /// A multiply leaves the low bits — the ones a hash table indexes by — depending on the
    /// low bits of the input alone; murmur3's finaliser spreads every bit over all of them.
    fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

pub(crate) type FastMap<K, V> =
    std::collections::HashMap<K, V, std::hash::BuildHasherDefault<FxHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let mut t = Strings::default();
        for s in ["a/b.py", "a/c.py", "", "é.py"] {
            t.push(s);
        }
        assert_eq!(
            t.iter().collect::<Vec<_>>(),
            ["a/b.py", "a/c.py", "", "é.py"]
        );
        assert!(!t.is_sorted());
        let sorted = Strings::from_parts(t.text().to_string(), t.ends()[..2].to_vec()).unwrap();
        assert!(sorted.is_sorted());
        assert_eq!(sorted.find("a/c.py"), Some(1));
        assert_eq!(sorted.find("a/bb.py"), None);
        assert_eq!(sorted.lower_bound("a/bb.py"), 1);
        // An end inside a character, past the text or going back is refused.
        assert!(Strings::from_parts("é".into(), vec![1]).is_none());
        assert!(Strings::from_parts("ab".into(), vec![3]).is_none());
        assert!(Strings::from_parts("ab".into(), vec![2, 1]).is_none());
    }
}
