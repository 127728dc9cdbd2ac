//! A configuration's keys as gate reads them: each a literal, unset, or a refusal naming the
//! file and the key — the choke point every key of a Vitest or Jest configuration goes through,
//! so what gate cannot read is never taken for unset, and the refusal says what `.gate.toml`
//! can state in its place (`stated`).

use super::literal::Lit;

/// A configuration's keys, read as literals or refused by name.
pub(super) struct Keys<'v> {
    pub value: &'v Lit,
    pub file: &'v str,
    pub dir: &'v str,
    /// Whether `value` is `file`'s own (not an inline project it lists, nor defaults): only
    /// then does a key name what `.gate.toml` can state for it.
    pub own: bool,
}

impl<'v> Keys<'v> {
    /// The value of `key`, when set and read whole; `Err` when it holds what gate cannot
    /// read, or a spread, a computed key or a value gate cannot read may set it.
    pub(super) fn known(&self, key: &str) -> Result<Option<&'v Lit>, String> {
        self.unspread(key)?;
        match self.value.get(key) {
            Some(v) if !v.is_known() => Err(format!(
                "{}: `{key}` is not a literal ({}): gate cannot tell what it holds{}",
                self.file,
                v.text(),
                self.hint(key)
            )),
            found => Ok(found),
        }
    }

    /// Whether `key` is set at all, whatever it holds: for what gate refuses when set.
    pub(super) fn set(&self, key: &str) -> Result<bool, String> {
        self.unspread(key)?;
        Ok(self.value.get(key).is_some())
    }

    /// `Err` when what gate cannot read may set `key`: `.gate.toml` can state the object
    /// holding it whole.
    fn unspread(&self, key: &str) -> Result<(), String> {
        match spread_in(self.value, key) {
            Some((holder, by)) => Err(format!(
                "{}: `{key}` may be set by {by}, which gate cannot read{}",
                self.file,
                self.hint(&holder)
            )),
            None => Ok(()),
        }
    }

    fn hint(&self, key: &str) -> String {
        if self.own {
            super::stated::hint(self.file, key)
        } else {
            String::new()
        }
    }

    /// The strings `key` holds (none when unset).
    pub(super) fn strings(&self, key: &str) -> Result<Vec<String>, String> {
        match self.known(key)? {
            Some(v) => v.strings(self.dir).map_err(|t| {
                format!(
                    "{}: `{key}` holds a value that is not a string: {t}",
                    self.file
                )
            }),
            None => Ok(Vec::new()),
        }
    }
}

/// What on the way to `key` may set it, and the key of the object holding it (`""`: the whole
/// configuration): a spread or a computed key written after any entry of the key (a later key
/// overrides what an earlier spread set, as in JavaScript), or a value gate cannot read.
fn spread_in(value: &Lit, key: &str) -> Option<(String, String)> {
    let mut at = value;
    let mut holder: Vec<&str> = Vec::new();
    for part in key.split('.') {
        match at {
            Lit::Obj(entries) => match entries.iter().rev().find(|(k, _)| k == part || k == "*") {
                Some((k, v)) if k == "*" => {
                    let by = format!("a spread or a computed key ({})", v.text());
                    return Some((holder.join("."), by));
                }
                Some((_, v)) => at = v,
                None => return None,
            },
            Lit::Unknown(text) => return Some((holder.join("."), format!("`{text}`"))),
            _ => return None,
        }
        holder.push(part);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys_of(src: &str, check: impl Fn(&Keys<'_>)) {
        let value = super::super::literal::exported(
            "vitest.config.ts",
            src.as_bytes(),
            &super::super::literal::VITEST_4,
        );
        check(&Keys {
            value: &value,
            file: "vitest.config.ts",
            dir: "",
            own: true,
        });
    }

    /// As JavaScript builds the object: a key written after a spread overrides it, one written
    /// before may be overridden by it; a value gate cannot read on the way may hold any key.
    #[test]
    fn what_a_spread_or_an_unread_value_may_set_is_refused_and_what_overrides_it_is_read() {
        keys_of(
            "export default { ...base, test: { include: ['a/**'] } };",
            |k| {
                assert!(k.strings("test.include").is_ok_and(|s| s == ["a/**"]));
                let why = k.known("resolve.alias").unwrap_err();
                assert!(
                    why.contains("a spread") && why.contains("key = \"\""),
                    "{why}"
                );
            },
        );
        keys_of(
            "export default { test: { include: ['a/**'], ...more } };",
            |k| {
                let why = k.known("test.include").unwrap_err();
                assert!(
                    why.contains("...more") && why.contains("key = \"test\""),
                    "{why}"
                );
            },
        );
        keys_of("export default { test: shared() };", |k| {
            let why = k.set("test.includeSource").unwrap_err();
            assert!(
                why.contains("`shared()`") && why.contains("key = \"test\""),
                "{why}"
            );
        });
    }
}
