//! The options pytest, unittest and Django's `manage.py test` take after `--`, read as their
//! argparse reads them, against the allow-list of each (`lang::args`). unittest and Django
//! report no test by name to gate, so an option that narrows their run (`-k`, `--tag`) is not
//! on theirs: a run narrowed to nothing would look like a pass.

use super::framework::Kind;
use crate::lang::args::{Allowed, Class, Opt, Read, Takes, find, opt, refused};

use Class::{Narrow, Order, Output, Parallel, Stricter};
use Takes::{Maybe, Nothing, Value};

/// pytest's options gate accepts (pytest 7 to 9; `-n`/`--dist`: pytest-xdist's).
pub(crate) const PYTEST: &[Opt] = &[
    opt(&["-k"], Value, Narrow),
    opt(&["-m"], Value, Narrow),
    opt(&["-x", "--exitfirst"], Nothing, Narrow),
    opt(&["--maxfail"], Value, Narrow),
    opt(&["--lf", "--last-failed"], Nothing, Narrow),
    opt(&["--lfnf", "--last-failed-no-failures"], Value, Narrow),
    opt(&["--deselect"], Value, Narrow),
    opt(&["--ignore"], Value, Narrow),
    opt(&["--ignore-glob"], Value, Narrow),
    opt(&["--ff", "--failed-first"], Nothing, Order),
    opt(&["--nf", "--new-first"], Nothing, Order),
    opt(&["--strict-markers"], Nothing, Stricter),
    opt(&["--strict-config"], Nothing, Stricter),
    opt(&["--strict"], Nothing, Stricter),
    opt(&["-W", "--pythonwarnings"], Value, Stricter),
    opt(&["-v", "--verbose"], Nothing, Output),
    opt(&["-q", "--quiet"], Nothing, Output),
    opt(&["--verbosity"], Value, Output),
    opt(&["-r", "--report-chars"], Value, Output),
    opt(&["--tb"], Value, Output),
    opt(&["-s"], Nothing, Output),
    opt(&["--capture"], Value, Output),
    opt(&["-l", "--showlocals"], Nothing, Output),
    opt(&["--no-showlocals"], Nothing, Output),
    opt(&["--full-trace"], Nothing, Output),
    opt(&["--durations"], Value, Output),
    opt(&["--durations-min"], Value, Output),
    opt(&["--no-header"], Nothing, Output),
    opt(&["--no-summary"], Nothing, Output),
    opt(&["--no-fold-skipped"], Nothing, Output),
    opt(&["--force-short-summary"], Nothing, Output),
    opt(
        &["--disable-warnings", "--disable-pytest-warnings"],
        Nothing,
        Output,
    ),
    opt(&["--color"], Value, Output),
    opt(&["--code-highlight"], Value, Output),
    opt(&["--show-capture"], Value, Output),
    opt(&["--xfail-tb"], Nothing, Output),
    opt(&["--setup-show"], Nothing, Output),
    opt(&["--doctest-report"], Value, Output),
];

/// `python -m unittest`'s options gate accepts.
pub(crate) const UNITTEST: &[Opt] = &[
    opt(&["-f", "--failfast"], Nothing, Narrow),
    opt(&["-v", "--verbose"], Nothing, Output),
    opt(&["-q", "--quiet"], Nothing, Output),
    opt(&["--locals"], Nothing, Output),
    opt(&["-b", "--buffer"], Nothing, Output),
    opt(&["-c", "--catch"], Nothing, Output),
    opt(&["--durations"], Value, Output),
];

/// Django's `manage.py test` options gate accepts.
pub(crate) const DJANGO: &[Opt] = &[
    opt(&["--failfast"], Nothing, Narrow),
    opt(&["--shuffle"], Maybe, Order),
    opt(&["-r", "--reverse"], Nothing, Order),
    opt(&["--parallel"], Maybe, Parallel),
    opt(&["-v", "--verbosity"], Value, Output),
    opt(&["--timing"], Nothing, Output),
    opt(&["--durations"], Value, Output),
    opt(&["--debug-sql", "-d"], Nothing, Output),
    opt(&["-b", "--buffer"], Nothing, Output),
    opt(&["--no-color"], Nothing, Output),
    opt(&["--force-color"], Nothing, Output),
    opt(&["--traceback"], Nothing, Output),
    opt(&["--noinput", "--no-input"], Nothing, Output),
    opt(&["--no-faulthandler"], Nothing, Output),
];

/// The allow-list of a framework's runner, and its name in a refusal.
pub(crate) fn table(kind: Kind) -> (&'static [Opt], &'static str) {
    match kind {
        Kind::Pytest => (PYTEST, "pytest"),
        Kind::Unittest => (UNITTEST, "unittest"),
        Kind::Django => (DJANGO, "Django test"),
    }
}

/// The options `args` name, read as argparse reads them (`--name=value`, `--name value`,
/// `-abc` as `-a -b -c`, `-kEXPR` as `-k EXPR`), each in `kind`'s table or the project's
/// `allowed`; the first word refused, with why. Never allowed: a word that is no option (a
/// path or id would run tests outside the selection) and what replaces the report or the
/// probe gate reads results from.
pub(crate) fn read(kind: Kind, args: &[String], allowed: &[Allowed]) -> Result<Vec<Read>, String> {
    let (table, runner) = table(kind);
    // pytest's argparse reads a word `@FILE` as that file's lines, more arguments gate never
    // sees, wherever the word stands (an option's value too).
    if let Some(word) = args.iter().find(|w| w.starts_with('@')) {
        return Err(format!(
            "runner argument `{word}`: the runner reads a word starting `@` as a file of more arguments, which gate cannot check"
        ));
    }
    let mut out = Vec::new();
    let mut words = args.iter().peekable();
    while let Some(word) = words.next() {
        if !word.starts_with('-') || word == "-" {
            return Err(format!(
                "runner argument `{word}` is not an option: gate gives the runner its tests, and a path or test id here would run tests outside the selection"
            ));
        }
        // argparse splits `--name=value` and `-k=value` at the `=`; other short words are
        // clusters.
        let split = word
            .split_once('=')
            .filter(|(n, _)| n.starts_with("--") || n.chars().count() == 2);
        let (name, attached): (&str, Option<&str>) = match split {
            Some((n, v)) => (n, Some(v)),
            None if word.starts_with("--") => (word, None),
            None => {
                // A cluster of short options: each a flag until one that takes a value, which
                // takes the rest of the word (`-vvx`, `-kcart`, `-rA`).
                let mut chars = word[1..].char_indices();
                let mut last = None;
                for (i, c) in chars.by_ref() {
                    let short = format!("-{c}");
                    let Some((takes, class)) = find(table, allowed, &short) else {
                        return Err(refused(&short, runner, "allow_args"));
                    };
                    out.push(Read {
                        name: short.clone(),
                        class,
                    });
                    if takes != Nothing {
                        let rest = &word[1 + i + c.len_utf8()..];
                        last = Some((short, takes, (!rest.is_empty()).then_some(rest)));
                        break;
                    }
                }
                if let Some((short, takes, value)) = last {
                    let value = value_of(&short, takes, value, &mut words)?;
                    own_plugin(&short, value)?;
                    stricter_only(&short, value)?;
                }
                continue;
            }
        };
        let Some((takes, class)) = find(table, allowed, name) else {
            return Err(refused(word, runner, "allow_args"));
        };
        if takes == Nothing && attached.is_some() {
            return Err(format!("runner argument `{word}`: `{name}` takes no value"));
        }
        out.push(Read {
            name: name.to_string(),
            class,
        });
        let value = value_of(name, takes, attached, &mut words)?;
        own_plugin(name, value)?;
        stricter_only(name, value)?;
    }
    Ok(out)
}

/// `-W` makes a run stricter only when it turns warnings into errors: `-W ignore` would pass
/// a test the project's own `filterwarnings = error` fails.
fn stricter_only(name: &str, value: Option<&str>) -> Result<(), String> {
    match (name, value) {
        ("-W" | "--pythonwarnings", Some(v)) if !v.starts_with("error") => Err(format!(
            "runner argument `{name} {v}`: only `{name} error…` is on the list (a warning made an error); another action could pass a test the project's own warning filters fail"
        )),
        _ => Ok(()),
    }
}

/// The options pytest reads from the environment variable `name` (`PYTEST_ADDOPTS`), word by
/// word as pytest splits them, on the same list less what narrows a run: there gate would not
/// know the run was narrowed.
pub(crate) fn read_env(name: &str, value: &str, allowed: &[Allowed]) -> Result<(), String> {
    if value.contains(['"', '\'', '\\']) {
        return Err(format!(
            "`{name}` (`{value}`) quotes its words, which gate does not read: give these options after `--`"
        ));
    }
    let words: Vec<String> = value.split_whitespace().map(str::to_string).collect();
    let read = read(Kind::Pytest, &words, allowed).map_err(|why| format!("`{name}`: {why}"))?;
    match read.iter().find(|r| r.class == Class::Narrow) {
        Some(r) => Err(format!(
            "`{name}` holds `{}`, which narrows the run where gate cannot see it: give it after `--`",
            r.name
        )),
        None => Ok(()),
    }
}

/// The value of option `name`: attached to it, else the next word (an option's name is no
/// value: argparse would stop with a usage error).
fn value_of<'a>(
    name: &str,
    takes: Takes,
    attached: Option<&'a str>,
    words: &mut std::iter::Peekable<std::slice::Iter<'a, String>>,
) -> Result<Option<&'a str>, String> {
    if takes == Nothing || attached.is_some() {
        return Ok(attached);
    }
    match words.peek() {
        Some(next) if !next.starts_with('-') => Ok(words.next().map(String::as_str)),
        _ if takes == Maybe => Ok(None),
        _ => Err(format!(
            "runner argument `{name}` takes a value and none follows it: give it one (`{name} VALUE`)"
        )),
    }
}

/// gate reads a pytest run's results from its JUnit report and its probe: an option that
/// replaces the one or turns off either is never allowed, whatever `allow_args` says.
fn own_plugin(name: &str, value: Option<&str>) -> Result<(), String> {
    let own = name.starts_with("--junitxml")
        || name.starts_with("--junit-xml")
        || (name == "-p"
            && value.is_some_and(|v| v.contains("gate_probe") || v.contains("junitxml")));
    if own {
        let arg = match value {
            Some(v) => format!("{name} {v}"),
            None => name.to_string(),
        };
        return Err(format!(
            "runner argument `{arg}`: gate reads the run's results from pytest's JUnit report and its probe, which this would replace or turn off"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn names(kind: Kind, s: &str) -> Result<Vec<String>, String> {
        read(kind, &words(s), &[]).map(|r| r.into_iter().map(|r| r.name).collect())
    }

    #[test]
    fn pytest_options_are_read_as_argparse_reads_them() {
        assert_eq!(
            names(
                Kind::Pytest,
                "-vvx -kcart -rA --tb=short --maxfail 2 -m slow"
            ),
            Ok(words("-v -v -x -k -r --tb --maxfail -m"))
        );
        assert_eq!(names(Kind::Pytest, "-k=cart"), Ok(words("-k")));
    }

    #[test]
    fn what_is_not_on_the_list_is_refused_by_name() {
        for (args, named) in [
            ("--setup-plan", "`--setup-plan`"),
            ("--co", "`--co`"),
            ("-c evil.ini", "`-c`"),
            ("--config-file=evil.ini", "`--config-file=evil.ini`"),
            ("--rootdir=/", "`--rootdir=/`"),
            ("--junit-prefix=X", "`--junit-prefix=X`"),
            ("-xc evil.ini", "`-c`"),
            ("-p no:randomly", "`-p`"),
            (
                "tests/test_other.py",
                "`tests/test_other.py` is not an option",
            ),
            ("-k", "`-k` takes a value"),
            ("-x --maxfail", "`--maxfail` takes a value"),
            ("-x=1", "`-x=1`"),
            ("--junitxml=mine.xml", "`--junitxml=mine.xml`"),
            ("--exitfirst=yes", "takes no value"),
            ("--tb @args.txt", "`@args.txt`"),
            ("-k @f", "a file of more arguments"),
            ("-W ignore", "only `-W error…`"),
            ("-Wdefault", "only `-W error…`"),
            ("--runxfail", "`--runxfail`"),
            ("-n 2", "`-n`"),
        ] {
            let why = names(Kind::Pytest, args).expect_err(args);
            assert!(why.contains(named), "{args}: {why}");
        }
    }

    #[test]
    fn an_allowed_option_passes_but_never_gates_own() {
        let allowed = [Allowed::parse("-p VALUE").unwrap()];
        let read = read(Kind::Pytest, &words("-p xdist -v"), &allowed).unwrap();
        assert_eq!(read[0].class, Class::Allowed);
        for args in ["-p no:gate_probe", "-pno:junitxml", "-p=no:gate_probe"] {
            let why = super::read(Kind::Pytest, &words(args), &allowed).expect_err(args);
            assert!(why.contains("JUnit report"), "{args}: {why}");
        }
    }

    #[test]
    fn unittest_and_django_take_no_narrowing_they_cannot_report() {
        assert!(names(Kind::Unittest, "-v -f").is_ok());
        assert!(names(Kind::Unittest, "-k cart").is_err());
        assert_eq!(
            names(Kind::Django, "--parallel --shuffle 3 -v 2"),
            Ok(words("--parallel --shuffle -v"))
        );
        assert!(names(Kind::Django, "--tag slow").is_err());
        assert!(names(Kind::Django, "--settings=evil").is_err());
    }
}
