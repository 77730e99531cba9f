//! The `sweep` command line: parses arguments and calls the library (src/cli/).

mod cli;

use clap::Parser;
use cli::commands::dispatch;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Like other command-line tools: `sweep list | head` ends quietly instead of panicking on a
    // closed stdout. (The start gate uses a socket with MSG_NOSIGNAL, so no child can raise it.)
    // SAFETY: sets the default disposition of one signal before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match cli::args::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => usage_error(e),
    };
    // Before any thread: whatever ends sweep, what its programs started goes with them. Only
    // where it starts programs: a fork on every `sweep analyze` or `list` would buy nothing.
    if cli.command.starts_programs() {
        sweep::exec::start_guard();
    }
    // A run outlives the terminal that watches it: `sweep run ... 2>&1 | head` killed it at its
    // next line (SIGPIPE) mid-sweep, its manifest left `running`. Its lines are then lost (its
    // writes to stdout and stderr ignore the failure), the run goes on to its end.
    if cli.command.runs_a_sweep() {
        // SAFETY: sets the disposition of one signal; children get the default back (std resets
        // SIGPIPE before exec).
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        }
    }
    // Every template is rendered in a process with memory and time limits (Tera has none): a
    // runaway one is stopped and named, not left to take the machine's memory.
    sweep::render::isolate();
    match dispatch(cli) {
        Ok(code) => ExitCode::from(code as u8),
        Err(e) => {
            // One line, whatever a spec's name or a file brought into the message.
            eprintln!("error: {}", cli::error::one_line(&e.to_string()));
            ExitCode::from(e.exit_code() as u8)
        }
    }
}

/// A usage error of the argument parser in one line, as every other error of sweep (review 19a
/// M5: clap's took 3 to 7, its tip and usage on lines of their own): `error: <what> (hint: <its
/// tip>; usage: <the command's>; more: --help)`, exit 2. Help and version print as clap prints
/// them.
fn usage_error(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    let text = e.render().to_string();
    let (mut what, mut tips, mut usage) = (Vec::new(), Vec::new(), None);
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(tip) = line.strip_prefix("tip:") {
            tips.push(tip.trim().to_string());
        } else if let Some(u) = line.strip_prefix("Usage:") {
            usage = Some(u.trim().to_string());
        } else if !line.starts_with("For more information") {
            what.push(
                line.strip_prefix("error:")
                    .unwrap_or(line)
                    .trim()
                    .to_string(),
            );
        }
    }
    let what = cli::error::one_line(&what.join(" "));
    let mut hint = tips;
    hint.extend(usage.map(|u| format!("usage: {u}")));
    // A value parser's own message has its hint already.
    if hint.is_empty() && what.contains("(hint:") {
        eprintln!("error: {what}");
    } else {
        hint.push("more: --help".into());
        eprintln!("error: {what} (hint: {})", hint.join("; "));
    }
    std::process::exit(e.exit_code());
}
