//! The `sweep` command line: `args` says what it accepts, `commands` what each subcommand does,
//! `error` why one failed and with which exit code.

pub(crate) mod args;
pub(crate) mod commands;
pub(crate) mod error;
pub(crate) mod outputs;
