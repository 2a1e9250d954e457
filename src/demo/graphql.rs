//! The GraphQL front end over the same store, as described by `models/demo/schema.graphql`.

use std::borrow::Cow;

use async_graphql::parser::types::Field;
use async_graphql::registry::Registry;
use async_graphql::{
    Context, ContextSelectionSet, EmptySubscription, Enum, Error, ID, InputObject, Object,
    OutputType, Positioned, Result, Schema, ServerResult, Value,
};

use super::store::{
    self, Author, Book, BookStatus, MAX_AMOUNT, NewBook, Order, OrderStatus, SharedStore,
    StoreError,
};

/// The executable demo schema.
pub(crate) type BookshopSchema = Schema<QueryRoot, MutationRoot, EmptySubscription>;

/// Builds the schema over `store` (introspection is on, as async-graphql's default).
pub(crate) fn schema(store: SharedStore) -> BookshopSchema {
    Schema::build(QueryRoot, MutationRoot, EmptySubscription)
        .data(store)
        .finish()
}

/// The "leaked" panic report of planted fault F8: realistic, but invented.
const LEAKED_BACKTRACE: &str = "called `Result::unwrap()` on an `Err` value: \
ParseIntError { kind: InvalidDigit }
thread 'tokio-runtime-worker' panicked at src/store.rs:42:9:
stack backtrace:
   0: rust_begin_unwind
             at /rustc/3f5fd8dd41153bc5fdca9427e9e05be2c767ba23/library/std/src/panicking.rs:652:5
   1: core::result::unwrap_failed
             at /rustc/3f5fd8dd41153bc5fdca9427e9e05be2c767ba23/library/core/src/result.rs:1679:5
   2: bookshop::store::Store::find_book
             at ./src/store.rs:42:9
   3: bookshop::graphql::QueryRoot::book::{{closure}}
             at ./src/graphql.rs:118:20
note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.";

fn store<'a>(ctx: &Context<'a>) -> Result<&'a SharedStore> {
    ctx.data::<SharedStore>()
}

fn parse_id(id: &ID) -> Result<u64> {
    id.parse::<u64>()
        .ok()
        .filter(|id| *id >= 1)
        .ok_or_else(|| Error::new(format!("invalid id {:?}", id.as_str())))
}

fn to_id(id: u64) -> ID {
    ID(id.to_string())
}

fn to_int(count: u32) -> i32 {
    // Counts are capped at MAX_AMOUNT, well inside GraphQL's 32-bit Int.
    i32::try_from(count).unwrap_or(i32::MAX)
}

fn store_error(error: StoreError) -> Error {
    match error {
        StoreError::NotFound(message) | StoreError::Conflict(message) => Error::new(message),
        StoreError::Internal(_) => Error::new("internal error"),
    }
}

/// Turns "not found" into an absent value, as nullable lookups expect.
fn found<T>(result: store::StoreResult<T>) -> Result<Option<T>> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(StoreError::NotFound(_)) => Ok(None),
        Err(error) => Err(store_error(error)),
    }
}

/// Resolves like `Option<T>` but declares `T!` in the schema (planted fault F7).
///
/// async-graphql's `Option<T>` registers the nullable type and plain `T` can't be
/// absent; this wrapper registers the non-null name and still resolves to `null`,
/// which the executor passes through because static resolvers are trusted.
struct DeclaredNonNull<T>(Option<T>);

impl<T: OutputType> OutputType for DeclaredNonNull<T> {
    fn type_name() -> Cow<'static, str> {
        T::type_name()
    }

    fn create_type_info(registry: &mut Registry) -> String {
        T::create_type_info(registry);
        Self::qualified_type_name()
    }

    async fn resolve(
        &self,
        ctx: &ContextSelectionSet<'_>,
        field: &Positioned<Field>,
    ) -> ServerResult<Value> {
        match &self.0 {
            Some(inner) => inner.resolve(ctx, field).await,
            None => Ok(Value::Null),
        }
    }
}

/// Lifecycle of a book in the catalogue.
#[derive(Enum, Copy, Clone, Eq, PartialEq)]
#[graphql(name = "BookStatus")]
enum GqlBookStatus {
    Available,
    OutOfStock,
    Retired,
}

impl From<BookStatus> for GqlBookStatus {
    fn from(status: BookStatus) -> Self {
        match status {
            BookStatus::Available => Self::Available,
            BookStatus::OutOfStock => Self::OutOfStock,
            BookStatus::Retired => Self::Retired,
        }
    }
}

/// Lifecycle of an order.
#[derive(Enum, Copy, Clone, Eq, PartialEq)]
#[graphql(name = "OrderStatus")]
enum GqlOrderStatus {
    Placed,
    Cancelled,
    Shipped,
}

impl From<OrderStatus> for GqlOrderStatus {
    fn from(status: OrderStatus) -> Self {
        match status {
            OrderStatus::Placed => Self::Placed,
            OrderStatus::Cancelled => Self::Cancelled,
            OrderStatus::Shipped => Self::Shipped,
        }
    }
}

/// Fields of a new book.
#[derive(InputObject)]
struct BookInput {
    title: String,
    price: f64,
    stock: i32,
    tags: Option<Vec<String>>,
}

struct AuthorNode(Author);

#[Object(name = "Author")]
impl AuthorNode {
    async fn id(&self) -> ID {
        to_id(self.0.id)
    }

    async fn name(&self) -> &str {
        &self.0.name
    }

    async fn bio(&self) -> Option<&str> {
        self.0.bio.as_deref()
    }

    async fn books(&self, ctx: &Context<'_>) -> Result<Vec<BookNode>> {
        let books = found(store(ctx)?.lock().list_books(self.0.id))?;
        Ok(books
            .unwrap_or_default()
            .into_iter()
            .map(BookNode)
            .collect())
    }
}

struct BookNode(Book);

#[Object(name = "Book")]
impl BookNode {
    async fn id(&self) -> ID {
        to_id(self.0.id)
    }

    async fn title(&self) -> &str {
        &self.0.title
    }

    async fn price(&self) -> f64 {
        self.0.price
    }

    async fn stock(&self) -> i32 {
        to_int(self.0.stock)
    }

    async fn tags(&self) -> &[String] {
        &self.0.tags
    }

    async fn status(&self) -> GqlBookStatus {
        self.0.status.into()
    }

    // Doc comments here would become public descriptions, so the F7 note stays a
    // plain comment: declared `Author!`, yet `null` once the author was deleted.
    async fn author(&self, ctx: &Context<'_>) -> Result<DeclaredNonNull<AuthorNode>> {
        let author = found(store(ctx)?.lock().author(self.0.author_id))?;
        Ok(DeclaredNonNull(author.map(AuthorNode)))
    }
}

struct OrderNode(Order);

#[Object(name = "Order")]
impl OrderNode {
    async fn id(&self) -> ID {
        to_id(self.0.id)
    }

    async fn quantity(&self) -> i32 {
        to_int(self.0.quantity)
    }

    async fn total(&self) -> f64 {
        self.0.total
    }

    async fn status(&self) -> GqlOrderStatus {
        self.0.status.into()
    }

    async fn book(&self, ctx: &Context<'_>) -> Result<BookNode> {
        let book = store(ctx)?.lock().book_any(self.0.book_id);
        book.map(BookNode).map_err(store_error)
    }
}

/// Read-only entry points.
pub(crate) struct QueryRoot;

#[Object(name = "Query")]
impl QueryRoot {
    async fn author(&self, ctx: &Context<'_>, id: ID) -> Result<Option<AuthorNode>> {
        let id = parse_id(&id)?;
        Ok(found(store(ctx)?.lock().author(id))?.map(AuthorNode))
    }

    async fn book(&self, ctx: &Context<'_>, id: ID) -> Result<Option<BookNode>> {
        // Planted fault F8: a non-numeric id "panics" and the report reaches the client.
        let id = parse_id(&id).map_err(|_| Error::new(LEAKED_BACKTRACE))?;
        Ok(found(store(ctx)?.lock().book(id))?.map(BookNode))
    }

    async fn order(&self, ctx: &Context<'_>, id: ID) -> Result<Option<OrderNode>> {
        let id = parse_id(&id)?;
        Ok(found(store(ctx)?.lock().order(id))?.map(OrderNode))
    }

    async fn authors(&self, ctx: &Context<'_>) -> Result<Vec<AuthorNode>> {
        let authors = store(ctx)?.lock().all_authors();
        Ok(authors.into_iter().map(AuthorNode).collect())
    }
}

/// State-changing entry points.
pub(crate) struct MutationRoot;

#[Object(name = "Mutation")]
impl MutationRoot {
    async fn create_author(
        &self,
        ctx: &Context<'_>,
        name: String,
        bio: Option<String>,
    ) -> Result<AuthorNode> {
        if name.is_empty() {
            return Err(Error::new("name must not be empty"));
        }
        Ok(AuthorNode(store(ctx)?.lock().create_author(name, bio)))
    }

    async fn create_book(
        &self,
        ctx: &Context<'_>,
        author_id: ID,
        input: BookInput,
    ) -> Result<BookNode> {
        let author_id = parse_id(&author_id)?;
        if input.title.is_empty() {
            return Err(Error::new("title must not be empty"));
        }
        if !(0.0..=f64::from(MAX_AMOUNT)).contains(&input.price) {
            return Err(Error::new(format!(
                "price must be between 0 and {MAX_AMOUNT}"
            )));
        }
        let stock = u32::try_from(input.stock)
            .ok()
            .filter(|stock| *stock <= MAX_AMOUNT)
            .ok_or_else(|| Error::new(format!("stock must be between 0 and {MAX_AMOUNT}")))?;
        let new = NewBook {
            title: input.title,
            price: input.price,
            stock,
            tags: input.tags.unwrap_or_default(),
        };
        let book = store(ctx)?.lock().create_book(author_id, new);
        book.map(BookNode).map_err(store_error)
    }

    async fn place_order(
        &self,
        ctx: &Context<'_>,
        book_id: ID,
        quantity: i32,
    ) -> Result<OrderNode> {
        let book_id = parse_id(&book_id)?;
        let quantity = u32::try_from(quantity)
            .ok()
            .filter(|quantity| (1..=10).contains(quantity))
            .ok_or_else(|| Error::new("quantity must be between 1 and 10"))?;
        let order = store(ctx)?.lock().place_order(book_id, quantity);
        order.map(OrderNode).map_err(store_error)
    }

    async fn delete_author(&self, ctx: &Context<'_>, id: ID) -> Result<bool> {
        let id = parse_id(&id)?;
        Ok(found(store(ctx)?.lock().delete_author(id))?.is_some())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use apollo_compiler::ast::{Definition, Document, InputValueDefinition};

    use super::*;

    fn arguments(args: &[apollo_compiler::Node<InputValueDefinition>]) -> String {
        let args: Vec<String> = args
            .iter()
            .map(|arg| format!("{}: {}", arg.name, arg.ty))
            .collect();
        args.join(", ")
    }

    /// Every named type with its members, ignoring order, descriptions and layout.
    fn shape(sdl: &str) -> BTreeMap<String, Vec<String>> {
        let document = Document::parse(sdl, "schema.graphql").expect("SDL parses");
        let mut types = BTreeMap::new();
        for definition in &document.definitions {
            let (name, mut members) = match definition {
                Definition::ObjectTypeDefinition(object) => (
                    &object.name,
                    object
                        .fields
                        .iter()
                        .map(|f| format!("{}({}): {}", f.name, arguments(&f.arguments), f.ty))
                        .collect(),
                ),
                Definition::InputObjectTypeDefinition(input) => (
                    &input.name,
                    input
                        .fields
                        .iter()
                        .map(|f| format!("{}: {}", f.name, f.ty))
                        .collect(),
                ),
                Definition::EnumTypeDefinition(enumeration) => (
                    &enumeration.name,
                    enumeration
                        .values
                        .iter()
                        .map(|v| v.value.to_string())
                        .collect(),
                ),
                Definition::ScalarTypeDefinition(scalar) => (&scalar.name, Vec::new()),
                Definition::InterfaceTypeDefinition(_) | Definition::UnionTypeDefinition(_) => {
                    panic!("unexpected type definition {definition:?}")
                }
                _ => continue,
            };
            members.sort();
            types.insert(name.to_string(), members);
        }
        types
    }

    #[test]
    fn shipped_sdl_matches_served_schema() {
        let served = schema(SharedStore::seeded()).sdl();
        assert_eq!(
            shape(crate::demo::GRAPHQL_SDL),
            shape(&served),
            "models/demo/schema.graphql is out of date; the served SDL is:\n{served}"
        );
    }

    #[test]
    fn book_author_is_declared_non_null() {
        let book = &shape(&schema(SharedStore::seeded()).sdl())["Book"];
        assert!(book.contains(&"author(): Author!".to_string()), "{book:?}");
    }
}
