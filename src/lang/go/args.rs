//! `go test`'s flags after `--` and in `GOFLAGS`, read as go's flag package reads them, against
//! the allow-list (`lang::args`). `go test` reads a value flag's next word as its value, which,
//! given last, would be the first package: a flag that takes one is written `-flag=VALUE`.

use crate::lang::args::{Allowed, Class, Opt, Read, Takes, find, opt, refused};

use Class::{Narrow, Order, Output, Parallel, Stricter};
use Takes::{Nothing, Value};

/// `go test`'s flags gate accepts, by name without the dash.
pub(crate) const GO_TEST: &[Opt] = &[
    opt(&["run"], Value, Narrow),
    opt(&["skip"], Value, Narrow),
    opt(&["short"], Nothing, Narrow),
    opt(&["failfast"], Nothing, Narrow),
    opt(&["shuffle"], Value, Order),
    opt(&["count"], Value, Parallel),
    opt(&["parallel"], Value, Parallel),
    opt(&["p"], Value, Parallel),
    opt(&["cpu"], Value, Parallel),
    opt(&["timeout"], Value, Parallel),
    opt(&["race"], Nothing, Stricter),
    opt(&["v"], Nothing, Output),
    opt(&["json"], Nothing, Output),
    opt(&["fullpath"], Nothing, Output),
    opt(&["x"], Nothing, Output),
    opt(&["work"], Nothing, Output),
    opt(&["cover"], Nothing, Output),
    opt(&["covermode"], Value, Output),
    opt(&["coverpkg"], Value, Output),
    opt(&["coverprofile"], Value, Output),
    opt(&["cpuprofile"], Value, Output),
    opt(&["memprofile"], Value, Output),
    opt(&["blockprofile"], Value, Output),
    opt(&["mutexprofile"], Value, Output),
    opt(&["trace"], Value, Output),
    opt(&["outputdir"], Value, Output),
];

/// What `GOFLAGS` may hold beyond `GO_TEST`: how this machine's go builds, which the Go
/// toolchain's identity (`go env`) already stands for in every fingerprint.
const MACHINE: &[Opt] = &[
    opt(&["mod"], Value, Output),
    opt(&["modcacherw"], Nothing, Output),
    opt(&["buildvcs"], Value, Output),
    opt(&["trimpath"], Nothing, Output),
];

/// The flags `args` name, each in `GO_TEST` or the project's `allowed` (written with its dash:
/// `-tags VALUE`); the first refused, with why: a word that is no flag (a package, or a flag's
/// value), `-args` (everything after it, the packages too, would become the test binary's), a
/// flag that takes a value without `=VALUE`.
pub(crate) fn read(args: &[String], allowed: &[Allowed]) -> Result<Vec<Read>, String> {
    let mut out = Vec::new();
    let mut words = args.iter().peekable();
    while let Some(arg) = words.next() {
        // `-run TestCart`: the value as its own word, which go reads so when another word
        // follows (given last, go would take the first package instead).
        let read = match flag(arg, GO_TEST, allowed) {
            Err(why) if why.ends_with(NEEDS_VALUE) => {
                match words.next_if(|w| !w.starts_with('-')) {
                    Some(value) => flag(&format!("{arg}={value}"), GO_TEST, allowed)?,
                    None => return Err(why),
                }
            }
            other => other?,
        };
        out.push(read);
    }
    Ok(out)
}

/// How a refusal of a value flag given without its value ends.
const NEEDS_VALUE: &str = "=VALUE`";

/// The words of `GOFLAGS` (space-separated `-flag=value`, as go splits it), each in `GO_TEST`
/// but for what narrows a run (there gate would not know the run was narrowed), the machine's
/// build settings, or `allowed`.
pub(crate) fn read_goflags(goflags: &str, allowed: &[Allowed]) -> Result<Vec<Read>, String> {
    let table: Vec<Opt> = GO_TEST
        .iter()
        .filter(|o| o.class != Class::Narrow)
        .chain(MACHINE)
        .copied()
        .collect();
    goflags
        .split_whitespace()
        .map(|word| {
            flag(word, &table, allowed).map_err(|why| format!("`GOFLAGS` (`{goflags}`): {why}"))
        })
        .collect()
}

fn flag(arg: &str, table: &[Opt], allowed: &[Allowed]) -> Result<Read, String> {
    let Some(flag) = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) else {
        return Err(format!(
            "runner argument `{arg}` is not a flag: `go test` would read it as a package or a flag's value; give a value as `-flag={arg}`"
        ));
    };
    let (name, value) = match flag.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (flag, None),
    };
    if name == "args" {
        return Err(format!(
            "runner argument `{arg}`: `go test` would pass everything after it, the selected packages too, to the test binary"
        ));
    }
    // An `allow_args` entry may spell the flag `-name` or `--name`, as go reads both.
    let found = find(table, &[], name)
        .or_else(|| find(&[], allowed, &format!("-{name}")))
        .or_else(|| find(&[], allowed, &format!("--{name}")));
    let Some((takes, class)) = found else {
        return Err(refused(arg, "go test", "[go] allow_args"));
    };
    if takes != Takes::Nothing && value.is_none() {
        return Err(format!(
            "runner argument `{arg}` would take the next word as its value: write `{arg}=VALUE`"
        ));
    }
    // A boolean flag set to false undoes it: `-v=false` after gate's `-json` drops every
    // passing test's result, `-json=false` them all.
    if takes == Takes::Nothing && class != Class::Allowed && !matches!(value, None | Some("true")) {
        return Err(format!(
            "runner argument `{arg}`: a flag on the list is given as `-{name}` (or `=true`)"
        ));
    }
    Ok(Read {
        name: format!("-{name}"),
        class,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn go_test_flags_on_the_list_pass_and_the_rest_are_refused_by_name() {
        let read = read(&words("-v --run=TestCart -count=1 -race=true"), &[]).unwrap();
        let names: Vec<&str> = read.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["-v", "-run", "-count", "-race"]);
        for (args, named) in [
            ("-n", "`-n` is not one"),
            ("-c", "`-c`"),
            ("-list=.", "`-list=.`"),
            ("-exec=true", "`-exec=true`"),
            ("-vet=off", "`-vet=off`"),
            ("-run", "write `-run=VALUE`"),
            ("TestIndex", "`TestIndex` is not a flag"),
            ("-args", "to the test binary"),
            ("-test.v", "`-test.v`"),
        ] {
            let why = super::read(&words(args), &[]).expect_err(args);
            assert!(why.contains(named), "{args}: {why}");
        }
        for entry in ["-tags VALUE", "--tags VALUE"] {
            let tags = [Allowed::parse(entry).unwrap()];
            assert_eq!(
                super::read(&words("--tags=integration"), &tags).unwrap()[0].class,
                Class::Allowed
            );
        }
        // The value as its own word, when one follows; a boolean flag is never set false.
        let read = super::read(&words("-run TestCart -v"), &[]).unwrap();
        assert_eq!(read.len(), 2, "{read:?}");
        for args in ["-run -v", "-v=false", "-json=false", "-failfast=0"] {
            assert!(super::read(&words(args), &[]).is_err(), "{args}");
        }
    }

    #[test]
    fn goflags_may_hold_the_machines_build_settings_but_not_a_run_that_runs_nothing() {
        assert!(read_goflags("-mod=mod -buildvcs=false -count=1", &[]).is_ok());
        for goflags in ["-n", "-run=Nope", "-mod=mod -c"] {
            let why = read_goflags(goflags, &[]).expect_err(goflags);
            assert!(why.starts_with("`GOFLAGS`"), "{why}");
        }
    }
}
