//! What a path's name alone tells: a Python manifest, a type stub, a test file, Go code the
//! go tool never builds.

/// Python project manifests: what configures, builds or pins a project.
pub(super) fn is_manifest(path: &str) -> bool {
    let name = crate::path::file_name(path);
    matches!(
        name,
        "pyproject.toml"
            | "setup.py"
            | "setup.cfg"
            | "tox.ini"
            | "noxfile.py"
            | "pytest.ini"
            | "Pipfile"
            | "Pipfile.lock"
            | "poetry.lock"
            | "uv.lock"
            | "pdm.lock"
            | ".python-version"
            | "MANIFEST.in"
    ) || ((name.starts_with("requirements") || name.starts_with("constraints"))
        && name.ends_with(".txt"))
}

/// Go code (or a module file) in a folder the go tool never builds from (`_tools/`,
/// `testdata/`, `.x/`): no package of the tree's modules compiles it.
pub(super) fn unbuilt_go(path: &str) -> bool {
    use crate::lang::go::gomod;
    let name = crate::path::file_name(path);
    // Not cgo's C files: a Python extension's sources may live in `_ext/` too.
    (gomod::is_go(path) || matches!(name, "go.mod" | "go.sum" | "go.work" | "go.work.sum"))
        && gomod::ignored_dir(path)
}

/// A type stub: what a type checker reads in place of the module, never what a run imports.
pub(super) fn is_stub(path: &str) -> bool {
    path.ends_with(".pyi")
}

/// Stubs and PEP 561's `py.typed` marker matter only to type checkers.
pub(super) fn is_type_information(path: &str) -> bool {
    is_stub(path) || crate::path::file_name(path) == "py.typed"
}

/// A deleted path is no longer a test of the tree, so its name alone tells.
pub(super) fn is_test_name(path: &str) -> bool {
    let name = crate::path::file_name(path);
    name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
}
