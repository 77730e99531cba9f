//! The `sweep` command line: `args` says what it accepts, `commands` what each subcommand does.

pub(crate) mod args;
pub(crate) mod commands;
