//! The user's runner arguments (`gate … -- ARGS`) read against an allow-list. A runner option
//! can make a run that ran nothing look like a pass (`--setup-plan`, `go test -n`), move the
//! ids its results are reported under (`--rootdir`, `--junit-prefix`) or bring in a
//! configuration that does either (`-c FILE`): what may pass is what gate knows only narrows
//! a run, orders it, spreads it over processes or changes its output. Everything else is
//! refused by name unless the project's `.gate.toml` allows it (`allow_args`), so a new
//! option of a runner is refused until someone has read what it does.

/// What an accepted option does to a run: its class in the user guide's table (its name in
/// lower case).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Class {
    /// Runs fewer of the selected tests (`-k`, `-x`, `-run=`); a run narrowed to nothing is
    /// no pass (exit 13).
    Narrow,
    /// Changes the order the tests run in.
    Order,
    /// Spreads the same tests over processes or repeats them, or bounds their time.
    Parallel,
    /// Makes a run stricter: more checks, a warning an error; never fewer tests.
    Stricter,
    /// Changes what is printed or written beside the run, not what runs.
    Output,
    /// Named by the project's `allow_args`: gate does not know what it does.
    Allowed,
}

/// Whether an option takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Takes {
    Nothing,
    Value,
    /// argparse's `nargs='?'`: the next word is its value unless it is an option.
    Maybe,
}

/// An option gate accepts: its spellings, whether it takes a value, its class.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Opt {
    pub names: &'static [&'static str],
    pub takes: Takes,
    pub class: Class,
}

/// An entry of a runner's table.
pub(crate) const fn opt(names: &'static [&'static str], takes: Takes, class: Class) -> Opt {
    Opt {
        names,
        takes,
        class,
    }
}

/// One option of a project's `allow_args`: `NAME`, or `NAME VALUE` when it takes a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Allowed {
    pub name: String,
    pub takes_value: bool,
}

impl Allowed {
    /// `"--timeout VALUE"` or `"--no-cov"`, as `.gate.toml` writes it; why not, when not.
    pub(crate) fn parse(entry: &str) -> Result<Allowed, String> {
        let words: Vec<&str> = entry.split_whitespace().collect();
        let (name, takes_value) = match words.as_slice() {
            [name] => (*name, false),
            [name, "VALUE"] => (*name, true),
            _ => {
                return Err(format!(
                    "`{entry}` is not `NAME` or `NAME VALUE` (an option, and `VALUE` when it takes one)"
                ));
            }
        };
        let bare = name.trim_start_matches('-');
        if !name.starts_with('-')
            || bare.is_empty()
            || name.contains('=')
            || !bare
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            return Err(format!(
                "`{name}` is not an option name (`-x`, `--name`, `-name` for go test)"
            ));
        }
        Ok(Allowed {
            name: name.to_string(),
            takes_value,
        })
    }
}

/// An option the arguments named, as read: its name, its class.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Read {
    pub name: String,
    pub class: Class,
}

/// Why an argument is refused: one line naming it.
pub(crate) fn refused(arg: &str, runner: &str, key: &str) -> String {
    format!(
        "runner argument `{arg}` is not one gate knows to only narrow, order or spread a {runner} run or change its output: refused (a project that needs it lists it in `.gate.toml`'s `{key}`)"
    )
}

/// The option named `name` among `table` and the project's `allowed`.
pub(crate) fn find(table: &[Opt], allowed: &[Allowed], name: &str) -> Option<(Takes, Class)> {
    table
        .iter()
        .find(|o| o.names.contains(&name))
        .map(|o| (o.takes, o.class))
        .or_else(|| {
            allowed.iter().find(|a| a.name == name).map(|a| {
                let takes = if a.takes_value {
                    Takes::Value
                } else {
                    Takes::Nothing
                };
                (takes, Class::Allowed)
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    const PAGE: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/src/inputs.md"));

    /// (name, takes, class) of each option a runner's table in the user guide lists.
    fn documented(runner: &str) -> BTreeSet<(String, String, String)> {
        let start = PAGE
            .find(&format!("#### {runner}"))
            .unwrap_or_else(|| panic!("inputs.md has `#### {runner}`"));
        let section = &PAGE[start..];
        let end = section[5..].find("\n#").map_or(section.len(), |e| e + 5);
        let mut out = BTreeSet::new();
        for row in section[..end].lines().filter(|l| l.starts_with("| ")) {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            let (class, options) = (cells[1], cells[2]);
            for span in options.split('`').skip(1).step_by(2) {
                let (name, takes) = if let Some(n) = span.strip_suffix(" [VALUE]") {
                    (n, "maybe")
                } else if let Some(n) = span
                    .strip_suffix("=VALUE")
                    .or_else(|| span.strip_suffix(" VALUE"))
                {
                    (n, "value")
                } else {
                    (span, "nothing")
                };
                out.insert((name.to_string(), takes.to_string(), class.to_string()));
            }
        }
        out
    }

    fn coded(table: &[Opt], dash: &str) -> BTreeSet<(String, String, String)> {
        let mut out = BTreeSet::new();
        for opt in table {
            let takes = match opt.takes {
                Takes::Nothing => "nothing",
                Takes::Value => "value",
                Takes::Maybe => "maybe",
            };
            for name in opt.names {
                let class = format!("{:?}", opt.class).to_lowercase();
                out.insert((format!("{dash}{name}"), takes.into(), class));
            }
        }
        out
    }

    /// The user guide's allow-list tables are the code's, both ways.
    #[test]
    fn the_documented_allow_lists_are_the_codes() {
        use crate::lang::go::args::GO_TEST;
        use crate::lang::js::args::{JEST, VITEST};
        use crate::lang::python::args::{DJANGO, PYTEST, UNITTEST};
        for (runner, table, dash) in [
            ("pytest", PYTEST, ""),
            ("unittest", UNITTEST, ""),
            ("Django", DJANGO, ""),
            ("go test", GO_TEST, "-"),
            ("Vitest", VITEST, ""),
            ("Jest", JEST, ""),
        ] {
            assert_eq!(documented(runner), coded(table, dash), "{runner}");
        }
    }

    #[test]
    fn an_allowed_entry_is_a_name_and_maybe_value() {
        assert_eq!(
            Allowed::parse("--timeout VALUE"),
            Ok(Allowed {
                name: "--timeout".into(),
                takes_value: true
            })
        );
        assert_eq!(
            Allowed::parse("-p").map(|a| a.takes_value),
            Ok(false),
            "a flag"
        );
        for bad in [
            "",
            "timeout",
            "--timeout=3",
            "--timeout 3",
            "-- VALUE",
            "--a b c",
            "--x;rm",
        ] {
            assert!(Allowed::parse(bad).is_err(), "{bad:?}");
        }
    }
}
