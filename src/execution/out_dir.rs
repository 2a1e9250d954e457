//! The output folder (`--out`). Every file a run writes there goes through
//! an [`OutDir`], which
//!
//! - follows no symbolic link inside the folder: a link where a file or
//!   folder of the run goes is refused, naming it; a file is written under a
//!   new temporary name and renamed over its place (a rename replaces a link,
//!   it never writes through one); a stream is created new (`O_EXCL`, which
//!   fails on a link);
//! - deletes only what a run of Cartograph wrote: [`MANIFEST`] lists each
//!   file a run writes, as it writes it. The next run deletes those (when they
//!   are still regular files in real folders) and nothing else, refuses to
//!   start when a name of [`FILES`] holds another file, and writes a
//!   per-fault or per-test file beside another's file of the same name rather
//!   than over it;
//! - is written by one run at a time: the manifest is locked for the run's
//!   length (an advisory lock, which the system drops when the process ends,
//!   so a crashed run leaves no stale lock behind).
//!
//! `--out` itself may be a link (a folder kept elsewhere, on purpose): the
//! links refused are those inside it.

use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

/// The manifest and lock of an output folder: the files the last run wrote.
pub const MANIFEST: &str = ".cartograph-files";

/// The most of a manifest read: far more names than a run writes.
const MANIFEST_BYTES: u64 = 64 << 20;

/// The files a run writes at the top of the folder (checked before it starts).
pub const FILES: &[&str] = &[
    "report.json",
    "report.html",
    "junit.xml",
    "report.sarif",
    "spec-fixes.overlay.yaml",
    "graph-initial.json",
    "graph-final.json",
    "suite.json",
    "trace.ndjson",
    "replay.ndjson",
];

/// The folders a run writes in (checked before it starts): the reproducers
/// and the regression suite.
pub const FOLDERS: &[&str] = &["reproducers", "tests"];

/// What to do about a refused name, said once for every refusal.
const ADVICE: &str = "Cartograph follows no symbolic link inside --out and replaces no file a run of it did not write (the folder's .cartograph-files lists those): move them away, or choose another --out";

/// The folders open in this process: a command that opens the folder its run
/// opens too (the demo, whose report joins both its parts') shares one.
static OPEN: Mutex<Vec<(PathBuf, Weak<OutDir>)>> = Mutex::new(Vec::new());

/// Why a run may not write in its output folder (the message names it).
#[derive(Debug, thiserror::Error)]
pub enum OutDirError {
    /// A file operation failed.
    #[error("--out: cannot {what} {}: {error}", path.display())]
    Io {
        /// What could not be done.
        what: &'static str,
        /// Where.
        path: PathBuf,
        /// Why not.
        error: io::Error,
    },
    /// Another run holds the folder.
    #[error(
        "--out {}: another Cartograph run{} is writing in this folder (it holds {manifest}): wait until it ends, or choose another --out",
        root.display(),
        pid.map(|p| format!(" (process {p})")).unwrap_or_default(),
        manifest = MANIFEST
    )]
    Busy {
        /// The folder.
        root: PathBuf,
        /// The other run's process, when its manifest says.
        pid: Option<u32>,
    },
    /// Names the run writes hold links or other files.
    #[error("--out {}: {}. {advice}", root.display(), problems.join("; "), advice = ADVICE)]
    Refused {
        /// The folder.
        root: PathBuf,
        /// Each name and what is there.
        problems: Vec<String>,
    },
}

/// An output folder, locked for one run, that writes only what its manifest
/// records and follows no link inside it.
#[derive(Debug)]
pub struct OutDir {
    /// The folder as given (for messages).
    root: PathBuf,
    /// The folder with `root`'s own links resolved: where the files go.
    real: PathBuf,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    /// The manifest, locked, open for appending this run's names.
    manifest: File,
    /// The names this run wrote (its own to replace).
    written: BTreeSet<String>,
}

impl OutDir {
    /// Opens `root` for a run: creates it, locks it, checks the names the run
    /// writes, and deletes the files the last run wrote. A folder this process
    /// holds already is shared, as it is.
    pub fn open(root: &Path) -> Result<Arc<OutDir>, OutDirError> {
        let io = |what, error| OutDirError::Io {
            what,
            path: root.to_path_buf(),
            error,
        };
        std::fs::create_dir_all(root).map_err(|e| io("create the folder", e))?;
        // Resolved once: a link that is `--out` itself is followed here, on
        // purpose, and never again.
        let real = root
            .canonicalize()
            .map_err(|e| io("resolve the folder", e))?;
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        open.retain(|(_, dir)| dir.strong_count() > 0);
        if let Some(dir) = open
            .iter()
            .find(|(at, _)| *at == real)
            .and_then(|(_, dir)| dir.upgrade())
        {
            return Ok(dir);
        }
        let dir = Arc::new(OutDir::take(root, real)?);
        open.push((dir.real.clone(), Arc::downgrade(&dir)));
        Ok(dir)
    }

    /// Locks the folder, checks it and deletes the last run's files.
    fn take(root: &Path, real: PathBuf) -> Result<OutDir, OutDirError> {
        let shown = root.join(MANIFEST);
        let io = |what, error| OutDirError::Io {
            what,
            path: shown.clone(),
            error,
        };
        let mut manifest = match open_manifest(&real.join(MANIFEST)) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => {
                return Err(OutDirError::Refused {
                    root: root.to_path_buf(),
                    problems: vec![format!("{} {e}", shown.display())],
                });
            }
            Err(e) => return Err(io("open", e)),
        };
        match manifest.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(OutDirError::Busy {
                    root: root.to_path_buf(),
                    pid: holder(&mut manifest),
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io("lock", e)),
        }
        // Whatever a manifest holds, only names inside the folder count, and
        // a planted giant is read no further than any run's could reach.
        let mut bytes = Vec::new();
        (&mut manifest)
            .take(MANIFEST_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|e| io("read", e))?;
        let text = String::from_utf8_lossy(&bytes);
        let listed: BTreeSet<&str> = text
            .lines()
            .filter(|l| !l.starts_with('#') && safe(l))
            .collect();
        let problems = check(&real, root, &listed).map_err(|error| OutDirError::Io {
            what: "look into the folder",
            path: root.to_path_buf(),
            error,
        })?;
        if !problems.is_empty() {
            return Err(OutDirError::Refused {
                root: root.to_path_buf(),
                problems,
            });
        }
        for rel in &listed {
            remove_written(&real, rel).map_err(|error| OutDirError::Io {
                what: "delete the last run's file",
                path: root.join(rel),
                error,
            })?;
        }
        manifest.set_len(0).map_err(|e| io("write", e))?;
        manifest.rewind().map_err(|e| io("write", e))?;
        writeln!(
            manifest,
            "# The files the last Cartograph run (process {}) wrote in this folder: the next run deletes these, and nothing else.",
            std::process::id()
        )
        .map_err(|e| io("write", e))?;
        Ok(OutDir {
            root: root.to_path_buf(),
            real,
            state: Mutex::new(State {
                manifest,
                written: BTreeSet::new(),
            }),
        })
    }

    /// The folder, as given.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `rel` (a `/`-separated name inside the folder) under the folder as
    /// given, for messages.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Writes `bytes` as `rel`, replacing what this run wrote there before.
    pub fn write(&self, rel: &str, bytes: &[u8]) -> io::Result<()> {
        self.put(rel, bytes, false)
    }

    /// [`OutDir::write`] for a script: executable by its owner and others.
    pub fn write_executable(&self, rel: &str, bytes: &[u8]) -> io::Result<()> {
        self.put(rel, bytes, true)
    }

    /// A new, empty file `rel` to stream into (a trace).
    pub fn create(&self, rel: &str) -> io::Result<File> {
        let mut state = self.state();
        let (path, existed) = self.prepare(&mut state, rel)?;
        if existed {
            std::fs::remove_file(&path)?;
        }
        OpenOptions::new().write(true).create_new(true).open(&path)
    }

    /// The sub-folder `rel`, created when missing, refused when it is a link
    /// or not a folder (the demo's `graphql/`, a run's folder of its own).
    pub fn folder(&self, rel: &str) -> io::Result<PathBuf> {
        if !safe(rel) {
            return Err(unsafe_name(rel));
        }
        let mut dir = self.real.clone();
        for part in rel.split('/') {
            dir.push(part);
            real_folder(&dir)?;
        }
        Ok(self.root.join(rel))
    }

    /// The first of `stem`, `stem-2`, `stem-3`… for which no `folder/STEM.EXT`
    /// of `exts` exists: a per-fault or per-test file goes beside a file it
    /// may not replace, never over it.
    pub fn free_stem(&self, folder: &str, stem: &str, exts: &[&str]) -> String {
        let taken = |s: &str| {
            exts.iter().any(|ext| {
                std::fs::symlink_metadata(self.real.join(folder).join(format!("{s}.{ext}"))).is_ok()
            })
        };
        if !taken(stem) {
            return stem.to_string();
        }
        (2..)
            .map(|n| format!("{stem}-{n}"))
            .find(|s| !taken(s))
            .unwrap_or_default()
    }

    /// `path`'s name inside the folder, when it lies there (by its words, or
    /// by its real parent): a file a person names inside `--out` (`--events`)
    /// is written as the run's own are.
    pub fn inside(&self, path: &Path) -> Option<String> {
        let name = path.file_name()?.to_str()?.to_string();
        let parent = path.parent()?;
        let rel = match parent.strip_prefix(&self.root) {
            Ok(rel) => rel.to_path_buf(),
            Err(_) => {
                let parent = if parent.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    parent
                };
                parent
                    .canonicalize()
                    .ok()?
                    .strip_prefix(&self.real)
                    .ok()?
                    .to_path_buf()
            }
        };
        let mut parts: Vec<String> = Vec::new();
        for c in rel.components() {
            match c {
                std::path::Component::Normal(p) => parts.push(p.to_str()?.to_string()),
                std::path::Component::CurDir => {}
                _ => return None,
            }
        }
        parts.push(name);
        let rel = parts.join("/");
        safe(&rel).then_some(rel)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes `bytes` under a new temporary name beside `rel`, then renames
    /// it over `rel`.
    fn put(&self, rel: &str, bytes: &[u8], executable: bool) -> io::Result<()> {
        let mut state = self.state();
        let (path, _) = self.prepare(&mut state, rel)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(if executable { 0o755 } else { 0o644 });
        }
        #[cfg(not(unix))]
        let _ = executable;
        let mut n = 0u32;
        let (tmp, mut file) = loop {
            let tmp = path.with_file_name(format!(".{name}.{}-{n}.tmp", std::process::id()));
            match options.open(&tmp) {
                Ok(file) => break (tmp, file),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && n < 100 => n += 1,
                Err(e) => return Err(e),
            }
        };
        let written = file
            .write_all(bytes)
            .and_then(|()| file.flush())
            .and_then(|()| std::fs::rename(&tmp, &path));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }

    /// Checks that `rel` may be written (its folders real, nothing there but
    /// a file this run wrote) and records it in the manifest first, so that
    /// a run that dies leaves it listed; the path, and whether this run's
    /// file is there.
    fn prepare(&self, state: &mut State, rel: &str) -> io::Result<(PathBuf, bool)> {
        if !safe(rel) {
            return Err(unsafe_name(rel));
        }
        let mut path = self.real.clone();
        let mut parts = rel.split('/').peekable();
        while let Some(part) = parts.next() {
            path.push(part);
            if parts.peek().is_some() {
                real_folder(&path)?;
            }
        }
        let existed = match std::fs::symlink_metadata(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => false,
            Err(e) => return Err(e),
            Ok(m) if m.is_file() && state.written.contains(rel) => true,
            Ok(m) if m.is_symlink() => return Err(refused("a symbolic link is there")),
            Ok(_) => return Err(refused("a file no Cartograph run wrote is there")),
        };
        if !state.written.contains(rel) {
            writeln!(state.manifest, "{rel}")?;
            state.written.insert(rel.to_string());
        }
        Ok((path, existed))
    }
}

/// The manifest opened for reading and writing (created when missing),
/// never through a link, and only when it is a regular file (a pipe would
/// block the read); a refusal is `InvalidInput`, its message what is there.
fn open_manifest(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_symlink() => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "is a symbolic link",
            ));
        }
        Ok(m) if !m.is_file() => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "is not a regular file",
            ));
        }
        _ => {}
    }
    let file = match options.open(path) {
        // O_NOFOLLOW's answer to a link made since the look above.
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "is a symbolic link",
            ));
        }
        other => other?,
    };
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is not a regular file",
        ));
    }
    Ok(file)
}

/// The process a locked manifest names as its writer.
fn holder(manifest: &mut File) -> Option<u32> {
    let mut head = String::new();
    manifest.take(400).read_to_string(&mut head).ok()?;
    let after = head.lines().next()?.split("(process ").nth(1)?;
    after.split(')').next()?.parse().ok()
}

/// Whether `rel` is a plain name inside the folder: `/`-separated parts,
/// none empty, `.` or `..`, no other separator; not the manifest.
fn safe(rel: &str) -> bool {
    !rel.is_empty()
        && rel != MANIFEST
        && !rel.contains(['\\', '\0', '\n', '\r'])
        && rel
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

fn unsafe_name(rel: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{rel:?} is not a name inside the output folder"),
    )
}

fn refused(what: &str) -> io::Error {
    io::Error::other(format!("{what} ({ADVICE})"))
}

/// `dir` as a real folder: created when missing, refused when a link or a
/// file is there.
fn real_folder(dir: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(m) if m.is_symlink() => Err(refused(&format!("{} is a symbolic link", dir.display()))),
        Ok(_) => Err(refused(&format!("{} is not a folder", dir.display()))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            match std::fs::create_dir(dir) {
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
                _ => {}
            }
            // Made, or made by someone else meanwhile: a folder either way?
            match std::fs::symlink_metadata(dir) {
                Ok(m) if m.is_dir() => Ok(()),
                Ok(_) => Err(refused(&format!("{} is not a folder", dir.display()))),
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    }
}

/// What is wrong with the names a run writes, each named as `root` gives
/// them (`real` is where they are).
fn check(real: &Path, root: &Path, listed: &BTreeSet<&str>) -> io::Result<Vec<String>> {
    let mut problems = Vec::new();
    let look = |name: &str| match std::fs::symlink_metadata(real.join(name)) {
        Ok(m) => Ok(Some(m)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    };
    for name in FILES {
        let shown = root.join(name);
        match look(name)? {
            None => {}
            Some(m) if m.is_symlink() => {
                problems.push(format!("{} is a symbolic link", shown.display()))
            }
            Some(m) if m.is_file() && listed.contains(name) => {}
            Some(_) => problems.push(format!(
                "{} is not a file a Cartograph run wrote",
                shown.display()
            )),
        }
    }
    for name in FOLDERS {
        let shown = root.join(name);
        match look(name)? {
            None => {}
            Some(m) if m.is_symlink() => {
                problems.push(format!("{} is a symbolic link", shown.display()))
            }
            Some(m) if m.is_dir() => {}
            Some(_) => problems.push(format!("{} is not a folder", shown.display())),
        }
    }
    Ok(problems)
}

/// Deletes `rel`, which the manifest lists, when it is still a regular file
/// in real folders: a link or anything else there now is not what the run
/// wrote, and stays.
fn remove_written(real: &Path, rel: &str) -> io::Result<()> {
    let mut path = real.to_path_buf();
    let mut parts = rel.split('/').peekable();
    while let Some(part) = parts.next() {
        path.push(part);
        let Ok(m) = std::fs::symlink_metadata(&path) else {
            return Ok(());
        };
        let fits = if parts.peek().is_some() {
            m.is_dir()
        } else {
            m.is_file()
        };
        if !fits {
            return Ok(());
        }
    }
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    use std::os::unix::fs::symlink;

    fn listing(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn writes_record_and_the_next_run_deletes_only_those() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("out");
        {
            let out = OutDir::open(&root).unwrap();
            out.write("report.json", b"{}").unwrap();
            out.write("report.json", b"{\"again\": 1}").unwrap();
            out.write("tests/001-a.hurl", b"GET x").unwrap();
            std::io::Write::write_all(&mut out.create("trace.ndjson").unwrap(), b"line\n").unwrap();
        }
        std::fs::write(root.join("tests/mine.hurl"), "GET mine").unwrap();
        std::fs::write(root.join("NOTES.md"), "notes").unwrap();
        let manifest = std::fs::read_to_string(root.join(MANIFEST)).unwrap();
        assert!(manifest.contains("\nreport.json\n"), "{manifest}");
        assert_eq!(manifest.matches("report.json").count(), 1, "{manifest}");
        let out = OutDir::open(&root).unwrap();
        assert_eq!(listing(&root), [MANIFEST, "NOTES.md", "tests"]);
        assert_eq!(listing(&root.join("tests")), ["mine.hurl"]);
        // The next run's name goes beside a file it may not replace.
        assert_eq!(out.free_stem("tests", "mine", &["hurl"]), "mine-2");
        assert_eq!(out.free_stem("tests", "001-a", &["hurl"]), "001-a");
        let err = out.write("tests/mine.hurl", b"x").unwrap_err();
        assert!(err.to_string().contains("no Cartograph run wrote"), "{err}");
        assert_eq!(
            std::fs::read_to_string(root.join("tests/mine.hurl")).unwrap(),
            "GET mine"
        );
    }

    #[test]
    fn a_foreign_file_at_a_run_name_refuses_the_folder_naming_it() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("report.json"), "mine").unwrap();
        std::fs::write(tmp.path().join("tests"), "a file").unwrap();
        let err = OutDir::open(tmp.path()).unwrap_err().to_string();
        assert!(
            err.contains("report.json is not a file a Cartograph run wrote"),
            "{err}"
        );
        assert!(err.contains("tests is not a folder"), "{err}");
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("report.json")).unwrap(),
            "mine"
        );
    }

    #[test]
    fn a_manifest_names_nothing_outside_the_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("out");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(tmp.path().join("victim"), "keep").unwrap();
        let absolute = tmp.path().join("victim");
        std::fs::write(
            root.join(MANIFEST),
            format!("../victim\nsub/../../victim\n{}\n./x\n", absolute.display()),
        )
        .unwrap();
        drop(OutDir::open(&root).unwrap());
        assert_eq!(std::fs::read_to_string(&absolute).unwrap(), "keep");
        assert!(!safe("../x") && !safe("/x") && !safe("a//b") && !safe(MANIFEST) && !safe("a\\b"));
        assert!(safe("tests/001-a.hurl"));
    }

    #[cfg(unix)]
    #[test]
    fn links_inside_are_refused_and_never_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("precious"), "keep").unwrap();
        let root = tmp.path().join("out");
        std::fs::create_dir(&root).unwrap();
        symlink(&elsewhere, root.join("reproducers")).unwrap();
        symlink(elsewhere.join("precious"), root.join("report.json")).unwrap();
        // Even a manifest that lists them deletes nothing through them.
        std::fs::write(root.join(MANIFEST), "report.json\nreproducers/precious\n").unwrap();
        let err = OutDir::open(&root).unwrap_err().to_string();
        assert!(err.contains("reproducers is a symbolic link"), "{err}");
        assert!(err.contains("report.json is a symbolic link"), "{err}");
        assert_eq!(listing(&elsewhere), ["precious"]);
        assert_eq!(
            std::fs::read_to_string(elsewhere.join("precious")).unwrap(),
            "keep"
        );

        // A link made while the run goes is refused where it is written.
        std::fs::remove_file(root.join("reproducers")).unwrap();
        std::fs::remove_file(root.join("report.json")).unwrap();
        let out = OutDir::open(&root).unwrap();
        assert_eq!(listing(&elsewhere), ["precious"]);
        symlink(elsewhere.join("precious"), root.join("junit.xml")).unwrap();
        symlink(&elsewhere, root.join("tests")).unwrap();
        assert!(out.write("junit.xml", b"x").is_err());
        assert!(out.create("junit.xml").is_err());
        assert!(out.write("tests/001-a.hurl", b"x").is_err());
        assert!(out.folder("tests").is_err());
        assert_eq!(listing(&elsewhere), ["precious"]);
        assert_eq!(
            std::fs::read_to_string(elsewhere.join("precious")).unwrap(),
            "keep"
        );
        // Nor is this run's own file, replaced by a link, written through.
        out.write("graph-final.json", b"{}").unwrap();
        std::fs::remove_file(root.join("graph-final.json")).unwrap();
        symlink(elsewhere.join("precious"), root.join("graph-final.json")).unwrap();
        assert!(out.write("graph-final.json", b"x").is_err());
        assert!(out.create("graph-final.json").is_err());
        assert_eq!(
            std::fs::read_to_string(elsewhere.join("precious")).unwrap(),
            "keep"
        );
    }

    #[cfg(unix)]
    #[test]
    fn the_folder_itself_may_be_a_link_and_its_manifest_may_not() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let root = tmp.path().join("out");
        symlink(&real, &root).unwrap();
        OutDir::open(&root)
            .unwrap()
            .write("report.json", b"{}")
            .unwrap();
        assert!(real.join("report.json").is_file());

        let other = tmp.path().join("other");
        std::fs::create_dir(&other).unwrap();
        std::fs::write(tmp.path().join("victim"), "report.json\n").unwrap();
        symlink(tmp.path().join("victim"), other.join(MANIFEST)).unwrap();
        let err = OutDir::open(&other).unwrap_err().to_string();
        assert!(
            err.contains(".cartograph-files is a symbolic link"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("victim")).unwrap(),
            "report.json\n"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_pipe_is_neither_read_nor_written() {
        let tmp = tempfile::tempdir().unwrap();
        let mkfifo = |path: PathBuf| {
            let made = std::process::Command::new("mkfifo").arg(path).status();
            assert!(made.as_ref().is_ok_and(|s| s.success()), "mkfifo: {made:?}");
        };
        mkfifo(tmp.path().join("report.json"));
        let err = OutDir::open(tmp.path()).unwrap_err().to_string();
        assert!(
            err.contains("report.json is not a file a Cartograph run wrote"),
            "{err}"
        );
        std::fs::remove_file(tmp.path().join("report.json")).unwrap();
        std::fs::remove_file(tmp.path().join(MANIFEST)).unwrap();
        mkfifo(tmp.path().join(MANIFEST));
        let err = OutDir::open(tmp.path()).unwrap_err().to_string();
        assert!(err.contains("is not a regular file"), "{err}");
    }

    #[test]
    fn a_second_run_is_refused_while_the_first_holds_the_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let first = OutDir::open(tmp.path()).unwrap();
        // This process shares its own folder; another's lock is refused.
        assert!(Arc::ptr_eq(&first, &OutDir::open(tmp.path()).unwrap()));
        let real = tmp.path().canonicalize().unwrap();
        match OutDir::take(tmp.path(), real.clone()) {
            Err(e @ OutDirError::Busy { .. }) => {
                let text = e.to_string();
                assert!(
                    text.contains(&format!("(process {})", std::process::id())),
                    "{text}"
                );
            }
            other => panic!("not refused: {other:?}"),
        }
        first.write("report.json", b"{}").unwrap();
        drop(first);
        // Released with its holder: nothing stale is left.
        let next = OutDir::take(tmp.path(), real).unwrap();
        drop(next);
    }

    #[test]
    fn a_name_given_inside_the_folder_is_found() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("out");
        let out = OutDir::open(&root).unwrap();
        assert_eq!(
            out.inside(&root.join("events.ndjson")).as_deref(),
            Some("events.ndjson")
        );
        assert_eq!(
            out.inside(&root.join("a/e.ndjson")).as_deref(),
            Some("a/e.ndjson")
        );
        assert_eq!(
            out.inside(&root.canonicalize().unwrap().join("e.ndjson"))
                .as_deref(),
            Some("e.ndjson")
        );
        assert_eq!(out.inside(&tmp.path().join("e.ndjson")), None);
        assert_eq!(out.inside(&root.join("../e.ndjson")), None);
    }
}
