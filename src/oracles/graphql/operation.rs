//! The operation that was executed: picked from the document sent by its
//! name (or as the only one), with its root type and variables.

use graphql_parser::query as q;

use crate::model::graphql::{NamedType, TypeSystem};

/// The operation that was executed.
pub(super) struct Operation<'q> {
    /// `Query`, `Mutation` or `Subscription`.
    pub(super) word: &'static str,
    pub(super) root: &'q NamedType,
    pub(super) selection: &'q q::SelectionSet<'q, &'q str>,
    pub(super) variables: &'q [q::VariableDefinition<'q, &'q str>],
}

impl<'q> Operation<'q> {
    /// The operation named `name`, or the only one; `None` when there is no
    /// such operation or its root type is not in the schema.
    pub(super) fn pick(
        ts: &'q TypeSystem,
        doc: &'q q::Document<'q, &'q str>,
        name: Option<&str>,
    ) -> Option<Operation<'q>> {
        let op = crate::model::graphql::executed_operation(doc, name)?;
        let (word, root, selection, variables): (_, _, _, &[_]) = match op {
            q::OperationDefinition::SelectionSet(s) => ("Query", &ts.query_type, s, &[]),
            q::OperationDefinition::Query(x) => (
                "Query",
                &ts.query_type,
                &x.selection_set,
                &x.variable_definitions,
            ),
            q::OperationDefinition::Mutation(x) => (
                "Mutation",
                &ts.mutation_type,
                &x.selection_set,
                &x.variable_definitions,
            ),
            q::OperationDefinition::Subscription(x) => (
                "Subscription",
                &ts.subscription_type,
                &x.selection_set,
                &x.variable_definitions,
            ),
        };
        let root = ts.get(root.as_deref()?)?;
        Some(Operation {
            word,
            root,
            selection,
            variables,
        })
    }
}
