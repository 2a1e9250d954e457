//! The genes of a GraphQL call, as EvoMaster models them: a root field, its
//! argument values (omittable when nullable or defaulted), and a selection
//! gene per composite type on the way down (which fields are selected, at
//! least one at every level; inline fragments on the possible types of
//! interfaces and unions).

use serde_json::Value;

use crate::execution::Breach;

/// How argument values appear in the rendered document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgMode {
    /// Inlined as GraphQL literals: `book(id: "1")`.
    Literals,
    /// Passed as variables: `query Q($id: ID!) { book(id: $id) }` plus `{"id": "1"}`.
    Variables,
}

/// One GraphQL call: a root field, its argument values, and the selection (genes).
#[derive(Debug, Clone, PartialEq)]
pub struct GqlCall {
    /// Name of the root type (`Query`, `Mutation`, or whatever the schema calls them).
    pub root: String,
    /// The root field called.
    pub field: String,
    /// One entry per argument of the field, in schema order; `None` = omitted
    /// (only for nullable or defaulted arguments).
    pub args: Vec<(String, Option<Value>)>,
    /// The selection on the field's type; `None` when the field is a scalar or enum.
    pub selection: Option<Selection>,
    /// For a negative test's call: the one argument it gets wrong, applied
    /// after earlier calls' values are bound.
    pub breach: Option<GqlBreach>,
}

/// A selection set on one composite type: never empty when rendered.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// The composite type selected on (the fragment's type for inline fragments).
    pub on: String,
    /// Whether `__typename` is selected (always, on interfaces and unions).
    pub typename: bool,
    /// Selected fields, in schema order.
    pub fields: Vec<FieldSelection>,
    /// Inline fragments `... on T { }` on possible object types (interfaces and
    /// unions only), in schema order; their fields never share a response name
    /// with `fields` or with each other.
    pub fragments: Vec<Selection>,
}

/// A selected field: its argument values and, for composite fields, its selection.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldSelection {
    /// The field's name.
    pub name: String,
    /// One entry per argument, in schema order; `None` = omitted.
    pub args: Vec<(String, Option<Value>)>,
    /// The field's own selection when its type is composite.
    pub selection: Option<Selection>,
}

impl Selection {
    pub(super) fn is_empty(&self) -> bool {
        !self.typename && self.fields.is_empty()
    }

    /// Response names used by the fields of this set and its fragments, but
    /// for fragment `except`.
    pub(super) fn used_names(&self, except: Option<usize>) -> Vec<String> {
        let mut names: Vec<String> = self.fields.iter().map(|f| f.name.clone()).collect();
        for (i, frag) in self.fragments.iter().enumerate() {
            if Some(i) != except {
                names.extend(frag.fields.iter().map(|f| f.name.clone()));
            }
        }
        names
    }
}

/// One wrong or unusual argument of a negative call.
#[derive(Debug, Clone, PartialEq)]
pub struct GqlBreach {
    /// The argument.
    pub arg: String,
    /// The input object field inside it, when the breach is one level down.
    pub field: Option<String>,
    /// The value sent; `None` leaves the argument (or field) out.
    pub value: Option<Value>,
    /// What the request notes it breaks.
    pub note: Breach,
}

impl GqlBreach {
    /// Applies the breach to `call`'s arguments, after earlier calls'
    /// values were bound.
    pub fn apply(&self, call: &mut GqlCall) {
        let Some((_, slot)) = call.args.iter_mut().find(|(n, _)| *n == self.arg) else {
            return;
        };
        match &self.field {
            None => *slot = self.value.clone(),
            Some(field) => {
                if let Some(Value::Object(obj)) = slot {
                    match &self.value {
                        Some(v) => {
                            obj.insert(field.clone(), v.clone());
                        }
                        None => {
                            obj.shift_remove(field);
                        }
                    }
                }
            }
        }
    }
}
