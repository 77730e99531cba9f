//! A command as a value: program, arguments, environment, folder and niceness, and the exact line
//! it is logged with.

use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq)]
pub struct Cmd {
    pub program: String,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    pub cwd: Option<PathBuf>,
    /// Added to the child's scheduling niceness (0: inherit). Builds run at a lower priority so
    /// that a program measuring on the GPU never waits for a CPU behind nvcc.
    pub nice: i32,
    /// Where a confined command may write (see [`super::confine`]): beneath this folder alone,
    /// its temporary files included. Builds are confined to their scratch folder in the cache.
    /// No part of the logged line: it changes where a write may land, not what is built.
    pub confine: Option<PathBuf>,
}

impl Cmd {
    pub fn new(program: impl Into<String>) -> Cmd {
        Cmd {
            program: program.into(),
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            nice: 0,
            confine: None,
        }
    }

    /// Confined to write beneath `dir` alone (see [`super::confine`]).
    pub fn confined_to(mut self, dir: impl Into<PathBuf>) -> Cmd {
        self.confine = Some(dir.into());
        self
    }

    pub fn nice(mut self, n: i32) -> Cmd {
        self.nice = n;
        self
    }

    pub fn arg(mut self, a: impl Into<String>) -> Cmd {
        self.args.push(a.into());
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: Into<String>>(mut self, a: I) -> Cmd {
        self.args.extend(a.into_iter().map(Into::into));
        self
    }

    /// The command line as a shell would read it (for logs and messages).
    pub fn line(&self) -> String {
        let env = self.env.iter().map(|(k, v)| format!("{k}={}", quote(v)));
        let words = std::iter::once(quote(&self.program)).chain(self.args.iter().map(|a| quote(a)));
        env.chain(words).collect::<Vec<_>>().join(" ")
    }
}

/// A word as POSIX sh reads it back: bare when it is letters, digits and `-_./=:,+@%` only, else
/// in single quotes (a `'` as `'\''`). Not `shlex::try_quote`: it also quotes `=`, `,` and `%` (a
/// logged `nvcc -arch=sm_90 ...` would read `nvcc '-arch=sm_90' ...`) and puts a word with a `'`
/// in double quotes (`"it's"`), so the logged command lines would change.
fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_quotes_what_needs_it() {
        let mut c = Cmd::new("nvcc").args(["-O3", "-Xptxas -dlcm=ca", "it's"]);
        c.env.insert("A".into(), "1 2".into());
        assert_eq!(c.line(), "A='1 2' nvcc -O3 '-Xptxas -dlcm=ca' 'it'\\''s'");
    }
}
