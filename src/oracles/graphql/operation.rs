//! The operation that was executed: picked from the document sent by its
//! name (or as the only one), with its root type and variables.

use apollo_compiler::ast;

use crate::model::graphql::{NamedType, TypeSystem};

/// The operation that was executed.
pub(super) struct Operation<'q> {
    /// `Query`, `Mutation` or `Subscription`.
    pub(super) word: &'static str,
    pub(super) root: &'q NamedType,
    pub(super) selection: &'q [ast::Selection],
    pub(super) variables: &'q [apollo_compiler::Node<ast::VariableDefinition>],
    /// Where each root field starts, `(line, column)`, in selection order.
    pub(super) root_starts: Vec<((usize, usize), &'q str)>,
    /// Where the operation's text ends, `(line, column)`.
    pub(super) end: Option<(usize, usize)>,
}

impl<'q> Operation<'q> {
    /// The operation named `name`, or the only one; `None` when there is no
    /// such operation or its root type is not in the schema.
    pub(super) fn pick(
        ts: &'q TypeSystem,
        doc: &'q ast::Document,
        name: Option<&str>,
    ) -> Option<Operation<'q>> {
        let op = crate::model::graphql::executed_operation(doc, name)?;
        let (word, root) = match op.operation_type {
            ast::OperationType::Query => ("Query", &ts.query_type),
            ast::OperationType::Mutation => ("Mutation", &ts.mutation_type),
            ast::OperationType::Subscription => ("Subscription", &ts.subscription_type),
        };
        let root = ts.get(root.as_deref()?)?;
        let at = |lc: apollo_compiler::parser::LineColumn| (lc.line, lc.column);
        let root_starts = op
            .selection_set
            .iter()
            .filter_map(|item| match item {
                ast::Selection::Field(f) => {
                    let start = f.line_column_range(&doc.sources)?.start;
                    Some((at(start), f.name.as_str()))
                }
                _ => None,
            })
            .collect();
        // The operation ends where its selection set does.
        let end = doc
            .definitions
            .iter()
            .find_map(|d| match d {
                ast::Definition::OperationDefinition(o) if std::ptr::eq(&**o, op) => {
                    o.line_column_range(&doc.sources)
                }
                _ => None,
            })
            .map(|r| at(r.end));
        Some(Operation {
            word,
            root,
            selection: &op.selection_set,
            variables: &op.variables,
            root_starts,
            end,
        })
    }
}
