//! git hooks: the pre-push protocol (`push`) and installing the hook script (`install`).

pub(crate) mod install;
pub(crate) mod push;
