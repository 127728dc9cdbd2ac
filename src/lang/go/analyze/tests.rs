//! The Go analyser against small sources, one form per test; random bytes and deep nestings
//! in `fuzz`.

use super::*;

#[test]
fn variables_read_by_a_literal_name() {
    let src = "package x\n\nimport \"os\"\n\nfunc f(k string) {\n\t_ = os.Getenv(\"B\")\n\t_, _ = os.LookupEnv(`A`)\n\t_ = os.Getenv(k)\n\t_ = os.Environ()\n\t_ = os.ExpandEnv(\"$HOME/x\")\n}\n";
    let facts = analyze(src.as_bytes());
    assert_eq!(facts.env, ["A", "B"]);
    // A computed name, the whole environment: reads gate cannot name, by line.
    let lines: Vec<u32> = facts.env_any.iter().map(|(l, _)| *l).collect();
    assert_eq!(lines, [8, 9, 10], "{:?}", facts.env_any);
}

#[test]
fn paths_anchored_on_the_file_and_joins_onto_unknown_bases() {
    let src = "package x\n\nimport (\n\t\"path\"\n\t\"path/filepath\"\n\t\"runtime\"\n)\n\nfunc f(dir string) {\n\t_, file, _, _ := runtime.Caller(0)\n\tbase := filepath.Dir(file)\n\t_ = path.Join(path.Dir(file), \"../testdata\")\n\t_ = filepath.Join(base, \"golden\", \"a.txt\")\n\t_ = filepath.Join(file, \"..\", \"up.json\")\n\t_ = filepath.Join(dir, \"x.golden\")\n\t_ = filepath.Join(dir, \"src\")\n\ttmp := t.TempDir()\n\t_ = filepath.Join(tmp, \"out.txt\")\n\t_ = filepath.Join(os.TempDir(), \"gen\", \"a.json\")\n}\n";
    let f = analyze(src.as_bytes());
    let paths: Vec<String> = f.paths.iter().map(|p| format!("{:?}", p.value)).collect();
    for want in [
        "FileDir(\"../testdata\")",
        "FileDir(\"golden/a.txt\")",
        "FileDir(\"up.json\")",
        // Joined onto an unknown base (a parameter): that path in any folder.
        "Relative(\"**/x.golden\")",
        "Relative(\"**/src\")",
    ] {
        assert!(paths.iter().any(|p| p == want), "{want}: {paths:?}");
    }
    // A join onto a temporary folder is never a tree path.
    assert!(
        !paths
            .iter()
            .any(|v| v.contains("out.txt") || v.contains("a.json")),
        "{paths:?}"
    );
    // Other spellings of the same anchors: a helper returning the folder, a package-level
    // `var (…)`, `Sprintf`, `+`, consts, loops over literal slices, `TrimSuffix`, another
    // package's helper (its `..` climb from a folder not known), `os.Getwd` in a test.
    let more = "package x\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"path/filepath\"\n\t\"runtime\"\n\t\"strings\"\n\t\"testing\"\n)\n\nvar (\n\t_, self, _, _ = runtime.Caller(0)\n\troot          = filepath.Dir(filepath.Dir(self))\n)\n\nconst name = \"c.json\"\n\nfunc here() string {\n\t_, f, _, _ := runtime.Caller(0)\n\treturn filepath.Dir(f)\n}\n\nfunc TestT(t *testing.T) {\n\t_, _ = os.ReadFile(fmt.Sprintf(\"%s/a.json\", here()))\n\t_, _ = os.ReadFile(root + \"/data/\" + name)\n\tfor _, n := range []string{\"d1.json\", \"d2.json\"} {\n\t\t_, _ = os.ReadFile(filepath.Join(here(), \"testdata\", n))\n\t}\n\t_, file, _, _ := runtime.Caller(0)\n\t_, _ = os.ReadFile(strings.TrimSuffix(file, \".go\") + \".golden\")\n\t_, _ = os.ReadFile(filepath.Join(testutil.Dir(), \"..\", \"shared\", \"e.json\"))\n\twd, _ := os.Getwd()\n\t_, _ = os.ReadFile(filepath.Join(wd, \"testdata\", \"w.json\"))\n}\n";
    let f = analyze(more.as_bytes());
    let paths: Vec<String> = f.paths.iter().map(|p| format!("{:?}", p.value)).collect();
    for want in [
        "FileDir(\"a.json\")",
        "FileDir(\"../data/c.json\")",
        "FileDir(\"testdata/d1.json\")",
        "FileDir(\"testdata/d2.json\")",
        "FileDir(\"*.golden\")",
        "Relative(\"**/shared/e.json\")",
    ] {
        assert!(paths.iter().any(|p| p == want), "{want}: {paths:?}");
    }
    let values: Vec<&str> = f.strings.iter().map(|s| s.value.as_str()).collect();
    assert!(values.contains(&"testdata/w.json"), "{values:?}");
    // Test code keeps fixture paths handed to any helper; other code does not.
    let test = "package x\n\nimport \"testing\"\n\nfunc TestT(t *testing.T) { load(t, \"_cases/table.txt\", \"a b\", \"name\") }\n";
    let values: Vec<String> = analyze(test.as_bytes())
        .strings
        .into_iter()
        .map(|s| s.value)
        .collect();
    assert_eq!(values, ["_cases/table.txt"]);
    let plain = test.replace("\"testing\"", "\"fmt\"");
    assert!(analyze(plain.as_bytes()).strings.is_empty());
}

#[test]
fn package_imports_embeds_and_references() {
    let src = r#"package cart_test

import (
	"testing"
	m "example.com/shop/money"
	_ "embed"
)

import "os/exec"

//go:embed testdata/*.json "static files/x.txt"
var data string

func TestX(t *testing.T) {
	b, _ := os.ReadFile(filepath.Join("..", "..", "configs", "x.yaml"))
	exec.Command("go", "run", "./cmd/tool").Run()
	fmt.Println("not a path", b)
}
"#;
    let f = analyze(src.as_bytes());
    assert_eq!(f.package.as_deref(), Some("cart_test"));
    let imports: Vec<(u32, &str)> = f
        .imports
        .iter()
        .map(|i| (i.line, i.module.as_str()))
        .collect();
    assert_eq!(
        imports,
        [
            (4, "testing"),
            (5, "example.com/shop/money"),
            (6, "embed"),
            (9, "os/exec")
        ]
    );
    let strings: Vec<(&str, StringContext)> = f
        .strings
        .iter()
        .map(|s| (s.value.as_str(), s.context))
        .collect();
    for want in [
        ("testdata/*.json", StringContext::Embed),
        ("static files/x.txt", StringContext::Embed),
        ("../../configs/x.yaml", StringContext::PathArg),
        ("./cmd/tool", StringContext::Argv),
    ] {
        assert!(strings.contains(&want), "{want:?} in {strings:?}");
    }
    assert!(!strings.iter().any(|(s, _)| *s == "not a path"));
}

#[test]
fn a_file_without_path_calls_is_read_up_to_its_first_declaration() {
    let src = "// Package p.\npackage p\n\nimport (\n\t\"fmt\"\n)\n\nimport \"strings\"\n\nfunc F() { fmt.Println(strings.ToUpper(\"x\")) }\n";
    assert!(header(src.as_bytes()).len() < src.len());
    let f = analyze(src.as_bytes());
    let imports: Vec<&str> = f.imports.iter().map(|i| i.module.as_str()).collect();
    assert_eq!(imports, ["fmt", "strings"]);
    assert!(f.parse_errors.is_empty());
    // An import after a declaration-looking line (here inside a comment) keeps it whole.
    let odd = "/*\nvar x\n*/\npackage p\n\nimport \"fmt\"\n\nfunc F() { fmt.Println() }\n";
    assert_eq!(header(odd.as_bytes()).len(), odd.len());
    assert_eq!(analyze(odd.as_bytes()).imports.len(), 1);
    // A file that reads files is parsed whole.
    let reads = "package p\n\nimport \"os\"\n\nfunc F() { os.ReadFile(\"data.json\") }\n";
    assert_eq!(header(reads.as_bytes()).len(), reads.len());
}

mod fuzz {
    use super::super::{analyze, parse_errors};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]
        #[test]
        fn random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
            prop_assert_eq!(analyze(&bytes), analyze(&bytes));
            let _ = parse_errors(&bytes);
        }

        #[test]
        fn deep_nesting(depth in 1usize..20_000, open in "[(\\[{]") {
            let close = match open.as_str() { "(" => ")", "[" => "]", _ => "}" };
            let src = format!(
                "package p\n\nimport \"os\"\n\nvar x = os.ReadFile({}1{})\n",
                open.repeat(depth),
                close.repeat(depth)
            );
            let _ = analyze(src.as_bytes());
            let _ = parse_errors(src.as_bytes());
        }
    }
}

/// A name bound many times whose bindings read it again branches at every level of the
/// evaluation: each node's value is worked out once, so such a file (one of Go's own took
/// hours) is read in moments, with every alternative a short chain gives still named.
#[test]
fn a_name_rebound_from_itself_many_times_is_evaluated_once_per_node() {
    let mut src =
        String::from("package x\n\nimport \"os\"\n\nfunc f(suffix string) {\n\top := \"a\"\n");
    for i in 0..120 {
        src.push_str(&format!(
            "\tif suffix == \"{i}\" {{\n\t\top = op + \"/x{i}\"\n\t}}\n"
        ));
    }
    src.push_str("\t_, _ = os.ReadFile(op + \".txt\")\n\tname := \"data\"\n\t_, _ = os.ReadFile(name + \"/b.txt\")\n}\n");
    let f = analyze(src.as_bytes());
    let paths: Vec<String> = f.paths.iter().map(|p| format!("{:?}", p.value)).collect();
    assert!(paths.iter().any(|p| p.contains("data/b.txt")), "{paths:?}");
    assert!(!f.paths.is_empty());
}

/// A test file's literal names keep their punctuation: `c,d.json` and `k{x}.json` are names.
#[test]
fn a_name_with_punctuation_is_kept() {
    let src = "package x\n\nimport (\n\t\"path/filepath\"\n\t\"testing\"\n)\n\nfunc TestX(t *testing.T) {\n\t_ = filepath.Join(\"..\", \"s\", \"c,d.json\")\n\t_ = filepath.Join(\"..\", \"s\", \"k{x}.json\")\n}\n";
    let f = analyze(src.as_bytes());
    let strings: Vec<&str> = f.strings.iter().map(|s| s.value.as_str()).collect();
    for want in ["../s/c,d.json", "../s/k{x}.json"] {
        assert!(strings.contains(&want), "{want}: {strings:?}");
    }
}
