//! Writing GraphQL: a call as one valid query document, with its argument
//! values inlined as literals (as EvoMaster sends them) or passed as
//! variables (as production clients do); and a type system as SDL.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::generate::{GqlGenerator, kind};
use super::genes::{ArgMode, GqlCall, Selection};
use crate::model::graphql::{BUILTIN_SCALARS, write_string_literal};
use crate::model::graphql::{InputValue, TypeKind, TypeRef, TypeSystem};

impl GqlGenerator {
    /// The query document of `call` and its variables (an empty object in
    /// literal mode): one operation, named `Q`/`M`/`S` in variable mode.
    pub fn render(&self, call: &GqlCall, mode: ArgMode) -> (String, Value) {
        let root = self.root_type(&call.root);
        let (keyword, name) = if Some(root) == self.ts.mutation_type.as_deref() {
            ("mutation", "M")
        } else if Some(root) == self.ts.subscription_type.as_deref() {
            ("subscription", "S")
        } else {
            ("query", "Q")
        };
        let mut r = Renderer {
            generator: self,
            mode,
            body: String::new(),
            var_defs: Vec::new(),
            vars: Map::new(),
        };
        r.field(root, &call.field, &call.args, call.selection.as_ref());
        let mut doc = String::from(keyword);
        if mode == ArgMode::Variables {
            doc.push(' ');
            doc.push_str(name);
            if !r.var_defs.is_empty() {
                let defs: Vec<String> = r
                    .var_defs
                    .iter()
                    .map(|(n, t)| format!("${n}: {t}"))
                    .collect();
                let _ = write!(doc, "({})", defs.join(", "));
            }
        }
        let _ = write!(doc, " {{ {} }}", r.body);
        (doc, Value::Object(r.vars))
    }
}

/// Writes a call's document, collecting variables on the way.
struct Renderer<'g> {
    generator: &'g GqlGenerator,
    mode: ArgMode,
    body: String,
    var_defs: Vec<(String, String)>,
    vars: Map<String, Value>,
}

impl Renderer<'_> {
    fn field(
        &mut self,
        parent: &str,
        name: &str,
        args: &[(String, Option<Value>)],
        selection: Option<&Selection>,
    ) {
        let ts = &self.generator.ts;
        self.body.push_str(name);
        let def = ts.get(parent).and_then(|t| t.field(name));
        let mut first = true;
        for (arg, value) in args {
            let (Some(value), Some(arg_def)) = (
                value,
                def.and_then(|d| d.args.iter().find(|a| a.name == *arg)),
            ) else {
                continue;
            };
            self.body.push_str(if first { "(" } else { ", " });
            first = false;
            self.body.push_str(arg);
            self.body.push_str(": ");
            match self.mode {
                ArgMode::Literals => write_literal(ts, &arg_def.ty, value, &mut self.body),
                ArgMode::Variables => {
                    let var = self.variable_name(arg);
                    let _ = write!(self.body, "${var}");
                    self.var_defs.push((var.clone(), arg_def.ty.to_string()));
                    self.vars.insert(var, value.clone());
                }
            }
        }
        if !first {
            self.body.push(')');
        }
        if let Some(sel) = selection {
            self.body.push(' ');
            self.selection(sel);
        }
    }

    fn selection(&mut self, sel: &Selection) {
        self.body.push('{');
        // A set that lost every gene still renders valid.
        if sel.typename || (sel.fields.is_empty() && sel.fragments.is_empty()) {
            self.body.push_str(" __typename");
        }
        for f in &sel.fields {
            self.body.push(' ');
            self.field(&sel.on, &f.name, &f.args, f.selection.as_ref());
        }
        for frag in &sel.fragments {
            let _ = write!(self.body, " ... on {} ", frag.on);
            self.selection(frag);
        }
        self.body.push_str(" }");
    }

    /// The argument's name, or it with a number when a nested field's
    /// argument of the same name has it already.
    fn variable_name(&self, arg: &str) -> String {
        let taken = |n: &str| self.var_defs.iter().any(|(v, _)| v == n);
        if !taken(arg) {
            return arg.to_string();
        }
        (2..)
            .map(|i| format!("{arg}_{i}"))
            .find(|n| !taken(n))
            .unwrap_or_default()
    }
}

/// Writes `value` as a GraphQL literal of type `ty`: enums as bare names,
/// input objects field by field, strings escaped.
fn write_literal(ts: &TypeSystem, ty: &TypeRef, value: &Value, out: &mut String) {
    if value.is_null() {
        out.push_str("null");
        return;
    }
    match ty {
        TypeRef::NonNull(inner) => write_literal(ts, inner, value, out),
        TypeRef::List(inner) => match value {
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_literal(ts, inner, item, out);
                }
                out.push(']');
            }
            // Input coercion accepts one item where a list is expected.
            _ => write_literal(ts, inner, value, out),
        },
        TypeRef::Named(name) => match (ts.get(name), value) {
            (Some(t), Value::String(s)) if t.kind == TypeKind::Enum && is_enum_name(s) => {
                out.push_str(s);
            }
            (Some(t), Value::Object(fields)) if t.kind == TypeKind::InputObject => {
                out.push('{');
                let mut first = true;
                for (k, v) in fields {
                    let Some(def) = t.input_fields.iter().find(|f| f.name == *k) else {
                        continue;
                    };
                    out.push_str(if first { " " } else { ", " });
                    first = false;
                    let _ = write!(out, "{k}: ");
                    write_literal(ts, &def.ty, v, out);
                }
                out.push_str(if first { "}" } else { " }" });
            }
            _ => write_json_literal(value, out),
        },
    }
}

/// Writes a JSON value as an untyped GraphQL literal (custom scalars accept any).
fn write_json_literal(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => match crate::execution::wire::number_text(value) {
            Some(number) => out.push_str(number),
            None => write_string_literal(s, out),
        },
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_json_literal(item, out);
            }
            out.push(']');
        }
        Value::Object(fields) => {
            out.push('{');
            let mut first = true;
            for (k, v) in fields.iter().filter(|(k, _)| is_name(k)) {
                out.push_str(if first { " " } else { ", " });
                first = false;
                let _ = write!(out, "{k}: ");
                write_json_literal(v, out);
            }
            out.push_str(if first { "}" } else { " }" });
        }
    }
}

/// Whether `s` is a GraphQL name.
fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Whether `s` can be written as a bare enum value.
fn is_enum_name(s: &str) -> bool {
    is_name(s) && !matches!(s, "true" | "false" | "null")
}

/// The type system as SDL (without the built-in scalars and introspection
/// types): for tools that take SDL, such as validators, when the schema came
/// as introspection JSON. Directives other than `@deprecated` are not kept by
/// the type system, so they are not printed.
pub fn to_sdl(ts: &TypeSystem) -> String {
    let mut out = String::new();
    let roots: Vec<(&str, &str)> = [
        ("query", &ts.query_type),
        ("mutation", &ts.mutation_type),
        ("subscription", &ts.subscription_type),
    ]
    .into_iter()
    .filter_map(|(op, t)| {
        t.as_deref()
            .filter(|t| ts.get(t).is_some())
            .map(|t| (op, t))
    })
    .collect();
    if !roots.is_empty() {
        out.push_str("schema {\n");
        for (op, t) in roots {
            let _ = writeln!(out, "  {op}: {t}");
        }
        out.push_str("}\n");
    }
    for t in ts.types.values() {
        if t.name.starts_with("__") || BUILTIN_SCALARS.contains(&t.name.as_str()) {
            continue;
        }
        out.push('\n');
        write_description(t.description.as_deref(), "", &mut out);
        match t.kind {
            TypeKind::Scalar => {
                let _ = writeln!(out, "scalar {}", t.name);
            }
            TypeKind::Object | TypeKind::Interface => {
                let word = if t.kind == TypeKind::Object {
                    "type"
                } else {
                    "interface"
                };
                let _ = write!(out, "{word} {}", t.name);
                let ifaces: Vec<&str> = t
                    .interfaces
                    .iter()
                    .filter(|i| kind(ts, i) == Some(TypeKind::Interface))
                    .map(String::as_str)
                    .collect();
                if !ifaces.is_empty() {
                    let _ = write!(out, " implements {}", ifaces.join(" & "));
                }
                write_block(t.fields.is_empty(), &mut out, |out| {
                    for f in &t.fields {
                        write_description(f.description.as_deref(), "  ", out);
                        let _ = write!(out, "  {}", f.name);
                        write_args(&f.args, out);
                        let _ = write!(out, ": {}", f.ty);
                        if f.deprecated {
                            out.push_str(" @deprecated");
                        }
                        out.push('\n');
                    }
                });
            }
            TypeKind::Union => {
                let members: Vec<&str> = t
                    .possible_types
                    .iter()
                    .filter(|p| kind(ts, p) == Some(TypeKind::Object))
                    .map(String::as_str)
                    .collect();
                let _ = write!(out, "union {}", t.name);
                if !members.is_empty() {
                    let _ = write!(out, " = {}", members.join(" | "));
                }
                out.push('\n');
            }
            TypeKind::Enum => {
                let _ = write!(out, "enum {}", t.name);
                write_block(t.enum_values.is_empty(), &mut out, |out| {
                    for v in &t.enum_values {
                        let _ = writeln!(out, "  {v}");
                    }
                });
            }
            TypeKind::InputObject => {
                let _ = write!(out, "input {}", t.name);
                write_block(t.input_fields.is_empty(), &mut out, |out| {
                    for f in &t.input_fields {
                        write_description(f.description.as_deref(), "  ", out);
                        out.push_str("  ");
                        write_input_value(f, out);
                        out.push('\n');
                    }
                });
            }
        }
    }
    out
}

/// ` {\n ... }\n`, or just the line end for a type without members.
fn write_block(empty: bool, out: &mut String, body: impl FnOnce(&mut String)) {
    if empty {
        out.push('\n');
        return;
    }
    out.push_str(" {\n");
    body(out);
    out.push_str("}\n");
}

fn write_description(description: Option<&str>, indent: &str, out: &mut String) {
    if let Some(d) = description.filter(|d| !d.is_empty()) {
        out.push_str(indent);
        write_string_literal(d, out);
        out.push('\n');
    }
}

fn write_args(args: &[InputValue], out: &mut String) {
    if args.is_empty() {
        return;
    }
    out.push('(');
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_input_value(a, out);
    }
    out.push(')');
}

fn write_input_value(v: &InputValue, out: &mut String) {
    let _ = write!(out, "{}: {}", v.name, v.ty);
    if let Some(d) = &v.default_value {
        let _ = write!(out, " = {d}");
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::generation::graphql::DEFAULT_MAX_DEPTH;
    use crate::generation::graphql::genes::FieldSelection;
    use crate::generation::values::Rng64;

    fn demo() -> TypeSystem {
        crate::load::load_text(
            crate::demo::GRAPHQL_SDL,
            std::path::Path::new("demo.graphql"),
        )
        .unwrap()
        .api
        .graphql
        .unwrap()
    }

    #[test]
    fn renders_literals_and_variables() {
        let ts = demo();
        let g = GqlGenerator::new(&ts, DEFAULT_MAX_DEPTH);
        let call = GqlCall {
            root: "Query".into(),
            field: "book".into(),
            args: vec![("id".into(), Some(Value::String("a\"b\\c\n".into())))],
            selection: Some(Selection {
                on: "Book".into(),
                typename: false,
                fields: vec![
                    FieldSelection {
                        name: "title".into(),
                        args: vec![],
                        selection: None,
                    },
                    FieldSelection {
                        name: "author".into(),
                        args: vec![],
                        selection: Some(Selection {
                            on: "Author".into(),
                            typename: true,
                            fields: vec![],
                            fragments: vec![],
                        }),
                    },
                ],
                fragments: vec![],
            }),
            breach: None,
        };
        let (doc, vars) = g.render(&call, ArgMode::Literals);
        assert_eq!(
            doc,
            r#"query { book(id: "a\"b\\c\n") { title author { __typename } } }"#
        );
        assert_eq!(vars, serde_json::json!({}));
        let (doc, vars) = g.render(&call, ArgMode::Variables);
        assert_eq!(
            doc,
            "query Q($id: ID!) { book(id: $id) { title author { __typename } } }"
        );
        assert_eq!(vars, serde_json::json!({"id": "a\"b\\c\n"}));
    }

    #[test]
    fn enums_and_input_objects_render_as_literals() {
        let ts = demo();
        let g = GqlGenerator::new(&ts, DEFAULT_MAX_DEPTH);
        let mut rng = Rng64::seed_from_u64(1);
        for _ in 0..50 {
            let call = g.sample("Mutation", "createBook", &mut rng);
            let (doc, _) = g.render(&call, ArgMode::Literals);
            assert!(
                doc.starts_with("mutation { createBook(authorId: \""),
                "{doc}"
            );
            assert!(doc.contains("input: { title: \""), "{doc}");
            assert!(!doc.contains("status: \""), "enums are bare: {doc}");
        }
    }

    #[test]
    fn sdl_round_trips_through_the_loader() {
        let ts = demo();
        let sdl = to_sdl(&ts);
        let again = crate::load::load_text(&sdl, std::path::Path::new("again.graphql"))
            .unwrap()
            .api
            .graphql
            .unwrap();
        assert_eq!(to_sdl(&again), sdl);
        assert!(
            sdl.contains("input BookInput {\n  title: String!\n"),
            "{sdl}"
        );
    }
}
