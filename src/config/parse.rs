//! `.gate.toml`'s text → `Config`: every value checked and compiled once (globs, regexes, the
//! runner's argv, the steps), each mistake one error naming the key and line.

use super::raw::{Argv, RawConfig, RawStep, spread};
use super::rules::{
    AFFECTED_TESTS, AlwaysRun, DependsRule, Loads, Matcher, Reference, Step, StepRun,
};
use super::{Config, DEFAULT_INERT, DEFAULT_WHOLE_SUITE, glob, line_of, root};
use crate::error::{Error, Result};
use crate::lang::python::pytest_ini::one_line;
use globset::GlobSetBuilder;
use toml::Spanned;

pub(super) fn parse(file: Option<&str>, text: &str) -> Result<Config> {
    let p = Parser {
        path: file.unwrap_or(super::FILE),
        text,
    };
    let raw: RawConfig = toml::from_str(text).map_err(|e| {
        let at = e
            .span()
            .map(|s| format!("line {}: ", line_of(text, s.start)))
            .unwrap_or_default();
        p.err(format!("{at}{}", one_line(e.message())))
    })?;
    let roots_line = raw
        .python
        .roots
        .as_ref()
        .map_or(0, |r| line_of(text, r.span().start));
    let inert_defaults: &[&str] = if raw.inert_defaults {
        DEFAULT_INERT
    } else {
        &[]
    };
    let (whole_suite, whole_suite_any) =
        p.whole_suite(raw.whole_suite_defaults, raw.whole_suite)?;
    Ok(Config {
        digest: super::digest(text),
        always_run: p.always_run(raw.always_run)?,
        known_flaky: p.matcher("known_flaky", raw.known_flaky, &[])?,
        depends: p.depends(raw.depends)?,
        inert: p.matcher("inert", raw.inert, inert_defaults)?,
        whole_suite,
        whole_suite_any,
        named_full: raw.named_full,
        max_depth: raw.max_depth,
        audit_rate: p.audit_rate(raw.audit_rate)?,
        fallback: raw.fallback,
        runner: p.runner(raw.runner)?,
        env: raw.env,
        python_roots_line: roots_line,
        python_roots: raw.python.roots.map(|r| p.roots(r)).transpose()?,
        python_framework: raw.python.framework,
        go_flags: raw.go.flags,
        python_allow_args: p.allow_args("python.allow_args", raw.python.allow_args)?,
        go_allow_args: p.allow_args("go.allow_args", raw.go.allow_args)?,
        js_allow_args: p.allow_args("js.allow_args", raw.js.allow_args)?,
        stated: p.stated(raw.js.stated)?,
        history: p.history(raw.history)?,
        ledger: p.ledger(raw.ledger)?,
        base_branch: raw.base_branch,
        steps: p.steps(raw.step)?,
        references: p.references(raw.reference)?,
        loads: p.loads(raw.loads)?,
    })
}

/// The text being parsed, for error lines.
struct Parser<'t> {
    path: &'t str,
    text: &'t str,
}

impl Parser<'_> {
    fn err(&self, message: String) -> Error {
        Error::config(self.path, message)
    }

    fn line(&self, span: std::ops::Range<usize>) -> usize {
        line_of(self.text, span.start)
    }

    /// Globs with `!` excludes; `extra` are built-in ones (line 0: not shown in `text`).
    fn matcher(&self, key: &str, items: Vec<Spanned<String>>, extra: &[&str]) -> Result<Matcher> {
        let mut include = GlobSetBuilder::new();
        let mut exclude = GlobSetBuilder::new();
        let mut shown: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        let written = items
            .into_iter()
            .map(|s| (self.line(s.span()), s.into_inner()));
        for (line, pattern) in extra.iter().map(|s| (0, s.to_string())).chain(written) {
            let (target, pat) = match pattern.strip_prefix('!') {
                Some(rest) => (&mut exclude, rest),
                None => (&mut include, pattern.as_str()),
            };
            target.add(glob(pat).map_err(|e| {
                self.err(format!("line {line}: `{key}`: bad glob `{pattern}`: {e}"))
            })?);
            if line > 0 {
                shown.push(pattern);
            }
        }
        let build = |b: GlobSetBuilder| b.build().map_err(|e| self.err(format!("`{key}`: {e}")));
        Ok(Matcher {
            include: build(include)?,
            exclude: build(exclude)?,
            text: shown.join(", "),
        })
    }

    fn history(&self, raw: super::raw::RawHistory) -> Result<super::History> {
        let window_days = match raw.window {
            None => super::DEFAULT_WINDOW_DAYS,
            Some(w) => {
                let line = self.line(w.span());
                let text = w.into_inner();
                let days = humantime::parse_duration(&text)
                    .map(|d| d.as_secs() / 86_400)
                    .map_err(|e| {
                        self.err(format!("line {line}: `[history] window`: `{text}`: {e}"))
                    })?;
                if days == 0 {
                    return Err(self.err(format!(
                        "line {line}: `[history] window`: `{text}` is under a day"
                    )));
                }
                days
            }
        };
        Ok(super::History {
            record: raw.record,
            url: raw.url,
            signals: raw.signals,
            window_days,
        })
    }

    /// `[ledger]`: each `env` entry must be a variable's name, as a shell would take it.
    fn audit_rate(&self, raw: Option<Spanned<f64>>) -> Result<f64> {
        let Some(rate) = raw else { return Ok(0.0) };
        let line = self.line(rate.span());
        let rate = rate.into_inner();
        if !(0.0..=1.0).contains(&rate) {
            return Err(self.err(format!(
                "line {line}: `audit_rate`: {rate} is not a fraction from 0 to 1"
            )));
        }
        Ok(rate)
    }

    fn ledger(&self, raw: super::raw::RawLedger) -> Result<super::Ledger> {
        let mut env = Vec::new();
        for name in raw.env {
            let line = self.line(name.span());
            let name = name.into_inner();
            let ok = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ok {
                return Err(self.err(format!(
                    "line {line}: `[ledger] env`: `{name}` is not a variable name (letters, digits and `_`, not starting with a digit)"
                )));
            }
            env.push(name);
        }
        Ok(super::Ledger {
            enabled: raw.enabled,
            trust: raw.trust,
            env,
        })
    }

    fn always_run(&self, entries: Vec<Spanned<String>>) -> Result<Vec<AlwaysRun>> {
        entries
            .into_iter()
            .map(|entry| {
                let line = self.line(entry.span());
                let entry = entry.into_inner();
                let (target, name) = match entry.split_once("::") {
                    Some((t, n)) => (t, (n != "*").then(|| n.to_string())),
                    None => (entry.as_str(), None),
                };
                // `tests.test_health`: a dotted module id names a file, wherever it is.
                let dotted =
                    (!target.contains('/') && !target.ends_with(".py") && target.contains('.'))
                        .then(|| format!("{}.py", target.replace('.', "/")));
                let pattern = match &dotted {
                    Some(file) => format!("**/{file}"),
                    None => target.to_string(),
                };
                let matcher = glob(&pattern)
                    .map_err(|e| {
                        self.err(format!(
                            "line {line}: `always_run`: bad glob `{entry}`: {e}"
                        ))
                    })?
                    .compile_matcher();
                Ok(AlwaysRun {
                    entry,
                    matcher,
                    dotted,
                    name,
                })
            })
            .collect()
    }

    fn depends(&self, rules: Vec<super::raw::RawDepends>) -> Result<Vec<DependsRule>> {
        rules
            .into_iter()
            .enumerate()
            .map(|(i, rule)| {
                Ok(DependsRule {
                    index: i + 1,
                    tests: self.matcher("depends.tests", spread(rule.tests), &[])?,
                    on: self.matcher("depends.on", spread(rule.on), &[])?,
                })
            })
            .collect()
    }

    fn whole_suite(
        &self,
        defaults: bool,
        entries: Vec<super::raw::RawWholeSuite>,
    ) -> Result<(super::WholeSuite, globset::GlobSet)> {
        let mut out = Vec::new();
        let mut any = GlobSetBuilder::new();
        if defaults {
            let languages = crate::lang::LANGUAGES.iter().flat_map(|l| l.whole_suite());
            for (pattern, reason) in DEFAULT_WHOLE_SUITE.iter().chain(languages) {
                let g = glob(pattern).expect("built-in glob");
                out.push((g.compile_matcher(), reason.to_string(), true));
                any.add(g);
            }
        }
        for entry in entries {
            for on in spread(entry.on) {
                let line = self.line(on.span());
                let g = glob(on.get_ref()).map_err(|e| {
                    self.err(format!(
                        "line {line}: `whole_suite.on`: bad glob `{}`: {e}",
                        on.get_ref()
                    ))
                })?;
                out.push((g.compile_matcher(), entry.reason.clone(), false));
                any.add(g);
            }
        }
        let any = any
            .build()
            .map_err(|e| self.err(format!("`whole_suite`: {e}")))?;
        Ok((out, any))
    }

    fn runner(&self, runner: Option<Spanned<Argv>>) -> Result<Option<Vec<String>>> {
        let Some(spanned) = runner else {
            return Ok(None);
        };
        let line = self.line(spanned.span());
        let argv: Vec<String> = match spanned.into_inner() {
            Argv::Line(s) => s.split_whitespace().map(str::to_string).collect(),
            Argv::List(v) => v,
        };
        if argv.is_empty() {
            return Err(self.err(format!("line {line}: `runner` is empty")));
        }
        Ok(Some(argv))
    }

    /// Each entry of an `allow_args` list read (`NAME` or `NAME VALUE`).
    fn allow_args(
        &self,
        key: &str,
        entries: Option<Spanned<Vec<String>>>,
    ) -> Result<Vec<crate::lang::args::Allowed>> {
        let Some(entries) = entries else {
            return Ok(Vec::new());
        };
        let line = self.line(entries.span());
        entries
            .into_inner()
            .iter()
            .map(|e| {
                crate::lang::args::Allowed::parse(e)
                    .map_err(|why| self.err(format!("line {line}: `{key}`: {why}")))
            })
            .collect()
    }

    /// `[[js.stated]]`: each entry's file a configuration gate reads, its key one gate reads
    /// there and its value of the type that key takes, checked now: a wrong one would
    /// otherwise surface as a refusal of every change, far from the line that caused it.
    fn stated(&self, raw: Vec<super::raw::RawStated>) -> Result<crate::lang::Stated> {
        use crate::lang::js::stated::{Wrong, check};
        let mut out = crate::lang::Stated::default();
        let mut seen = std::collections::BTreeSet::new();
        for entry in raw {
            let (file_line, key_line) = (self.line(entry.file.span()), self.line(entry.key.span()));
            let line = self.line(entry.value.span());
            let at =
                |line: usize, why: String| self.err(format!("line {line}: `js.stated`: {why}"));
            let file = stated_file(entry.file.get_ref()).map_err(|why| at(file_line, why))?;
            let key = entry.key.into_inner();
            let value = json_of(entry.value.into_inner()).map_err(|why| at(line, why))?;
            check(&file, &key, &value).map_err(|e| match e {
                Wrong::File(why) => at(file_line, why),
                Wrong::Key(why) => at(key_line, why),
                Wrong::Value(why) => at(line, why),
            })?;
            if !seen.insert((file.clone(), key.clone())) {
                return Err(at(key_line, format!("`{key}` of {file} is stated twice")));
            }
            let line = file_line;
            out.add(
                "js",
                crate::lang::StatedValue {
                    file,
                    key,
                    value,
                    line,
                },
            );
        }
        Ok(out)
    }

    fn roots(&self, roots: Spanned<Vec<String>>) -> Result<Vec<String>> {
        let line = self.line(roots.span());
        roots
            .into_inner()
            .into_iter()
            .map(|r| {
                root(&r)
                    .map_err(|why| self.err(format!("line {line}: `python.roots`: `{r}` {why}")))
            })
            .collect()
    }

    /// The steps in order; the built-in one goes last unless placed.
    fn steps(&self, raw: Vec<RawStep>) -> Result<Vec<Step>> {
        let mut steps: Vec<Step> = Vec::new();
        for raw_step in raw {
            let line = self.line(raw_step.name.span());
            let name = raw_step.name.into_inner();
            if name.trim().is_empty() {
                return Err(self.err(format!("line {line}: `step.name` is empty")));
            }
            if steps.iter().any(|s| s.name == name) {
                return Err(self.err(format!("line {line}: step `{name}` is defined twice")));
            }
            let run = self.step_run(line, &name, raw_step.run.map(Spanned::into_inner))?;
            let on = match raw_step.on {
                Some(on) => Some(self.matcher("step.on", spread(on), &[])?),
                None => None,
            };
            steps.push(Step {
                name,
                run,
                on,
                when: raw_step.when,
            });
        }
        if !steps.iter().any(|s| s.name == AFFECTED_TESTS) {
            steps.push(Step::affected_tests());
        }
        Ok(steps)
    }

    fn step_run(&self, line: usize, name: &str, run: Option<Argv>) -> Result<StepRun> {
        match (name == AFFECTED_TESTS, run) {
            (true, None) => Ok(StepRun::AffectedTests),
            (true, Some(_)) => Err(self.err(format!(
                "line {line}: step `{AFFECTED_TESTS}` is built in and takes no `run`"
            ))),
            (false, None) => Err(self.err(format!("line {line}: step `{name}` has no `run`"))),
            (false, Some(Argv::List(argv))) if !argv.is_empty() => Ok(StepRun::Argv(argv)),
            (false, Some(Argv::Line(text))) if !text.trim().is_empty() => Ok(StepRun::Shell(text)),
            (false, Some(_)) => {
                Err(self.err(format!("line {line}: step `{name}` has an empty `run`")))
            }
        }
    }

    fn references(&self, raw: Vec<super::raw::RawReference>) -> Result<Vec<Reference>> {
        let mut out = Vec::new();
        for (i, raw_ref) in raw.into_iter().enumerate() {
            let line = self.line(raw_ref.pattern.span());
            let pattern = regex::Regex::new(raw_ref.pattern.get_ref()).map_err(|e| {
                self.err(format!(
                    "line {line}: `reference.pattern`: {}",
                    one_line(&e.to_string())
                ))
            })?;
            if !pattern.capture_names().any(|n| n == Some("path")) {
                return Err(self.err(format!(
                    "line {line}: `reference.pattern` has no `(?P<path>…)` group naming the path"
                )));
            }
            out.push(Reference {
                index: i + 1,
                files: self.matcher("reference.files", spread(raw_ref.files), &[])?,
                pattern,
                relative_to: raw_ref.relative_to,
            });
        }
        Ok(out)
    }

    fn loads(&self, raw: Vec<super::raw::RawLoads>) -> Result<Vec<Loads>> {
        raw.into_iter()
            .enumerate()
            .map(|(i, rule)| {
                Ok(Loads {
                    index: i + 1,
                    file: self.matcher("loads.file", spread(rule.file), &[])?,
                    modules: self.matcher("loads.modules", spread(rule.modules), &[])?,
                })
            })
            .collect()
    }
}

/// A stated file as a tree path: relative, inside the repository.
fn stated_file(raw: &str) -> std::result::Result<String, String> {
    let path = crate::path::normalize(raw);
    if raw.starts_with('/') || path == ".." || path.starts_with("../") || path.is_empty() {
        return Err(format!(
            "file `{raw}` is not a path of the repository (relative, inside it)"
        ));
    }
    Ok(path)
}

/// A stated value as JSON, the form configuration values are read in (a JSON configuration's
/// own, and what a literal reads as): TOML's date has no counterpart in a configuration.
pub(super) fn json_of(value: toml::Value) -> std::result::Result<serde_json::Value, String> {
    use serde_json::Value as Json;
    Ok(match value {
        toml::Value::String(s) => Json::String(s),
        toml::Value::Integer(i) => Json::from(i),
        toml::Value::Float(f) => serde_json::Number::from_f64(f)
            .map(Json::Number)
            .ok_or_else(|| format!("`{f}` is no number a configuration holds"))?,
        toml::Value::Boolean(b) => Json::Bool(b),
        toml::Value::Datetime(d) => {
            return Err(format!(
                "`{d}` is a date, which no configuration key gate reads holds"
            ));
        }
        toml::Value::Array(items) => Json::Array(
            items
                .into_iter()
                .map(json_of)
                .collect::<std::result::Result<_, _>>()?,
        ),
        toml::Value::Table(table) => Json::Object(
            table
                .into_iter()
                .map(|(k, v)| Ok((k, json_of(v)?)))
                .collect::<std::result::Result<_, String>>()?,
        ),
    })
}
