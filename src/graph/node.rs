//! What a graph node is. Its name in the node table says so: a file by its path, a Go package
//! as its importers see it (`go:dir`), the tests of a Go package as `go test` runs them
//! (`./dir`, `.` for the root) — and only this module reads or writes those forms.

/// A graph node, read from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Node<'a> {
    /// A file of the tree (or a deleted one imports still name).
    File(&'a str),
    /// The Go package in folder `dir`, as its importers see it.
    GoPackage(&'a str),
    /// The tests of the Go package in folder `dir`: a test of the tree, as a pytest file is.
    GoTests(&'a str),
}

impl<'a> Node<'a> {
    pub(crate) fn of(name: &'a str) -> Node<'a> {
        if let Some(dir) = name.strip_prefix("go:") {
            Node::GoPackage(dir)
        } else if name == "." {
            Node::GoTests("")
        } else if let Some(dir) = name.strip_prefix("./") {
            Node::GoTests(dir)
        } else {
            Node::File(name)
        }
    }

    /// The node's name in the graph's table.
    pub(crate) fn name(&self) -> String {
        match self {
            Node::File(path) => path.to_string(),
            Node::GoPackage(dir) => format!("go:{dir}"),
            Node::GoTests("") => ".".into(),
            Node::GoTests(dir) => format!("./{dir}"),
        }
    }

    /// The folder of a Go node; a file's own path.
    pub(crate) fn dir(&self) -> &'a str {
        match self {
            Node::File(path) => path,
            Node::GoPackage(dir) | Node::GoTests(dir) => dir,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Node;

    #[test]
    fn names_read_back_as_their_nodes() {
        for node in [
            Node::File("a/b.py"),
            Node::GoPackage("ws/shop"),
            Node::GoPackage(""),
            Node::GoTests("ws/shop"),
            Node::GoTests(""),
        ] {
            assert_eq!(Node::of(&node.name()), node);
        }
        assert_eq!(Node::GoTests("").name(), ".");
        assert_eq!(Node::of("./x").dir(), "x");
    }
}
