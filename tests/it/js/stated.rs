//! `[[js.stated]]`: a Vitest configuration gate cannot read as literals is refused naming the
//! file and the key, with the TOML that states it; stated in `.gate.toml` (once that has
//! landed: a commit cannot state its own way past a refusal), the change is resolved and the
//! real Vitest runs the tests selected. A stated value the file's own literal makes stale is a
//! warning, and a value of the wrong type a configuration error.

use super::{ran, repo, results, run, set};
use crate::support::{TestRepo, row, selected, text};

/// `test.include` computed from the environment: Vitest reads the default, gate cannot.
const COMPUTED: &str = "include: [process.env.GATE_TESTS ?? 'test/**/*.test.ts'],";

const STATED: &str = "[[js.stated]]\nfile = \"vitest.config.ts\"\nkey = \"test.include\"\nvalue = [\"test/**/*.test.ts\"]\n";

/// The fixture's `vitest.config.ts` with `test.include`'s line replaced by `line`, committed.
fn configure(t: &TestRepo, line: &str) {
    let config = std::fs::read_to_string(t.root.join("vitest.config.ts")).unwrap();
    t.write(
        "vitest.config.ts",
        &config.replace("include: ['test/**/*.test.ts'],", line),
    );
    t.commit("configuration");
}

/// A change to math, committed: what gate's report of it is, as `--json` gives it (run).
fn touch_math(t: &TestRepo) -> (std::process::Output, serde_json::Value) {
    t.append("src/math.ts", "// touched\n");
    t.commit("touch math");
    run(t, &["--affected", "HEAD~1...HEAD"])
}

#[test]
fn a_computed_include_is_refused_with_the_toml_and_runs_once_gate_toml_states_it() {
    let t = repo("vitest");
    configure(&t, COMPUTED);
    let (out, r) = touch_math(&t);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let why = r["tree_refusal"].as_str().expect("refused");
    assert!(why.starts_with("vitest.config.ts: `test.include`"), "{why}");
    assert!(
        why.contains("process.env.GATE_TESTS")
            && why.contains("[[js.stated]]")
            && why.contains("file = \"vitest.config.ts\"")
            && why.contains("key = \"test.include\""),
        "{why}"
    );
    // A commit that states the value along with a change is gated by the base's configuration,
    // which states nothing: still refused, and nothing runs.
    t.write(".gate.toml", STATED);
    let (out, r) = touch_math(&t);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        r["tree_refusal"]
            .as_str()
            .is_some_and(|w| w.contains("`test.include`")),
        "{r:#}"
    );
    assert!(
        row(&r, ".gate.toml")["reasons"]
            .to_string()
            .contains("gated under the configuration of the base"),
        "{r:#}"
    );
    assert!(results(&r).is_empty(), "{r:#}");
    // Landed, the stated value stands in: the change is resolved and its tests run for real.
    let (out, r) = touch_math(&t);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(r["tree_refusal"].is_null(), "{r:#}");
    assert_eq!(row(&r, "src/math.ts")["verdict"], "resolved", "{r:#}");
    assert_eq!(
        selected(&r),
        ["test/math.test.ts", "test/sum.test.ts"],
        "{r:#}"
    );
    assert_eq!(
        ran(&r),
        set(&["test/math.test.ts", "test/sum.test.ts"]),
        "{r:#}"
    );
    assert_eq!(r["run"]["outcome"], "passed", "{r:#}");
    assert!(!text(&out).contains("not used"), "{}", text(&out));
}

/// A spread may set any key of `test`: the refusal names `test`, and a table stated for it
/// gives every key gate reads there.
#[test]
fn a_spread_is_stated_as_the_object_that_holds_it() {
    let t = repo("vitest");
    let config = std::fs::read_to_string(t.root.join("vitest.config.ts")).unwrap();
    t.write(
        "vitest.config.ts",
        &config
            .replace(
                "import path from 'node:path';",
                "import path from 'node:path';\n\nconst shared = { setupFiles: ['./test/setup.ts'] };",
            )
            .replace("setupFiles: ['./test/setup.ts'],", "...shared,"),
    );
    t.commit("shared test options");
    t.append("src/math.ts", "// touched\n");
    t.commit("touch");
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    let why = r["tree_refusal"].as_str().expect("refused");
    assert!(
        why.contains("a spread") && why.contains("key = \"test\""),
        "{why}"
    );
    t.write(
        ".gate.toml",
        "[[js.stated]]\nfile = \"vitest.config.ts\"\nkey = \"test\"\nvalue = { include = [\"test/**/*.test.ts\"], setupFiles = [\"./test/setup.ts\"] }\n",
    );
    t.commit("state test");
    t.append("test/setup.ts", "// touched\n");
    t.commit("touch setup");
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    assert!(r["tree_refusal"].is_null(), "{r:#}");
    // The stated setup file runs before every test of the project.
    assert_eq!(selected(&r).len(), 10, "{r:#}");
}

#[test]
fn a_stated_value_the_file_says_as_a_literal_is_a_warning_and_the_literal_wins() {
    let t = repo("vitest");
    t.write(
        ".gate.toml",
        &format!(
            "{}\n[[js.stated]]\nfile = \"web/vitest.config.ts\"\nkey = \"test.include\"\nvalue = \"x/**\"\n",
            STATED.replace("test/**/*.test.ts", "src/**/*.test.ts")
        ),
    );
    t.commit("stated");
    let (out, r) = touch_math(&t);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        ran(&r),
        set(&["test/math.test.ts", "test/sum.test.ts"]),
        "{r:#}"
    );
    let all = text(&out);
    assert!(
        all.contains(".gate.toml line 2: the value stated for `test.include` of vitest.config.ts is not used: vitest.config.ts says it as a literal, which wins (drop the entry)"),
        "{all}"
    );
    assert!(
        all.contains(".gate.toml line 7: the value stated for `test.include` of web/vitest.config.ts is not used: web/vitest.config.ts is no file of the tree"),
        "{all}"
    );
}

#[test]
fn a_stated_value_of_the_wrong_type_is_a_configuration_error() {
    let t = repo("vitest");
    configure(&t, COMPUTED);
    t.write(
        ".gate.toml",
        &STATED.replace("[\"test/**/*.test.ts\"]", "{ glob = \"test/**\" }"),
    );
    t.append("src/math.ts", "// touched\n");
    t.commit("a wrong value");
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let all = text(&out);
    assert!(
        all.contains(".gate.toml: line 4: `js.stated`: `test.include` takes a string or a list of strings, not {\"glob\":\"test/**\"}"),
        "{all}"
    );
    assert!(!all.contains("RUN"), "Vitest ran: {all}");
}
