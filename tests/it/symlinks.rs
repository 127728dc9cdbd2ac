//! Symlinks are edges to what they point at inside the tree, and facts on their row when they
//! leave it; gate never reads through one.

use crate::support::{TestRepo, row, selected, text};

#[test]
fn a_symlinked_module_and_a_symlinked_package_select_their_importers() {
    let t = TestRepo::from_fixture("shop");
    std::os::unix::fs::symlink("money.py", t.root.join("src/shop/money_link.py")).unwrap();
    std::os::unix::fs::symlink("shop", t.root.join("src/shopalias")).unwrap();
    t.write(
        "tests/test_link.py",
        "from shop.money_link import to_cents\n\n\ndef test_link():\n    assert to_cents(1) == 100\n",
    );
    t.write(
        "tests/test_alias.py",
        "from shopalias.tax import with_tax\n\n\ndef test_alias():\n    assert with_tax(10) == 1200\n",
    );
    t.write(
        "tests/test_alias_package.py",
        "import shopalias\n\n\ndef test_package():\n    assert shopalias.__doc__\n",
    );
    t.commit("links");
    let r = t.report(&["--files", "src/shop/__init__.py"]);
    assert!(
        selected(&r).contains(&"tests/test_alias_package.py".to_string()),
        "{r:#}"
    );
    let r = t.report(&["--files", "src/shop/money.py"]);
    let sel = selected(&r);
    for test in ["tests/test_link.py", "tests/test_alias.py"] {
        assert!(sel.contains(&test.to_string()), "{test} in {sel:?}");
    }
    crate::support::breaking_money_fails(
        &t,
        &[
            "tests/test_link.py::test_link",
            "tests/test_alias.py::test_alias",
        ],
    );
    // Repointing a link is a change to the link: what imports through it is selected.
    std::fs::remove_file(t.root.join("src/shopalias")).unwrap();
    std::fs::create_dir_all(t.root.join("src/other")).unwrap();
    std::os::unix::fs::symlink("other", t.root.join("src/shopalias")).unwrap();
    t.commit("repoint the alias");
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    assert!(
        selected(&r).contains(&"tests/test_alias.py".to_string()),
        "{r:#}"
    );
}

#[test]
fn a_symlink_leaving_the_tree_is_never_read_and_is_named_on_its_row() {
    let t = TestRepo::from_fixture("shop");
    let secret = t.root.parent().unwrap().join("secret.py");
    std::fs::write(
        &secret,
        "import never_seen_module\nSECRET = 'do-not-read'\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(&secret, t.root.join("src/shop/outside.py")).unwrap();
    t.commit("a link out of the tree");
    let plans = t.root.parent().unwrap().join("plans");
    let out = t
        .gate(&["plan", "--out", plans.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let ast = std::fs::read_to_string(plans.join("ast-plan.json")).unwrap();
    assert!(
        !ast.contains("do-not-read") && !ast.contains("never_seen_module"),
        "{ast}"
    );
    let plan: serde_json::Value = serde_json::from_str(&ast).unwrap();
    crate::plans::validate("ast-plan.schema.json", &plan);
    assert_eq!(plan["symlinks"][0]["path"], "src/shop/outside.py");
    assert!(plan["symlinks"][0]["target"].is_null());
    let r = t.report(&["--files", "src/shop/outside.py"]);
    let reasons = row(&r, "src/shop/outside.py")["reasons"].to_string();
    assert!(
        reasons.contains("is a symlink to") && reasons.contains("outside the repository"),
        "{reasons}"
    );
    // The committed tree is analysed without reading through it either.
    let r = t.report(&["--affected", "HEAD~1...HEAD"]);
    assert!(
        row(&r, "src/shop/outside.py")["reasons"]
            .to_string()
            .contains("outside the repository"),
        "{r:#}"
    );
}
