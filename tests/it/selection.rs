//! What gets selected, and why: import forms, parent packages, conftest scoping, string names,
//! deleted and renamed modules, the four-module chain.

use crate::support::{TestRepo, row, selected, strings};

#[test]
fn a_change_at_the_bottom_of_a_four_module_chain_selects_the_test_at_the_top() {
    let t = TestRepo::from_fixture("shop");
    t.append("src/shop/money.py", "\nDOLLAR = 1\n");
    t.commit("money");
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    assert_eq!(r["verdict"], "bounded");
    assert_eq!(
        selected(&r),
        [
            "tests/test_cart.py",
            "tests/test_checkout.py",
            "tests/test_money.py",
            "tests/test_patch.py"
        ]
    );
    let edges = row(&r, "src/shop/money.py")["edges"]
        .as_array()
        .unwrap()
        .clone();
    let checkout = edges
        .iter()
        .find(|e| e["test"] == "tests/test_checkout.py")
        .unwrap();
    let chain: Vec<String> = checkout["chain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{}>{}:{}",
                e["from"].as_str().unwrap(),
                e["to"].as_str().unwrap(),
                e["line"]
            )
        })
        .collect();
    assert_eq!(
        chain,
        [
            "tests/test_checkout.py>src/shop/checkout.py:1",
            "src/shop/checkout.py>src/shop/cart.py:1",
            "src/shop/cart.py>src/shop/tax.py:3",
            "src/shop/tax.py>src/shop/money.py:1",
        ]
    );
    let reasons = strings(&r["selected"][1]["reasons"]);
    assert_eq!(
        reasons,
        [
            "tests/test_checkout.py imports shop.checkout at line 1; src/shop/checkout.py imports shop.cart at line 1; \
          src/shop/cart.py imports .tax at line 3; src/shop/tax.py imports shop.money at line 1"
        ]
    );
}

/// Each import form gets its own target module; changing the target must select its test.
#[test]
fn every_import_form_is_an_edge() {
    let t = TestRepo::from_fixture("shop");
    let forms: &[(&str, &str)] = &[
        ("f_import", "import shop.f_import\n"),
        ("f_alias", "import shop.f_alias as alias\n"),
        ("f_submodule", "from shop import f_submodule\n"),
        ("f_from", "from shop.f_from import THING\n"),
        ("f_star", "from shop.f_star import *\n"),
        ("f_function", "def late():\n    import shop.f_function\n"),
        (
            "f_typing",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import shop.f_typing\n",
        ),
        (
            "f_try",
            "try:\n    import shop.f_try\nexcept ImportError:\n    import shop.f_except\n",
        ),
        ("f_except", ""),
        (
            "f_importlib",
            "import importlib\nimportlib.import_module('shop.f_importlib')\n",
        ),
        ("f_dunder", "__import__('shop.f_dunder')\n"),
        (
            "f_patch",
            "from unittest import mock\nP = mock.patch('shop.f_patch.THING')\n",
        ),
        ("f_entry", "ENTRY = 'shop.f_entry:main'\n"),
        ("f_relative", "from shop.pkg import inner\n"),
    ];
    for (module, _) in forms {
        t.write(
            &format!("src/shop/{module}.py"),
            "THING = 1\ndef main():\n    pass\n",
        );
    }
    t.write("src/shop/pkg/__init__.py", "");
    t.write(
        "src/shop/pkg/inner.py",
        "from . import sibling\nfrom .. import f_relative\nfrom ..deep.leaf import VALUE\n",
    );
    t.write("src/shop/pkg/sibling.py", "");
    t.write("src/shop/deep/__init__.py", "");
    t.write("src/shop/deep/leaf.py", "VALUE = 1\n");
    for (module, body) in forms {
        if !body.is_empty() {
            t.write(
                &format!("tests/forms/test_{module}.py"),
                &format!("{body}\ndef test_ok():\n    pass\n"),
            );
        }
    }
    // a namespace package (no __init__.py) and a stub beside a module
    t.write("src/nsroot/nsmod.py", "VALUE = 1\n");
    t.write(
        "tests/forms/test_namespace.py",
        "from nsroot import nsmod\n",
    );
    t.write("src/shop/f_import.pyi", "THING: int\n");
    t.write(
        "tests/forms/conftest.py",
        "pytest_plugins = ['shop_plugin']\n",
    );
    t.write("tests/shop_plugin.py", "");
    t.commit("forms");
    let expect = |changed: &str, test: &str| {
        let r = t.report(&["--files", changed]);
        assert!(
            selected(&r).contains(&test.to_string()),
            "{changed} must select {test}: {:?}",
            selected(&r)
        );
    };
    for (module, body) in forms {
        if !body.is_empty() {
            expect(
                &format!("src/shop/{module}.py"),
                &format!("tests/forms/test_{module}.py"),
            );
        }
    }
    expect("src/shop/f_except.py", "tests/forms/test_f_try.py");
    expect("src/nsroot/nsmod.py", "tests/forms/test_namespace.py");
    // a stub is read by type checkers, never run: `refusals::a_stub_counts_only_for_…`
    let r = t.report(&["--files", "src/shop/f_import.pyi"]);
    assert_eq!(
        row(&r, "src/shop/f_import.pyi")["verdict"],
        "inert",
        "{r:#}"
    );
    // relative imports of every level, through the package `shop.pkg`
    expect("src/shop/pkg/sibling.py", "tests/forms/test_f_relative.py");
    expect("src/shop/deep/leaf.py", "tests/forms/test_f_relative.py");
    expect(
        "src/shop/deep/__init__.py",
        "tests/forms/test_f_relative.py",
    );
    // pytest_plugins in a conftest reaches every test under it
    expect("tests/shop_plugin.py", "tests/forms/test_f_alias.py");
    // and a form that is absent selects nothing extra
    let r = t.report(&["--files", "src/shop/f_entry.py"]);
    assert_eq!(selected(&r), ["tests/forms/test_f_entry.py"]);
}

#[test]
fn parent_packages_run_on_import() {
    let t = TestRepo::from_fixture("shop");
    let r = t.report(&["--files", "src/shop/__init__.py"]);
    // every test that imports anything under shop runs shop/__init__.py
    assert_eq!(
        selected(&r),
        [
            "tests/test_cart.py",
            "tests/test_checkout.py",
            "tests/test_money.py",
            "tests/test_patch.py",
            "tests/test_plugins.py"
        ]
    );
    let r = t.report(&["--files", "src/shop/plugins/__init__.py"]);
    assert_eq!(
        selected(&r),
        ["tests/test_plugins.py"],
        "import_module('shop.plugins.discount') runs the package"
    );
    // a test package's __init__.py runs when pytest imports the test module
    let r = t.report(&["--files", "tests/unit/__init__.py"]);
    assert_eq!(selected(&r), ["tests/unit/test_nested.py"]);
}

#[test]
fn conftest_applies_at_and_below_its_directory() {
    let t = TestRepo::from_fixture("shop");
    t.write("tests/unit/conftest.py", "import pytest\n");
    t.commit("nested conftest");
    let r = t.report(&["--files", "tests/unit/conftest.py"]);
    assert_eq!(selected(&r), ["tests/unit/test_nested.py"]);
    let r = t.report(&["--files", "tests/conftest.py"]);
    assert_eq!(
        selected(&r).len(),
        7,
        "tests/conftest.py applies to every test under tests/"
    );
    let r = t.report(&["--files", "tests/unit/test_nested.py"]);
    assert_eq!(
        selected(&r),
        ["tests/unit/test_nested.py"],
        "a changed test runs whole, alone"
    );
}

#[test]
fn a_file_named_in_a_string_literal_selects_its_reader() {
    let t = TestRepo::from_fixture("shop");
    let r = t.report(&["--files", "tests/data/prices.json"]);
    assert_eq!(row(&r, "tests/data/prices.json")["verdict"], "resolved");
    assert_eq!(selected(&r), ["tests/test_prices.py"]);
}

#[test]
fn a_deleted_module_selects_what_imported_it() {
    let t = TestRepo::from_fixture("shop");
    t.remove("src/shop/tax.py");
    t.commit("drop tax");
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    assert_eq!(row(&r, "src/shop/tax.py")["status"], "deleted");
    assert_eq!(
        selected(&r),
        [
            "tests/test_cart.py",
            "tests/test_checkout.py",
            "tests/test_patch.py"
        ]
    );
}

#[test]
fn a_rename_counts_both_sides() {
    let t = TestRepo::from_fixture("shop");
    t.rename("src/shop/money.py", "src/shop/currency.py");
    t.write("src/shop/tax.py", "from shop.currency import to_cents\n\nRATE = 0.2\n\n\ndef with_tax(amount):\n    return to_cents(amount * (1 + RATE))\n");
    t.commit("rename");
    let r = t.report(&["--affected", "HEAD~1"]);
    let old = row(&r, "src/shop/money.py");
    assert_eq!(old["status"], "deleted");
    assert_eq!(old["other"], "src/shop/currency.py");
    assert_eq!(
        strings(&old["tests"]),
        ["tests/test_money.py"],
        "the old module's importer breaks"
    );
    let new = row(&r, "src/shop/currency.py");
    assert_eq!(new["status"], "renamed");
    assert!(strings(&new["tests"]).contains(&"tests/test_checkout.py".to_string()));
}

#[test]
fn a_deleted_test_leaves_the_selection_and_the_rest_really_runs() {
    let t = TestRepo::from_fixture("shop");
    t.remove("tests/test_money.py");
    t.append("src/shop/money.py", "\n");
    t.commit("drop test");
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    assert!(
        row(&r, "tests/test_money.py")["reasons"][0]
            .as_str()
            .unwrap()
            .contains("deleted test file")
    );
    assert!(!selected(&r).contains(&"tests/test_money.py".to_string()));
    let out = t.gate(&["--affected", "HEAD~1...HEAD"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("3 passed"), "{stdout}");
    let command = stdout.lines().find(|l| l.starts_with("command:")).unwrap();
    assert!(!command.contains("test_money.py"), "{command}");
}

#[test]
fn three_dots_use_the_merge_base_two_dots_the_trees() {
    let t = TestRepo::from_fixture("shop");
    t.branch("feature");
    t.append("src/shop/money.py", "\n# on master\n");
    t.commit("master moves");
    t.checkout("feature");
    t.append("src/shop/plugins/discount.py", "\n# on feature\n");
    t.commit("feature work");
    let three = t.report(&["--affected", "master...feature"]);
    assert_eq!(
        strings(
            &three["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["path"].clone())
                .collect()
        ),
        ["src/shop/plugins/discount.py"]
    );
    let two = t.report(&["--affected", "master..feature"]);
    let paths: Vec<&str> = two["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["src/shop/money.py", "src/shop/plugins/discount.py"]);
    // a bare revision means R...HEAD
    let bare = t.report(&["--affected", "master"]);
    assert_eq!(bare["files"], three["files"]);
}

#[test]
fn since_sees_uncommitted_and_untracked_changes() {
    let t = TestRepo::from_fixture("shop");
    t.append("src/shop/plugins/discount.py", "\n");
    t.write("tests/test_new.py", "def test_new():\n    pass\n");
    let r = t.report(&["--since", "HEAD"]);
    assert_eq!(selected(&r), ["tests/test_new.py", "tests/test_plugins.py"]);
}
