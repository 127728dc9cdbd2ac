//! git hooks: the pre-push protocol (`push`) and installing the hook script (`install`).

pub mod install;
pub mod push;
