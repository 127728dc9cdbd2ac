//! Vitest's and Jest's options after `--`, read as their own parsers read them (cac over mri
//! for Vitest, yargs for Jest), against the allow-list of each (`lang::args`), and the options
//! they take from the environment. Both parsers read `--name=value`, `--name value`, `--no-name`
//! (the option set false), a kebab-case spelling of a camelCase name (`--test-name-pattern`),
//! and `-ab` as `-a -b`. A bare word is no option: Vitest reads it as a filter on its files and
//! Jest as another path to run, and gate gives each its files itself.

use super::config::RunnerKind;
use crate::lang::args::{Allowed, Class, Opt, Read, Takes, find, opt, refused};

use Class::{Narrow, Order, Output, Parallel, Stricter};
use Takes::{Maybe, Nothing, Value};

/// Vitest's options gate accepts (Vitest 4). Refused among the rest: `--retry` (a failing test
/// retried into a pass, as pytest's reruns are not on pytest's list), `--pool` (the VM pools run
/// the tests under other globals), `--sequence.concurrent` (a global `expect` then counts
/// another test's assertions), `--shard`, `--project`, `--exclude` (gate picks the files).
pub(crate) const VITEST: &[Opt] = &[
    opt(&["-t", "--testNamePattern"], Value, Narrow),
    opt(&["--bail"], Value, Narrow),
    opt(&["--sequence.shuffle"], Nothing, Order),
    opt(&["--sequence.shuffle.files"], Nothing, Order),
    opt(&["--sequence.shuffle.tests"], Nothing, Order),
    opt(&["--sequence.seed"], Value, Order),
    opt(&["--maxWorkers"], Value, Parallel),
    opt(&["--fileParallelism"], Nothing, Parallel),
    opt(&["--no-file-parallelism"], Nothing, Parallel),
    opt(&["--maxConcurrency"], Value, Parallel),
    opt(&["--testTimeout"], Value, Parallel),
    opt(&["--hookTimeout"], Value, Parallel),
    opt(&["--expect.requireAssertions"], Nothing, Stricter),
    opt(&["--silent"], Maybe, Output),
    opt(&["--hideSkippedTests"], Nothing, Output),
    opt(&["--no-color"], Nothing, Output),
    opt(&["--logHeapUsage"], Nothing, Output),
    opt(&["--printConsoleTrace"], Nothing, Output),
    opt(&["--expandSnapshotDiff"], Nothing, Output),
    opt(&["--includeTaskLocation"], Nothing, Output),
    opt(&["--slowTestThreshold"], Value, Output),
];

/// Jest's options gate accepts (Jest 30). yargs reads `--bail` as a boolean: `--bail=2` turns
/// it off and `--bail 2` makes `2` a path, so it is a flag here.
pub(crate) const JEST: &[Opt] = &[
    opt(&["-t", "--testNamePattern"], Value, Narrow),
    opt(&["-b", "--bail"], Nothing, Narrow),
    opt(&["--randomize"], Nothing, Order),
    opt(&["--seed"], Value, Order),
    opt(&["-i", "--runInBand"], Nothing, Parallel),
    opt(&["-w", "--maxWorkers"], Value, Parallel),
    opt(&["--maxConcurrency"], Value, Parallel),
    opt(&["--testTimeout"], Value, Parallel),
    opt(&["--ci"], Nothing, Stricter),
    opt(&["--errorOnDeprecated"], Nothing, Stricter),
    opt(&["--verbose"], Nothing, Output),
    opt(&["--silent"], Nothing, Output),
    opt(&["--color"], Nothing, Output),
    opt(&["--no-color"], Nothing, Output),
    opt(&["-e", "--expand"], Nothing, Output),
    opt(&["--noStackTrace"], Nothing, Output),
    opt(&["--logHeapUsage"], Nothing, Output),
    opt(&["--showSeed"], Nothing, Output),
    opt(&["--detectOpenHandles"], Nothing, Output),
    opt(&["--testLocationInResults"], Nothing, Output),
    opt(&["--useStderr"], Nothing, Output),
];

/// Where a refusal points a project that needs an option.
const KEY: &str = "[js] allow_args";

/// The allow-list of a runner, and its name in a refusal.
fn table(runner: RunnerKind) -> (&'static [Opt], &'static str) {
    match runner {
        RunnerKind::Vitest => (VITEST, "Vitest"),
        RunnerKind::Jest => (JEST, "Jest"),
    }
}

/// The options `args` name, each in `runner`'s table or the project's `allowed`; the first
/// word refused, with why. Never allowed: a word of three dashes (mri reads `---ui` as the
/// one-letter options `-u -i`) and what replaces the report gate reads the results from.
pub(crate) fn read(
    runner: RunnerKind,
    args: &[String],
    allowed: &[Allowed],
) -> Result<Vec<Read>, String> {
    let (table, name) = table(runner);
    let mut out = Vec::new();
    let mut words = args.iter().peekable();
    while let Some(word) = words.next() {
        let (names, attached) = match word.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (word.as_str(), None),
        };
        if names.starts_with("---") {
            return Err(refused(word, name, KEY));
        }
        if names.starts_with("--") {
            if own_report(runner, names) {
                return Err(format!(
                    "runner argument `{word}`: gate reads the run's results from {name}'s {}, which this would replace or turn off",
                    match runner {
                        RunnerKind::Vitest => "JUnit reporter",
                        RunnerKind::Jest => "JSON report",
                    }
                ));
            }
            let Some((spelled, takes, class)) = lookup(runner, table, allowed, names) else {
                return Err(refused(word, name, KEY));
            };
            out.push(Read {
                name: spelled.to_string(),
                class,
            });
            value_of(word, spelled, takes, attached, &mut words)?;
            continue;
        }
        let Some(letters) = names.strip_prefix('-').filter(|l| !l.is_empty()) else {
            return Err(format!(
                "runner argument `{word}` is not an option: gate gives {name} its test files, and {name} would read this word as another (a path or a filter on them), running tests outside the selection"
            ));
        };
        // One-letter options, `-ib` as `-i -b`: each a flag but the last, which takes the
        // value (`-t=name`, `-t name`). Both parsers read a letter as an option and `-w2` or
        // `-t.x` each its own way: only letters are read.
        if !letters.chars().all(|c| c.is_ascii_alphabetic()) {
            return Err(refused(word, name, KEY));
        }
        let last = letters.len() - 1;
        for (i, letter) in letters.char_indices() {
            let short = format!("-{letter}");
            let Some((spelled, takes, class)) = lookup(runner, table, allowed, &short) else {
                return Err(refused(&short, name, KEY));
            };
            out.push(Read {
                name: spelled.to_string(),
                class,
            });
            if i < last && takes != Nothing {
                return Err(format!(
                    "runner argument `{word}`: `{short}` takes a value, and {name} would read the letters after it as more options"
                ));
            }
            if i == last {
                value_of(word, spelled, takes, attached, &mut words)?;
            }
        }
    }
    Ok(out)
}

/// The spelling in `table` or `allowed` of the option `name` (with its dashes), as the
/// runner's parser matches names: by the key it sets.
fn lookup<'a>(
    runner: RunnerKind,
    table: &'a [Opt],
    allowed: &'a [Allowed],
    name: &str,
) -> Option<(&'a str, Takes, Class)> {
    let want = key(runner, name);
    let spelled = table
        .iter()
        .flat_map(|o| o.names.iter().copied())
        .chain(allowed.iter().map(|a| a.name.as_str()))
        .find(|n| key(runner, n) == want)?;
    find(table, allowed, spelled).map(|(takes, class)| (spelled, takes, class))
}

/// Whether the long option `name` (`no-` or not) writes or processes the report gate reads:
/// Vitest's `--reporter`, `--outputFile` (gate's own are given after the user's, but an
/// allowed option must not look as if it took effect); Jest's `--json`, `--outputFile` and
/// `--testResultsProcessor`, which rewrites the results before Jest writes them.
fn own_report(runner: RunnerKind, name: &str) -> bool {
    let key = key(runner, name);
    let key = key.strip_prefix("no-").unwrap_or(&key);
    let head = key.split('.').next().unwrap_or(key);
    match runner {
        RunnerKind::Vitest => matches!(head, "reporter" | "outputFile"),
        RunnerKind::Jest => matches!(head, "json" | "outputFile" | "testResultsProcessor"),
    }
}

/// The key `runner`'s parser sets for the option `name`: its dashes dropped (`--t` is `-t`),
/// `no-` kept (the option set false), and a kebab-case spelling turned camelCase as that parser
/// turns it.
fn key(runner: RunnerKind, name: &str) -> String {
    let bare = name.trim_start_matches('-');
    let (no, bare) = match bare.strip_prefix("no-") {
        Some(rest) => ("no-", rest),
        None => ("", bare),
    };
    let camel = match runner {
        RunnerKind::Vitest => cac_camel(bare),
        RunnerKind::Jest => yargs_camel(bare),
    };
    format!("{no}{camel}")
}

/// cac's `camelcaseOptionName`: in the part before the first `.`, each `x-y` of two lower-case
/// letters becomes `xY` (a JavaScript global replace: `a-b-c` is `aB-c`).
fn cac_camel(name: &str) -> String {
    let (head, tail) = match name.split_once('.') {
        Some((h, t)) => (h, Some(t)),
        None => (name, None),
    };
    let chars: Vec<char> = head.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let pair = chars.get(i + 1) == Some(&'-')
            && chars[i].is_ascii_lowercase()
            && chars.get(i + 2).is_some_and(char::is_ascii_lowercase);
        out.push(chars[i]);
        if pair {
            out.push(chars[i + 2].to_ascii_uppercase());
            i += 3;
        } else {
            i += 1;
        }
    }
    if let Some(tail) = tail {
        out.push('.');
        out.push_str(tail);
    }
    out
}

/// yargs-parser's camel-case expansion of a key holding a `-`: lower-cased unless it mixes
/// cases, each `-` or `_` dropped and the letter after it upper-cased. A key without `-` is
/// read as written.
fn yargs_camel(name: &str) -> String {
    if !name.contains('-') {
        return name.to_string();
    }
    let mixed = name != name.to_lowercase() && name != name.to_uppercase();
    let name = if mixed {
        name.to_string()
    } else {
        name.to_lowercase()
    };
    let mut out = String::new();
    let mut upper = false;
    for c in name.chars() {
        if matches!(c, '-' | '_') {
            upper = true;
        } else if upper {
            out.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// The value of option `name` given as `word`: attached after `=`, else the next word, which
/// both parsers take unless it starts with `-`. A flag takes none: mri would read
/// `--sequence.shuffle=x` as the filter `x`, yargs `--bail=2` as `--bail` off.
fn value_of<'a>(
    word: &str,
    name: &str,
    takes: Takes,
    attached: Option<&'a str>,
    words: &mut std::iter::Peekable<std::slice::Iter<'a, String>>,
) -> Result<(), String> {
    match (takes, attached) {
        (Nothing, Some(_)) => Err(format!("runner argument `{word}`: `{name}` takes no value")),
        // mri reads `--bail=` as `--bail` and takes the next word; yargs takes the empty value.
        (_, Some("")) => Err(format!(
            "runner argument `{word}`: give `{name}` its value after the `=`"
        )),
        (Nothing, None) | (_, Some(_)) => Ok(()),
        (Value | Maybe, None) => match words.next_if(|next| !next.starts_with('-')) {
            Some(_) => Ok(()),
            None if takes == Maybe => Ok(()),
            None => Err(format!(
                "runner argument `{name}` takes a value and none follows it: give it one (`{name} VALUE`, `{name}=VALUE`)"
            )),
        },
    }
}

/// An option a runner takes from an environment variable, when the variable holds a value it
/// acts on. Others they read change no test's outcome: `VITEST_MAX_WORKERS` spreads the run,
/// `NODE_OPTIONS` is part of the toolchain's identity, and `CI` (snapshots written or not,
/// `.only` allowed) holds with or without gate.
struct EnvOption {
    runner: RunnerKind,
    var: &'static str,
    /// The command-line option the runner then acts as if given.
    option: &'static str,
    acts: fn(&str) -> bool,
}

const ENV: &[EnvOption] = &[
    // Vitest writes every snapshot anew under any value but `none` (none written, as on CI):
    // a snapshot a test no longer matches is rewritten, and the test passes.
    EnvOption {
        runner: RunnerKind::Vitest,
        var: "UPDATE_SNAPSHOT",
        option: "--update",
        acts: |v| v != "none",
    },
    // Jest runs the tests with jest-jasmine2 instead of the configured `testRunner`.
    EnvOption {
        runner: RunnerKind::Jest,
        var: "JEST_JASMINE",
        option: "--testRunner",
        acts: |v| v == "1",
    },
];

/// The environment variables the runners take options from.
pub(crate) fn env_vars() -> impl Iterator<Item = &'static str> {
    ENV.iter().map(|e| e.var)
}

/// Why `runner` cannot run under the environment `set` gives (each variable's value, when
/// gate's caller set it), when it cannot: a variable that makes it act as an option neither on
/// its list nor in `allowed`.
pub(crate) fn read_env(
    runner: RunnerKind,
    set: &dyn Fn(&str) -> Option<String>,
    allowed: &[Allowed],
) -> Result<(), String> {
    let (table, name) = table(runner);
    for env in ENV.iter().filter(|e| e.runner == runner) {
        let Some(value) = set(env.var).filter(|v| (env.acts)(v)) else {
            continue;
        };
        if lookup(runner, table, allowed, env.option).is_none() {
            return Err(format!(
                "`{}` (`{value}`) makes {name} act as if given `{}`, which gate refuses: unset it, or set it in the project's `[env]` or list `{}` in `.gate.toml`'s `{KEY}`",
                env.var, env.option, env.option
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use RunnerKind::{Jest, Vitest};

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn names(runner: RunnerKind, s: &str) -> Result<Vec<String>, String> {
        read(runner, &words(s), &[]).map(|r| r.into_iter().map(|r| r.name).collect())
    }

    #[test]
    fn options_are_read_as_cac_and_yargs_read_them() {
        assert_eq!(
            names(
                Vitest,
                "-t=adds --test-name-pattern adds --bail 1 --max-workers=2 --sequence.seed=3 --no-file-parallelism --no-fileParallelism --silent --no-color"
            ),
            Ok(words(
                "-t --testNamePattern --bail --maxWorkers --sequence.seed --no-file-parallelism --no-file-parallelism --silent --no-color"
            ))
        );
        // `--silent`'s value is optional: taken when a word follows, not when an option does.
        assert_eq!(
            names(Vitest, "--silent passed-only --silent --bail=1"),
            Ok(words("--silent --silent --bail"))
        );
        // `--t` is `-t` to both parsers; yargs also reads `-ib` as `-i -b` and `_` in a kebab key.
        assert_eq!(names(Vitest, "--t adds"), Ok(words("-t")));
        assert_eq!(
            names(
                Jest,
                "-ib -t=x --max-workers 2 --run-in-band --test_name-pattern x --MAX-WORKERS=1"
            ),
            Ok(words(
                "-i -b -t --maxWorkers --runInBand --testNamePattern --maxWorkers"
            ))
        );
        assert_eq!(names(Jest, "-it x"), Ok(words("-i -t")));
    }

    #[test]
    fn what_is_not_on_the_list_is_refused_by_name() {
        for (runner, args, named) in [
            (Vitest, "--update", "`--update` is not one"),
            (Vitest, "-u", "`-u` is not one"),
            (Vitest, "-ut x", "`-u` is not one"),
            (Vitest, "---ui", "`---ui`"),
            (Vitest, "--config x", "`--config`"),
            (Vitest, "--reporter=json", "`--reporter=json`"),
            (Vitest, "--retry 2", "`--retry`"),
            (Vitest, "--pool=threads", "`--pool=threads`"),
            (Vitest, "--passWithNoTests", "`--passWithNoTests`"),
            (Vitest, "--pass-with-no-tests", "`--pass-with-no-tests`"),
            (Vitest, "--no-isolate", "`--no-isolate`"),
            (Vitest, "--sequence.concurrent", "`--sequence.concurrent`"),
            (Vitest, "foo.test.ts", "`foo.test.ts` is not an option"),
            (Vitest, "-", "`-` is not an option"),
            (Vitest, "--bail", "`--bail` takes a value"),
            (Vitest, "-t --bail 1", "`-t` takes a value"),
            (Vitest, "--bail=", "after the `=`"),
            (Vitest, "-tb 1", "`-t` takes a value, and"),
            (Vitest, "--sequence.shuffle=false", "takes no value"),
            (Vitest, "--no-color=1", "takes no value"),
            (Vitest, "--Test-Name-Pattern x", "`--Test-Name-Pattern`"),
            (Jest, "--bail 1", "`1` is not an option"),
            (Jest, "--bail=2", "takes no value"),
            (Jest, "-w2", "`-w2`"),
            (Jest, "-tfoo", "`-t` takes a value, and Jest would read"),
            (Jest, "--updateSnapshot", "`--updateSnapshot`"),
            (Jest, "--update-snapshot", "`--update-snapshot`"),
            (Jest, "--json", "`--json`"),
            (Jest, "--outputFile=x", "`--outputFile=x`"),
            (Jest, "--no-ci", "`--no-ci`"),
            (Jest, "--test_name_pattern x", "`--test_name_pattern`"),
            (Jest, "spec/a.spec.js", "is not an option"),
        ] {
            let why = names(runner, args).expect_err(args);
            assert!(why.contains(named), "{args}: {why}");
        }
    }

    #[test]
    fn an_allowed_option_passes_in_any_spelling_its_parser_reads() {
        let allowed = [
            Allowed::parse("--update").unwrap(),
            Allowed::parse("--passWithNoTests").unwrap(),
            Allowed::parse("--config VALUE").unwrap(),
        ];
        let read = read(
            Vitest,
            &words("-t x --pass-with-no-tests --config=x --update"),
            &allowed,
        )
        .unwrap();
        let classes: Vec<Class> = read.iter().map(|r| r.class).collect();
        assert_eq!(
            classes,
            [Narrow, Class::Allowed, Class::Allowed, Class::Allowed]
        );
        // An allowed flag takes no value; `-u` is another name gate does not know is `--update`.
        assert!(super::read(Vitest, &words("--update=all"), &allowed).is_err());
        assert!(super::read(Vitest, &words("-u"), &allowed).is_err());
        // What writes the report gate reads, never.
        let own = [
            Allowed::parse("--reporter VALUE").unwrap(),
            Allowed::parse("--outputFile VALUE").unwrap(),
            Allowed::parse("--json").unwrap(),
            Allowed::parse("--testResultsProcessor VALUE").unwrap(),
        ];
        for (runner, args) in [
            (Vitest, "--reporter=json"),
            (Vitest, "--output-file.junit=x"),
            (Jest, "--no-json"),
            (Jest, "--output-file x"),
            (Jest, "--testResultsProcessor=./forge.js"),
        ] {
            let why = super::read(runner, &words(args), &own).expect_err(args);
            assert!(
                why.contains("gate reads the run's results"),
                "{args}: {why}"
            );
        }
    }

    #[test]
    fn an_environment_variable_that_acts_as_a_refused_option_is_refused() {
        let set = |pairs: &'static [(&'static str, &'static str)]| {
            move |var: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == var)
                    .map(|(_, v)| v.to_string())
            }
        };
        let all = set(&[("UPDATE_SNAPSHOT", "all"), ("JEST_JASMINE", "1")]);
        let why = read_env(Vitest, &all, &[]).unwrap_err();
        assert!(why.starts_with("`UPDATE_SNAPSHOT` (`all`)"), "{why}");
        assert!(
            read_env(Jest, &all, &[])
                .unwrap_err()
                .contains("`--testRunner`")
        );
        // `none` writes no snapshot, `0` is not Jest's `1`; an allowed option is let through.
        let harmless = set(&[("UPDATE_SNAPSHOT", "none"), ("JEST_JASMINE", "0")]);
        assert!(read_env(Vitest, &harmless, &[]).is_ok());
        assert!(read_env(Jest, &harmless, &[]).is_ok());
        let update = [Allowed::parse("--update VALUE").unwrap()];
        assert!(read_env(Vitest, &all, &update).is_ok());
    }

    #[test]
    fn the_parsers_keys_are_read_as_theirs() {
        assert_eq!(cac_camel("hide-skipped-tests"), "hideSkippedTests");
        assert_eq!(cac_camel("a-b-c"), "aB-c");
        assert_eq!(cac_camel("sequence.shuffle-x"), "sequence.shuffle-x");
        assert_eq!(yargs_camel("MAX-WORKERS"), "maxWorkers");
        assert_eq!(yargs_camel("test_name"), "test_name");
        assert_eq!(yargs_camel("Test-Name"), "TestName");
    }
}
