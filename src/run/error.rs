//! The runners' boundary error, a leaf: `crate::error` gathers it without the runners'
//! modules being imported back.

/// A runner or a tool gate drives that could not be started (exit 4).
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    #[error("the command of {0} is empty")]
    Empty(&'static str),
    #[error("cannot start `{program}`")]
    Start {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{tool} is not installed: {why}")]
    Missing {
        tool: &'static str,
        why: &'static str,
    },
    #[error(
        "`{interpreter}` has no module `{module}`: install it into that interpreter (`{interpreter} -m pip install {module}`), or point `runner` in .gate.toml at an environment that has it"
    )]
    NoModule {
        interpreter: String,
        module: &'static str,
    },
}
