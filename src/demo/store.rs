//! In-memory bookshop state shared by the REST and GraphQL front ends.
//!
//! The planted faults that live in business logic (F1, F3, F4, F5, F14) are
//! here, so REST and GraphQL exhibit them alike; see `models/demo/FAULTS.md`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// Upper bound for prices and stock: keeps totals finite and stock within GraphQL's 32-bit `Int`.
pub(crate) const MAX_AMOUNT: u32 = 1_000_000;

/// The store behind a lock, as handed to request handlers.
#[derive(Clone)]
pub(crate) struct SharedStore(Arc<Mutex<Store>>);

impl SharedStore {
    /// A store holding the seed data.
    pub(crate) fn seeded() -> Self {
        Self(Arc::new(Mutex::new(Store::seeded())))
    }

    /// Locks the store; a poisoned lock is still usable because no handler panics mid-update.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Store> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Restores the seed data and restarts the id counters.
    pub(crate) fn reset(&self) {
        *self.lock() = Store::seeded();
    }
}

/// Why a store operation failed; each front end maps these to its own error shape.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum StoreError {
    /// The addressed entity does not exist (or is hidden).
    NotFound(String),
    /// The request is well formed but conflicts with the current state.
    Conflict(String),
    /// A planted server-side failure; the detail is for logs, never for clients.
    Internal(&'static str),
}

/// Result of a store operation.
pub(crate) type StoreResult<T> = Result<T, StoreError>;

/// A book's lifecycle state (distinct from [`OrderStatus`] despite the shared field name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BookStatus {
    Available,
    OutOfStock,
    Retired,
}

impl BookStatus {
    /// The wire spelling used by the REST API.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Available => "available",
            Self::OutOfStock => "out_of_stock",
            Self::Retired => "retired",
        }
    }

    /// Parses the REST wire spelling.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        [Self::Available, Self::OutOfStock, Self::Retired]
            .into_iter()
            .find(|status| status.as_str() == text)
    }
}

/// An order's lifecycle state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OrderStatus {
    Placed,
    Cancelled,
    Shipped,
}

impl OrderStatus {
    /// The wire spelling used by the REST API.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Placed => "placed",
            Self::Cancelled => "cancelled",
            Self::Shipped => "shipped",
        }
    }

    /// Parses the REST wire spelling.
    pub(crate) fn parse(text: &str) -> Option<Self> {
        [Self::Placed, Self::Cancelled, Self::Shipped]
            .into_iter()
            .find(|status| status.as_str() == text)
    }
}

/// An author.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Author {
    pub id: u64,
    pub name: String,
    pub bio: Option<String>,
}

/// A book, including the internal flags the planted faults depend on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Book {
    pub id: u64,
    pub author_id: u64,
    pub title: String,
    pub price: f64,
    pub stock: u32,
    pub tags: Vec<String>,
    pub status: BookStatus,
    /// Set by DELETE; the book then leaves listings but (F3) not single lookups.
    pub deleted: bool,
    /// Set once the price was PATCHed; REST reads then serve the price as text (F2).
    pub repriced: bool,
    /// Stock level last set by PATCH, taken as the size of the latest delivery (F1).
    pub last_delivery: Option<u32>,
    /// Seed catalogue books keep list prices; books created through the API get bulk pricing.
    pub bulk_pricing: bool,
    /// 1 at creation, one more per update: the REST ETag and If-Match value (F10).
    pub version: u64,
}

/// A review of a book.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Review {
    pub id: u64,
    pub book_id: u64,
    pub rating: u8,
    pub text: String,
}

/// An order for some copies of a book.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Order {
    pub id: u64,
    pub book_id: u64,
    pub quantity: u32,
    pub total: f64,
    pub status: OrderStatus,
}

/// A reading list (REST only), top-level or inside another list.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ReadingList {
    pub id: u64,
    pub name: String,
    /// The enclosing list; `None` for a top-level list.
    pub parent: Option<u64>,
    pub note: Option<String>,
}

/// Fields of a book to create, already validated by the front end.
#[derive(Debug, Clone)]
pub(crate) struct NewBook {
    pub title: String,
    pub price: f64,
    pub stock: u32,
    pub tags: Vec<String>,
}

/// A partial update of a book, already validated by the front end.
#[derive(Debug, Clone, Default)]
pub(crate) struct BookPatch {
    pub price: Option<f64>,
    pub stock: Option<u32>,
    pub tags: Option<Vec<String>>,
    pub status: Option<BookStatus>,
}

/// Per-entity id counters, so ids are predictable after a reset.
#[derive(Debug, Default)]
struct Counters {
    author: u64,
    book: u64,
    review: u64,
    order: u64,
    list: u64,
}

fn bump(counter: &mut u64) -> u64 {
    *counter += 1;
    *counter
}

/// All bookshop data.
#[derive(Debug, Default)]
pub(crate) struct Store {
    authors: BTreeMap<u64, Author>,
    books: BTreeMap<u64, Book>,
    reviews: BTreeMap<u64, Review>,
    orders: BTreeMap<u64, Order>,
    lists: BTreeMap<u64, ReadingList>,
    next: Counters,
}

fn not_found(what: &str, id: u64) -> StoreError {
    StoreError::NotFound(format!("{what} {id} not found"))
}

fn round_cents(amount: f64) -> f64 {
    (amount * 100.0).round() / 100.0
}

impl Store {
    /// The start state: two authors, three books, one review, one shipped order, no lists.
    pub(crate) fn seeded() -> Self {
        let mut store = Self::default();
        let le_guin = store.create_author(
            "Ursula K. Le Guin".into(),
            Some("Author of the Earthsea cycle.".into()),
        );
        let pratchett = store.create_author("Terry Pratchett".into(), None);
        let seed_books = [
            (
                le_guin.id,
                "A Wizard of Earthsea",
                9.99,
                12,
                &["fantasy"][..],
            ),
            (
                le_guin.id,
                "The Dispossessed",
                12.5,
                4,
                &["sf", "utopia"][..],
            ),
            (
                pratchett.id,
                "Guards! Guards!",
                8.75,
                20,
                &["fantasy", "humour"][..],
            ),
        ];
        for (author_id, title, price, stock, tags) in seed_books {
            let new = NewBook {
                title: title.into(),
                price,
                stock,
                tags: tags.iter().map(|tag| (*tag).to_string()).collect(),
            };
            if let Ok(book) = store.create_book(author_id, new)
                && let Some(stored) = store.books.get_mut(&book.id)
            {
                stored.bulk_pricing = false;
            }
        }
        let _ = store.create_review(le_guin.id, 1, 5, "A classic.".into());
        let order_id = bump(&mut store.next.order);
        store.orders.insert(
            order_id,
            Order {
                id: order_id,
                book_id: 3,
                quantity: 2,
                total: 17.5,
                status: OrderStatus::Shipped,
            },
        );
        store
    }

    /// Authors whose name contains `name` (case-insensitive), at most `limit` of them.
    pub(crate) fn list_authors(
        &self,
        name: Option<&str>,
        limit: Option<usize>,
    ) -> StoreResult<Vec<Author>> {
        let needle = name.map(str::to_lowercase);
        // Planted fault F4: the filter is "spliced into a query", so a quote breaks it.
        if needle.as_deref().is_some_and(|text| text.contains('\'')) {
            return Err(StoreError::Internal("unterminated quoted string in filter"));
        }
        let matching = self.authors.values().filter(|author| {
            needle
                .as_deref()
                .is_none_or(|text| author.name.to_lowercase().contains(text))
        });
        Ok(matching
            .take(limit.unwrap_or(usize::MAX))
            .cloned()
            .collect())
    }

    /// Creates an author with the next author id.
    pub(crate) fn create_author(&mut self, name: String, bio: Option<String>) -> Author {
        let id = bump(&mut self.next.author);
        let author = Author { id, name, bio };
        self.authors.insert(id, author.clone());
        author
    }

    /// One author.
    pub(crate) fn author(&self, id: u64) -> StoreResult<Author> {
        self.authors
            .get(&id)
            .cloned()
            .ok_or_else(|| not_found("author", id))
    }

    /// Removes an author; their books and orders stay behind (which F7 exposes).
    pub(crate) fn delete_author(&mut self, id: u64) -> StoreResult<()> {
        self.authors
            .remove(&id)
            .map(drop)
            .ok_or_else(|| not_found("author", id))
    }

    /// The author's books that have not been deleted.
    pub(crate) fn list_books(&self, author_id: u64) -> StoreResult<Vec<Book>> {
        self.author(author_id)?;
        Ok(self
            .books
            .values()
            .filter(|book| book.author_id == author_id && !book.deleted)
            .cloned()
            .collect())
    }

    /// Creates a book for an existing author.
    pub(crate) fn create_book(&mut self, author_id: u64, new: NewBook) -> StoreResult<Book> {
        self.author(author_id)?;
        let id = bump(&mut self.next.book);
        let status = if new.stock == 0 {
            BookStatus::OutOfStock
        } else {
            BookStatus::Available
        };
        let book = Book {
            id,
            author_id,
            title: new.title,
            price: new.price,
            stock: new.stock,
            tags: new.tags,
            status,
            deleted: false,
            repriced: false,
            last_delivery: None,
            bulk_pricing: true,
            version: 1,
        };
        self.books.insert(id, book.clone());
        Ok(book)
    }

    /// One book of an author, as the REST lookup sees it.
    pub(crate) fn book_of(&self, author_id: u64, book_id: u64) -> StoreResult<Book> {
        self.author(author_id)?;
        // Planted fault F3: deleted books are not filtered out here.
        self.books
            .get(&book_id)
            .filter(|book| book.author_id == author_id)
            .cloned()
            .ok_or_else(|| not_found("book", book_id))
    }

    /// One book of an author that has not been deleted, for mutations.
    fn live_book_of(&mut self, author_id: u64, book_id: u64) -> StoreResult<&mut Book> {
        self.author(author_id)?;
        self.books
            .get_mut(&book_id)
            .filter(|book| book.author_id == author_id && !book.deleted)
            .ok_or_else(|| not_found("book", book_id))
    }

    /// The version of a live book of an author, for a conditional update.
    pub(crate) fn book_version(&mut self, author_id: u64, book_id: u64) -> StoreResult<u64> {
        self.live_book_of(author_id, book_id)
            .map(|book| book.version)
    }

    /// A live book by id alone, whoever its author is (GraphQL lookups and orders).
    pub(crate) fn book(&self, id: u64) -> StoreResult<Book> {
        self.books
            .get(&id)
            .filter(|book| !book.deleted)
            .cloned()
            .ok_or_else(|| not_found("book", id))
    }

    /// A book by id even if deleted: orders keep pointing at what was bought.
    pub(crate) fn book_any(&self, id: u64) -> StoreResult<Book> {
        self.books
            .get(&id)
            .cloned()
            .ok_or_else(|| not_found("book", id))
    }

    /// Applies a partial update to a live book.
    pub(crate) fn update_book(
        &mut self,
        author_id: u64,
        book_id: u64,
        patch: BookPatch,
    ) -> StoreResult<Book> {
        let book = self.live_book_of(author_id, book_id)?;
        if let Some(price) = patch.price {
            book.price = price;
            book.repriced = true;
        }
        if let Some(stock) = patch.stock {
            book.stock = stock;
            book.last_delivery = Some(stock);
        }
        if let Some(tags) = patch.tags {
            book.tags = tags;
        }
        if let Some(status) = patch.status {
            book.status = status;
        }
        book.version += 1;
        Ok(book.clone())
    }

    /// Deletes a live book: it is retired and hidden from listings.
    pub(crate) fn delete_book(&mut self, author_id: u64, book_id: u64) -> StoreResult<()> {
        let book = self.live_book_of(author_id, book_id)?;
        book.deleted = true;
        book.status = BookStatus::Retired;
        Ok(())
    }

    /// Reviews of a live book.
    pub(crate) fn list_reviews(
        &mut self,
        author_id: u64,
        book_id: u64,
    ) -> StoreResult<Vec<Review>> {
        self.live_book_of(author_id, book_id)?;
        Ok(self
            .reviews
            .values()
            .filter(|review| review.book_id == book_id)
            .cloned()
            .collect())
    }

    /// Adds a review to a live book.
    pub(crate) fn create_review(
        &mut self,
        author_id: u64,
        book_id: u64,
        rating: u8,
        text: String,
    ) -> StoreResult<Review> {
        self.live_book_of(author_id, book_id)?;
        let id = bump(&mut self.next.review);
        let review = Review {
            id,
            book_id,
            rating,
            text,
        };
        self.reviews.insert(id, review.clone());
        Ok(review)
    }

    /// Orders, optionally only those with a given status.
    pub(crate) fn list_orders(&self, status: Option<OrderStatus>) -> Vec<Order> {
        self.orders
            .values()
            .filter(|order| status.is_none_or(|wanted| order.status == wanted))
            .cloned()
            .collect()
    }

    /// One order.
    pub(crate) fn order(&self, id: u64) -> StoreResult<Order> {
        self.orders
            .get(&id)
            .cloned()
            .ok_or_else(|| not_found("order", id))
    }

    /// Places an order, taking the copies out of stock.
    pub(crate) fn place_order(&mut self, book_id: u64, quantity: u32) -> StoreResult<Order> {
        let book = self.book(book_id)?;
        // The total is priced before the stock check, which is what lets F1 surface.
        let total = order_total(&book, quantity)?;
        if book.stock < quantity {
            return Err(StoreError::Conflict(format!(
                "book {book_id} has only {} copies in stock",
                book.stock
            )));
        }
        if let Some(stored) = self.books.get_mut(&book_id) {
            stored.stock -= quantity;
        }
        let id = bump(&mut self.next.order);
        let order = Order {
            id,
            book_id,
            quantity,
            total,
            status: OrderStatus::Placed,
        };
        self.orders.insert(id, order.clone());
        Ok(order)
    }

    /// Cancels a placed order and puts its copies back in stock.
    pub(crate) fn cancel_order(&mut self, id: u64) -> StoreResult<Order> {
        let order = self
            .orders
            .get_mut(&id)
            .ok_or_else(|| not_found("order", id))?;
        match order.status {
            OrderStatus::Placed => {}
            OrderStatus::Shipped => {
                return Err(StoreError::Conflict(format!(
                    "order {id} has already shipped"
                )));
            }
            // Planted fault F5: the refund is booked twice and the ledger rejects it.
            OrderStatus::Cancelled => {
                return Err(StoreError::Internal("duplicate refund entry in ledger"));
            }
        }
        order.status = OrderStatus::Cancelled;
        let order = order.clone();
        if let Some(book) = self.books.get_mut(&order.book_id) {
            book.stock = book.stock.saturating_add(order.quantity).min(MAX_AMOUNT);
        }
        Ok(order)
    }

    /// All authors, in id order.
    pub(crate) fn all_authors(&self) -> Vec<Author> {
        self.authors.values().cloned().collect()
    }

    /// Creates a reading list; a `parent` that names no list is a conflict.
    pub(crate) fn create_list(
        &mut self,
        name: String,
        parent: Option<u64>,
        note: Option<String>,
    ) -> StoreResult<ReadingList> {
        if let Some(parent) = parent {
            self.list(parent)?;
        }
        let id = bump(&mut self.next.list);
        let list = ReadingList {
            id,
            name,
            parent,
            note,
        };
        self.lists.insert(id, list.clone());
        Ok(list)
    }

    /// One reading list.
    pub(crate) fn list(&self, id: u64) -> StoreResult<ReadingList> {
        self.lists
            .get(&id)
            .cloned()
            .ok_or_else(|| not_found("list", id))
    }

    /// The list that encloses `list`, for `expand=parent`.
    pub(crate) fn parent_of(&self, list: &ReadingList) -> StoreResult<ReadingList> {
        // Planted fault F14: a top-level list's missing parent is dereferenced.
        let parent = list.parent.ok_or(StoreError::Internal(
            "'NoneType' object has no attribute 'id'",
        ))?;
        self.list(parent)
    }
}

/// Prices an order; API-created books get 5% off when the order is at least a tenth
/// of their latest delivery.
fn order_total(book: &Book, quantity: u32) -> StoreResult<f64> {
    let mut total = book.price * f64::from(quantity);
    if let (true, Some(delivery)) = (book.bulk_pricing, book.last_delivery) {
        // Planted fault F1: a delivery of zero copies (a PATCH to stock 0) divides by zero.
        let share = quantity
            .saturating_mul(10)
            .checked_div(delivery)
            .ok_or(StoreError::Internal("attempt to divide by zero"))?;
        if share >= 1 {
            total *= 0.95;
        }
    }
    Ok(round_cents(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_is_deterministic() {
        let store = Store::seeded();
        assert_eq!(store.all_authors().len(), 2);
        assert_eq!(store.list_books(1).map(|books| books.len()), Ok(2));
        assert_eq!(store.next.author, 2);
        assert_eq!(store.next.book, 3);
        assert_eq!(store.next.order, 1);
    }

    #[test]
    fn zero_delivery_only_breaks_api_created_books() {
        let mut store = Store::seeded();
        let stock_zero = BookPatch {
            stock: Some(0),
            ..BookPatch::default()
        };
        // Seed books keep list prices, so the PATCH alone is harmless for them.
        assert!(store.update_book(1, 1, stock_zero.clone()).is_ok());
        assert!(matches!(
            store.place_order(1, 1),
            Err(StoreError::Conflict(_))
        ));
        let new = NewBook {
            title: "T".into(),
            price: 1.0,
            stock: 3,
            tags: vec![],
        };
        let book = store.create_book(2, new).expect("author 2 exists");
        assert!(store.update_book(2, book.id, stock_zero).is_ok());
        assert!(matches!(
            store.place_order(book.id, 1),
            Err(StoreError::Internal(_))
        ));
    }
}
