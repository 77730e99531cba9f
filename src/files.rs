//! Reading the files sweep itself names (its lists, logs, a program's output) where something
//! else may have been put at the name: below every stage, importing none.

use std::path::{Path, PathBuf};

/// Opens `path` to read where it is a regular file (through links); anything else (a FIFO, a
/// device, a folder) is refused at once, never waited on: a FIFO planted at a name sweep reads,
/// or made there by a program, hung sweep for good (review 16a A1, A2).
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "it is no regular file",
        ));
    }
    Ok(f)
}

/// The text of `path` where it is a regular file ([`open_regular`]).
pub fn read_regular(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    open_regular(path)?.read_to_string(&mut text)?;
    Ok(text)
}

/// `path` absolute, with the links of its nearest folder that exists resolved and the rest of
/// the path after it as written: where it lands, for a folder that may not exist yet.
pub fn real_path(path: &Path) -> PathBuf {
    let mut base = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut rest = Vec::new();
    while !base.exists() {
        match (base.file_name().map(|n| n.to_os_string()), base.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                base = parent.to_path_buf();
            }
            _ => break,
        }
    }
    let mut real = base.canonicalize().unwrap_or(base);
    real.extend(rest.iter().rev());
    real
}
