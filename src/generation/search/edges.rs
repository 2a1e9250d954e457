//! What the negative tests sent per class of edge value, and what each
//! class reached and broke: the report's tally, and the order the classes
//! are tried in by their yield (any protocol may keep one).

/// What one class of value was sent to and what it broke, for the
/// report and for ordering the classes by their yield.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ClassTally {
    /// Requests that carried a value of the class.
    pub requests: u64,
    /// The (operation, input) pairs that got one.
    #[serde(serialize_with = "count")]
    pub inputs: std::collections::BTreeSet<(usize, String)>,
    /// The operations that got one.
    #[serde(serialize_with = "count")]
    pub operations: std::collections::BTreeSet<usize>,
    /// The operations that answered 5xx to one.
    #[serde(serialize_with = "count")]
    pub operations_broken: std::collections::BTreeSet<usize>,
}

/// A set in a report: how many it holds.
fn count<T, S: serde::Serializer>(
    set: &std::collections::BTreeSet<T>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(set.len() as u64)
}
