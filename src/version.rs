//! What wrote a plan or a cache: its format version and this gate. A reader of another format
//! or gate rebuilds what it would otherwise trust.

/// Version of every plan and cache file gate writes; the schemas in `plans/` carry it.
/// 2: reference facts (paths, dynamic imports, apps, argv and shell contexts), shell scripts.
/// 3: symlinks (the AST plan lists them; `symlink` edges), checksummed caches.
/// 4: `plugin` edges, no import edge to a stub (`.pyi`), `may_load` in reports.
/// 5: paths built on another module's file (`module_dir`: `Path(pkg.__file__).parent / "x"`).
/// 6: environment variables read by a literal name (`env` in the AST plan).
/// 7: relative run-time-named imports (`anchor`, `exact`), module `__getattr__`, doctests.
pub(crate) const FORMAT: u32 = 7;
pub(crate) const ANALYZER: &str = concat!("gate ", env!("CARGO_PKG_VERSION"));
