//! The demo scored against the faults planted in it (`models/demo/FAULTS.md`,
//! never read by the search): which were found, which missed.

use crate::reports::Report;

/// A fault listed in `models/demo/FAULTS.md`.
#[derive(Debug, Clone, PartialEq)]
pub struct PlantedFault {
    /// Its id (`F1`).
    pub id: String,
    /// The oracle codes that may report it (the REST one first; a fault
    /// reachable through both APIs has one per API).
    pub oracles: Vec<String>,
    /// Operations where it may be reported.
    pub operations: Vec<String>,
}

/// Reads the table of `FAULTS.md`: `| id | oracle | operation | … |`, taking the
/// backquoted words of the oracle and operation cells.
pub fn planted_faults(markdown: &str) -> Vec<PlantedFault> {
    let ticked = |cell: &str| -> Vec<String> {
        cell.split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 1)
            .map(|(_, s)| s.to_string())
            .collect()
    };
    markdown
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line
                .trim()
                .trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect();
            let id = cells.first()?;
            if !(id.starts_with('F') && id[1..].chars().all(|c| c.is_ascii_digit()) && id.len() > 1)
            {
                return None;
            }
            let oracles = ticked(cells.get(1)?);
            if oracles.is_empty() {
                return None;
            }
            Some(PlantedFault {
                id: id.to_string(),
                oracles,
                operations: ticked(cells.get(2)?),
            })
        })
        .collect()
}

/// How the demo did against its planted faults.
pub struct Score {
    /// The planted faults scored (those on some operation the run tested).
    pub planted: Vec<PlantedFault>,
    /// Their ids, of those a fault of the report shows.
    pub found: Vec<String>,
    /// Planted faults only on operations the run left out, not scored.
    pub excluded: usize,
}

impl Score {
    /// Scores `report` against the table of `faults_md`; faults planted only
    /// on the operations `left_out` cannot be found and are not scored.
    pub fn of(faults_md: &str, report: &Report, left_out: &[String]) -> Score {
        let mut planted = planted_faults(faults_md);
        let all = planted.len();
        planted.retain(|p| p.operations.iter().any(|o| !left_out.contains(o)));
        let found = planted
            .iter()
            .filter(|p| {
                report.faults.iter().any(|f| {
                    p.oracles.iter().any(|o| o == f.code.as_str())
                        && p.operations.contains(&f.operation)
                })
            })
            .map(|p| p.id.clone())
            .collect();
        Score {
            excluded: all - planted.len(),
            planted,
            found,
        }
    }

    /// `planted faults found: 14 of 14 (F1, …)`.
    pub fn line(&self) -> String {
        let ids = if self.found.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.found.join(", "))
        };
        format!(
            "planted faults found: {} of {}{ids}",
            self.found.len(),
            self.planted.len()
        )
    }

    /// The ids of the planted faults no fault shows.
    pub fn missed(&self) -> Vec<&str> {
        self.planted
            .iter()
            .filter(|p| !self.found.contains(&p.id))
            .map(|p| p.id.as_str())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const FAULTS_MD: &str = include_str!("../../models/demo/FAULTS.md");

    #[test]
    fn the_shipped_fault_table_parses() {
        let planted = planted_faults(FAULTS_MD);
        assert!(planted.len() >= 8, "{planted:?}");
        let f1 = planted.iter().find(|p| p.id == "F1").unwrap();
        assert_eq!(f1.oracles, ["server_error", "graphql_internal_error"]);
        assert_eq!(f1.operations, ["placeOrder", "Mutation.placeOrder"]);
        let f7 = planted.iter().find(|p| p.id == "F7").unwrap();
        assert!(f7.operations.contains(&"Query.book".to_string()), "{f7:?}");
    }
}
