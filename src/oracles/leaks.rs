//! Leaks: text in a response body that tells an attacker how the server is
//! built. Each pattern is a literal that appears in real stack traces, SQL
//! driver errors or framework debug pages and almost never in API data; only
//! the first 64 KiB of a body are scanned.

/// A family of leak markers; each is the data of one registry row
/// ([`Judge::Leak`](super::registry::Judge::Leak)), which gives its code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// Stack traces of common runtimes.
    StackTrace,
    /// Error texts of SQL databases and drivers.
    Sql,
    /// Framework debug and default error pages.
    DebugPage,
}

/// Every family, in the order looked for.
const FAMILIES: [Family; 3] = [Family::StackTrace, Family::Sql, Family::DebugPage];

impl Family {
    /// Its markers, each with what it looks like.
    fn table(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Family::StackTrace => STACK_TRACES,
            Family::Sql => SQL,
            Family::DebugPage => DEBUG_PAGES,
        }
    }
}

/// Bytes of a body scanned for leaks.
const SCAN: usize = 64 * 1024;

/// Stack trace markers of common runtimes.
const STACK_TRACES: &[(&str, &str)] = &[
    ("stack backtrace:", "a Rust backtrace"),
    ("panicked at ", "a Rust panic report"),
    ("Traceback (most recent call last)", "a Python traceback"),
    ("Exception in thread \"", "a Java stack trace"),
    ("\tat java.", "a Java stack trace"),
    ("\tat org.", "a Java stack trace"),
    ("--- End of stack trace", "a .NET stack trace"),
    ("   at System.", "a .NET stack trace"),
    ("goroutine 1 [running]", "a Go stack trace"),
    ("[running]:\n", "a Go stack trace"),
    ("Stack trace:\n#0 ", "a PHP stack trace"),
    ("node:internal/", "a Node.js stack trace"),
    ("at Module._compile", "a Node.js stack trace"),
    (
        "at process.processTicksAndRejections",
        "a Node.js stack trace",
    ),
];

/// SQL error text of common databases and drivers.
const SQL: &[(&str, &str)] = &[
    (
        "You have an error in your SQL syntax",
        "a MySQL syntax error",
    ),
    ("SQLSTATE[", "a PDO SQL error"),
    ("syntax error at or near \"", "a PostgreSQL syntax error"),
    (
        "unterminated quoted string at or near",
        "a PostgreSQL syntax error",
    ),
    ("PG::SyntaxError", "a PostgreSQL error"),
    ("psycopg2.errors.", "a PostgreSQL error"),
    ("SQLITE_ERROR", "an SQLite error"),
    ("sqlite3.OperationalError", "an SQLite error"),
    (
        "Unclosed quotation mark after the character string",
        "an SQL Server error",
    ),
    ("java.sql.SQLException", "a JDBC error"),
    ("org.hibernate.exception", "a Hibernate error"),
    ("ORA-00933", "an Oracle SQL error"),
    ("ORA-01756", "an Oracle SQL error"),
];

/// Framework debug and default error pages.
const DEBUG_PAGES: &[(&str, &str)] = &[
    ("Werkzeug Debugger", "the Werkzeug (Flask) debugger"),
    ("<code>DEBUG = True</code>", "Django's debug page"),
    (
        "Action Controller: Exception caught",
        "the Rails exception page",
    ),
    ("Whitelabel Error Page", "Spring Boot's error page"),
    ("Server Error in '/' Application", "the ASP.NET error page"),
    ("Whoops! There was an error", "Laravel's debug page"),
    ("Symfony Exception", "the Symfony exception page"),
];

/// The leak a body shows, if any: (family, what it looks like, the marker).
pub fn find(body: &str) -> Option<(Family, &'static str, &'static str)> {
    let mut end = body.len().min(SCAN);
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    let text = &body[..end];
    // JSON bodies carry line breaks and tabs escaped; look at both forms.
    let unescaped;
    let text = if text.contains("\\n") || text.contains("\\t") {
        unescaped = text
            .replace("\\n", "\n")
            .replace("\\t", "\t")
            .replace("\\\"", "\"");
        unescaped.as_str()
    } else {
        text
    };
    // The first marker in the order looked for (kind, then table order):
    // the lowest pattern number among all that occur.
    let first = markers()
        .find_overlapping_iter(text)
        .map(|m| m.pattern().as_usize())
        .min()?;
    let mut at = first;
    for family in FAMILIES {
        if let Some(&(marker, what)) = family.table().get(at) {
            return Some((family, what, marker));
        }
        at -= family.table().len();
    }
    None
}

/// Every marker, in the order looked for, in one automaton built once.
fn markers() -> &'static aho_corasick::AhoCorasick {
    static MARKERS: std::sync::LazyLock<aho_corasick::AhoCorasick> =
        std::sync::LazyLock::new(|| {
            let all = FAMILIES
                .into_iter()
                .flat_map(Family::table)
                .map(|(marker, _)| *marker);
            aho_corasick::AhoCorasick::new(all).expect("the leak markers are plain literals")
        });
    &MARKERS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traces_sql_and_debug_pages_are_recognised_in_json_too() {
        let rust = r#"{"errors":[{"message":"called unwrap\nthread 'x' panicked at src/a.rs:1:2:\nstack backtrace:\n 0: x"}]}"#;
        assert_eq!(find(rust).unwrap().0, Family::StackTrace);
        assert_eq!(
            find("<p>You have an error in your SQL syntax; check the manual</p>")
                .unwrap()
                .0,
            Family::Sql
        );
        assert_eq!(
            find("<html><h1>Whitelabel Error Page</h1></html>")
                .unwrap()
                .0,
            Family::DebugPage
        );
    }

    #[test]
    fn the_first_marker_in_the_order_looked_for_wins() {
        // A SQL error inside a stack trace is a stack trace leak; within a
        // table, the earlier marker, wherever each stands in the body.
        let both = "SQLSTATE[42000] ... Traceback (most recent call last) ... panicked at x";
        assert_eq!(
            find(both),
            Some((Family::StackTrace, "a Rust panic report", "panicked at "))
        );
        assert_eq!(
            find("Symfony Exception; Whitelabel Error Page"),
            Some((
                Family::DebugPage,
                "Spring Boot's error page",
                "Whitelabel Error Page"
            ))
        );
        assert_eq!(
            find("x ORA-01756 y"),
            Some((Family::Sql, "an Oracle SQL error", "ORA-01756"))
        );
    }

    #[test]
    fn ordinary_bodies_are_not_leaks() {
        for body in [
            r#"{"message":"internal error"}"#,
            r#"{"title":"How to read a stack trace","text":"at the start"}"#,
            r#"{"query":"select * from books"}"#,
            "",
        ] {
            assert_eq!(find(body), None, "{body}");
        }
    }
}
