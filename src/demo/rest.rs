//! The REST front end, as described by `models/demo/openapi.yaml`.
//!
//! Bodies and parameters are validated by hand rather than with axum's typed
//! extractors, so every invalid input gets the documented 400 (or, for a
//! reading list's `parent`, 422) + `Error` body (axum's own rejections would
//! answer 422 or plain text), except where a fault of FAULTS.md is planted.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Map, Value, json};

use super::store::{
    Author, Book, BookPatch, BookStatus, MAX_AMOUNT, NewBook, Order, OrderStatus, ReadingList,
    Review, SharedStore, StoreError,
};

/// Routes of the documented REST operations.
pub(crate) fn router() -> Router<SharedStore> {
    Router::new()
        .route("/authors", get(list_authors).post(create_author))
        .route("/authors/{authorId}", get(get_author).delete(delete_author))
        .route(
            "/authors/{authorId}/books",
            get(list_books).post(create_book),
        )
        .route(
            "/authors/{authorId}/books/{bookId}",
            get(get_book).patch(update_book).delete(delete_book),
        )
        .route(
            "/authors/{authorId}/books/{bookId}/reviews",
            get(list_reviews).post(create_review),
        )
        .route("/orders", get(list_orders).post(place_order))
        .route("/orders/{orderId}", get(get_order))
        .route("/orders/{orderId}/cancel", post(cancel_order))
        .route("/lists", post(create_list))
        .route("/lists/{listId}", get(get_list))
}

/// An error answer: a status and the `{"message": ...}` body of the `Error` schema.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }

    fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    fn unprocessable(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, message)
    }

    /// A planted crash: the same bare 500 as the store's, whatever the cause.
    fn crash(cause: &'static str) -> Self {
        StoreError::Internal(cause).into()
    }

    /// The JSON 404 used for unknown routes too.
    pub(crate) fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound(message) => Self::not_found(message),
            StoreError::Conflict(message) => Self::new(StatusCode::CONFLICT, message),
            // Internal details stay server-side: the planted 500s must not leak anything.
            StoreError::Internal(_) => {
                Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({ "message": self.message }))).into_response()
    }
}

type ApiResult = Result<Response, ApiError>;
type PathParams = Result<Path<HashMap<String, String>>, PathRejection>;
type QueryParams = Result<Query<Vec<(String, String)>>, QueryRejection>;

fn path_id(params: &PathParams, name: &str) -> Result<u64, ApiError> {
    let Ok(Path(params)) = params else {
        return Err(ApiError::bad_request("malformed path"));
    };
    params
        .get(name)
        .and_then(|raw| raw.parse::<u64>().ok())
        .filter(|id| *id >= 1)
        .ok_or_else(|| ApiError::bad_request(format!("{name} must be a positive integer")))
}

fn query_param<'a>(params: &'a QueryParams, name: &str) -> Result<Option<&'a str>, ApiError> {
    let Ok(Query(pairs)) = params else {
        return Err(ApiError::bad_request("malformed query string"));
    };
    Ok(pairs
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_str()))
}

fn json_object(body: &Bytes) -> Result<Map<String, Value>, ApiError> {
    match serde_json::from_slice(body) {
        Ok(Value::Object(object)) => Ok(object),
        Ok(_) => Err(ApiError::bad_request("request body must be a JSON object")),
        Err(error) => Err(ApiError::bad_request(format!("invalid JSON body: {error}"))),
    }
}

fn required<T>(value: Option<T>, key: &str) -> Result<T, ApiError> {
    value.ok_or_else(|| ApiError::bad_request(format!("{key} is required")))
}

fn string_field(
    object: &Map<String, Value>,
    key: &str,
    min_len: usize,
) -> Result<Option<String>, ApiError> {
    match object.get(key) {
        None => Ok(None),
        Some(Value::String(text)) if text.chars().count() >= min_len => Ok(Some(text.clone())),
        Some(Value::String(_)) => Err(ApiError::bad_request(format!(
            "{key} must have at least {min_len} character(s)"
        ))),
        Some(_) => Err(ApiError::bad_request(format!("{key} must be a string"))),
    }
}

fn amount_field(object: &Map<String, Value>, key: &str) -> Result<Option<f64>, ApiError> {
    let Some(value) = object.get(key) else {
        return Ok(None);
    };
    value
        .as_f64()
        .filter(|amount| (0.0..=f64::from(MAX_AMOUNT)).contains(amount))
        .map(Some)
        .ok_or_else(|| {
            ApiError::bad_request(format!("{key} must be a number between 0 and {MAX_AMOUNT}"))
        })
}

fn integer_field(
    object: &Map<String, Value>,
    key: &str,
    min: u32,
    max: u32,
) -> Result<Option<u32>, ApiError> {
    let Some(value) = object.get(key) else {
        return Ok(None);
    };
    value
        .as_u64()
        .filter(|number| (u64::from(min)..=u64::from(max)).contains(number))
        .and_then(|number| u32::try_from(number).ok())
        .map(Some)
        .ok_or_else(|| {
            ApiError::bad_request(format!("{key} must be an integer between {min} and {max}"))
        })
}

fn tags_field(object: &Map<String, Value>) -> Result<Option<Vec<String>>, ApiError> {
    let Some(value) = object.get("tags") else {
        return Ok(None);
    };
    let invalid = || ApiError::bad_request("tags must be an array of strings");
    let items = value.as_array().ok_or_else(invalid)?;
    items
        .iter()
        .map(|item| item.as_str().map(str::to_owned).ok_or_else(invalid))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

fn author_json(author: &Author) -> Value {
    let mut body = json!({ "id": author.id, "name": author.name });
    if let Some(bio) = &author.bio {
        body["bio"] = json!(bio);
    }
    body
}

/// Whether a book body shows the price as stored by reads or as just written.
#[derive(Clone, Copy)]
enum PriceView {
    Fresh,
    Stored,
}

fn book_json(book: &Book, view: PriceView) -> Value {
    let price = match view {
        // Planted fault F2: a re-priced book is read back from a text price cache.
        PriceView::Stored if book.repriced => json!(format!("{:.2}", book.price)),
        _ => json!(book.price),
    };
    json!({
        "id": book.id,
        "authorId": book.author_id,
        "title": book.title,
        "price": price,
        "stock": book.stock,
        "tags": book.tags,
        "status": book.status.as_str(),
    })
}

fn review_json(review: &Review) -> Value {
    json!({
        "id": review.id,
        "bookId": review.book_id,
        "rating": review.rating,
        "text": review.text,
    })
}

fn order_json(order: &Order) -> Value {
    json!({
        "id": order.id,
        "bookId": order.book_id,
        "quantity": order.quantity,
        "total": order.total,
        "status": order.status.as_str(),
    })
}

fn created(location: String, body: Value) -> Response {
    (
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(body),
    )
        .into_response()
}

fn list(items: Vec<Value>) -> Response {
    Json(Value::Array(items)).into_response()
}

/// Parses `limit`; out-of-range integers answer 422, which the spec does not document (F6).
fn limit_param(raw: Option<&str>) -> Result<Option<usize>, ApiError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let digits = raw.strip_prefix('-').unwrap_or(raw);
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(ApiError::bad_request("limit must be an integer"));
    }
    raw.parse::<usize>()
        .ok()
        .filter(|limit| (1..=100).contains(limit))
        .map(Some)
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "limit must be between 1 and 100",
            )
        })
}

async fn list_authors(State(store): State<SharedStore>, query: QueryParams) -> ApiResult {
    let limit = limit_param(query_param(&query, "limit")?)?;
    let name = query_param(&query, "name")?;
    let authors = store.lock().list_authors(name, limit)?;
    Ok(list(authors.iter().map(author_json).collect()))
}

async fn create_author(State(store): State<SharedStore>, body: Bytes) -> ApiResult {
    let object = json_object(&body)?;
    let name = required(string_field(&object, "name", 1)?, "name")?;
    let bio = string_field(&object, "bio", 0)?;
    let author = store.lock().create_author(name, bio);
    Ok(created(
        format!("/authors/{}", author.id),
        author_json(&author),
    ))
}

async fn get_author(State(store): State<SharedStore>, path: PathParams) -> ApiResult {
    let author_id = path_id(&path, "authorId")?;
    let author = store.lock().author(author_id)?;
    Ok(Json(author_json(&author)).into_response())
}

async fn delete_author(State(store): State<SharedStore>, path: PathParams) -> ApiResult {
    let author_id = path_id(&path, "authorId")?;
    store.lock().delete_author(author_id)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// Parses `offset` the way `int(value)` would, unguarded: a value that is not an
/// integer at all crashes (planted fault F12); a negative one is a clean 400.
fn offset_param(raw: Option<&str>) -> Result<usize, ApiError> {
    let Some(raw) = raw else {
        return Ok(0);
    };
    let (negative, digits) = match raw.as_bytes().first() {
        Some(b'-') => (true, &raw[1..]),
        Some(b'+') => (false, &raw[1..]),
        _ => (false, raw),
    };
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(ApiError::crash("ValueError: invalid literal for int()"));
    }
    if negative && digits.bytes().any(|byte| byte != b'0') {
        return Err(ApiError::bad_request("offset must be at least 0"));
    }
    // More digits than fit skip every book, as a huge integer would.
    Ok(digits.parse::<usize>().unwrap_or(usize::MAX))
}

async fn list_books(
    State(store): State<SharedStore>,
    path: PathParams,
    query: QueryParams,
) -> ApiResult {
    let author_id = path_id(&path, "authorId")?;
    let offset = offset_param(query_param(&query, "offset")?)?;
    let books = store.lock().list_books(author_id)?;
    Ok(list(
        books
            .iter()
            .skip(offset)
            .map(|book| book_json(book, PriceView::Stored))
            .collect(),
    ))
}

async fn create_book(State(store): State<SharedStore>, path: PathParams, body: Bytes) -> ApiResult {
    let author_id = path_id(&path, "authorId")?;
    let object = json_object(&body)?;
    let title = required(string_field(&object, "title", 1)?, "title")?;
    let price = required(amount_field(&object, "price")?, "price")?;
    // Planted fault F13: `stock` is type-checked when present, but its absence
    // is never checked, so reading it fails like a KeyError.
    let stock = integer_field(&object, "stock", 0, MAX_AMOUNT)?
        .ok_or_else(|| ApiError::crash("KeyError: 'stock'"))?;
    let new = NewBook {
        title,
        price,
        stock,
        tags: tags_field(&object)?.unwrap_or_default(),
    };
    let book = store.lock().create_book(author_id, new)?;
    Ok(created(
        format!("/authors/{author_id}/books/{}", book.id),
        book_json(&book, PriceView::Fresh),
    ))
}

/// A book answer with its version as the `ETag`.
fn tagged(book: &Book, view: PriceView) -> Response {
    (
        [(header::ETAG, format!("\"{}\"", book.version))],
        Json(book_json(book, view)),
    )
        .into_response()
}

async fn get_book(State(store): State<SharedStore>, path: PathParams) -> ApiResult {
    let author_id = path_id(&path, "authorId")?;
    let book_id = path_id(&path, "bookId")?;
    let book = store.lock().book_of(author_id, book_id)?;
    Ok(tagged(&book, PriceView::Stored))
}

/// Checks `If-Match` against a book's version. Only a quoted tag is compared
/// (anything else is ignored), and what is inside the quotes goes straight to
/// `int(value[1:-1])`: anything but digits there crashes (planted fault F10).
fn check_if_match(headers: &HeaderMap, version: u64) -> Result<(), ApiError> {
    let Some(value) = headers.get(header::IF_MATCH).and_then(|v| v.to_str().ok()) else {
        return Ok(());
    };
    let quoted = value.len() >= 2 && value.starts_with('"') && value.ends_with('"');
    if !quoted {
        return Ok(());
    }
    let inner = &value[1..value.len() - 1];
    if inner.is_empty() || !inner.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(ApiError::crash("ValueError: invalid literal for int()"));
    }
    // Digits too many for u64 are a version no book has.
    if inner.parse::<u64>().ok() == Some(version) {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::PRECONDITION_FAILED,
            format!("the book is at version {version}"),
        ))
    }
}

async fn update_book(
    State(store): State<SharedStore>,
    path: PathParams,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    let author_id = path_id(&path, "authorId")?;
    let book_id = path_id(&path, "bookId")?;
    let object = json_object(&body)?;
    let status = match object.get("status") {
        None => None,
        Some(value) => Some(value.as_str().and_then(BookStatus::parse).ok_or_else(|| {
            ApiError::bad_request("status must be one of available, out_of_stock, retired")
        })?),
    };
    let patch = BookPatch {
        price: amount_field(&object, "price")?,
        stock: integer_field(&object, "stock", 0, MAX_AMOUNT)?,
        tags: tags_field(&object)?,
        status,
    };
    let mut store = store.lock();
    // The precondition is checked only once the book is known to exist.
    check_if_match(&headers, store.book_version(author_id, book_id)?)?;
    let book = store.update_book(author_id, book_id, patch)?;
    Ok(tagged(&book, PriceView::Fresh))
}

async fn delete_book(State(store): State<SharedStore>, path: PathParams) -> ApiResult {
    let author_id = path_id(&path, "authorId")?;
    let book_id = path_id(&path, "bookId")?;
    store.lock().delete_book(author_id, book_id)?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn list_reviews(State(store): State<SharedStore>, path: PathParams) -> ApiResult {
    let author_id = path_id(&path, "authorId")?;
    let book_id = path_id(&path, "bookId")?;
    let reviews = store.lock().list_reviews(author_id, book_id)?;
    Ok(list(reviews.iter().map(review_json).collect()))
}

/// Accepts anonymous calls and `Bearer <token>` with any token (the demo has no
/// users). Any other `Authorization` crashes the parser (planted fault F11)
/// where a 401 is documented.
fn credentials(headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Ok(());
    };
    let crash = || ApiError::crash("ValueError: not enough values to unpack");
    let value = value.to_str().map_err(|_| crash())?;
    let mut parts = value.split(' ');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(scheme), Some(token), None)
            if scheme.eq_ignore_ascii_case("bearer") && !token.is_empty() =>
        {
            Ok(())
        }
        _ => Err(crash()),
    }
}

async fn create_review(
    State(store): State<SharedStore>,
    path: PathParams,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    credentials(&headers)?;
    let author_id = path_id(&path, "authorId")?;
    let book_id = path_id(&path, "bookId")?;
    let object = json_object(&body)?;
    let rating = required(integer_field(&object, "rating", 1, 5)?, "rating")?;
    let rating = u8::try_from(rating).map_err(|_| ApiError::bad_request("rating out of range"))?;
    let text = required(string_field(&object, "text", 0)?, "text")?;
    let review = store
        .lock()
        .create_review(author_id, book_id, rating, text)?;
    // The body is deliberately undocumented in the spec, and the Location (F9) points
    // at a route that does not exist.
    Ok(created(
        format!("/reviews/{}", review.id),
        review_json(&review),
    ))
}

async fn list_orders(
    State(store): State<SharedStore>,
    headers: HeaderMap,
    query: QueryParams,
) -> ApiResult {
    credentials(&headers)?;
    let status = match query_param(&query, "status")? {
        None => None,
        Some(raw) => Some(OrderStatus::parse(raw).ok_or_else(|| {
            ApiError::bad_request("status must be one of placed, cancelled, shipped")
        })?),
    };
    let orders = store.lock().list_orders(status);
    Ok(list(orders.iter().map(order_json).collect()))
}

async fn place_order(State(store): State<SharedStore>, body: Bytes) -> ApiResult {
    let object = json_object(&body)?;
    let book_id = match object.get("bookId") {
        None => return Err(ApiError::bad_request("bookId is required")),
        Some(value) => value
            .as_u64()
            .filter(|id| *id >= 1)
            .ok_or_else(|| ApiError::bad_request("bookId must be a positive integer"))?,
    };
    let quantity = required(integer_field(&object, "quantity", 1, 10)?, "quantity")?;
    let order = store.lock().place_order(book_id, quantity)?;
    Ok(created(format!("/orders/{}", order.id), order_json(&order)))
}

async fn get_order(State(store): State<SharedStore>, path: PathParams) -> ApiResult {
    let order_id = path_id(&path, "orderId")?;
    let order = store.lock().order(order_id)?;
    Ok(Json(order_json(&order)).into_response())
}

async fn cancel_order(State(store): State<SharedStore>, path: PathParams) -> ApiResult {
    let order_id = path_id(&path, "orderId")?;
    let order = store.lock().cancel_order(order_id)?;
    Ok(Json(order_json(&order)).into_response())
}

fn list_json(list: &ReadingList, parent: Option<&ReadingList>) -> Value {
    let parent = match (parent, list.parent) {
        (Some(full), _) => list_json(full, None),
        (None, Some(id)) => json!({ "id": id }),
        (None, None) => Value::Null,
    };
    json!({ "id": list.id, "name": list.name, "parent": parent, "note": list.note })
}

async fn create_list(State(store): State<SharedStore>, body: Bytes) -> ApiResult {
    let object = json_object(&body)?;
    let name = required(string_field(&object, "name", 1)?, "name")?;
    let note = match object.get("note") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text.clone()),
        Some(_) => return Err(ApiError::bad_request("note must be a string or null")),
    };
    // Required but nullable, as FastAPI makes an `Optional` field without a
    // default: only an explicit null or a reference to an existing list passes.
    let invalid_parent =
        || ApiError::unprocessable("parent must be null or {\"id\": <id of an existing list>}");
    let parent = match object.get("parent") {
        None => {
            return Err(ApiError::unprocessable(
                "parent is required (it may be null)",
            ));
        }
        Some(Value::Null) => None,
        Some(Value::Object(reference)) => Some(
            reference
                .get("id")
                .and_then(Value::as_u64)
                .ok_or_else(invalid_parent)?,
        ),
        Some(_) => return Err(invalid_parent()),
    };
    let list = store
        .lock()
        .create_list(name, parent, note)
        .map_err(|error| match error {
            StoreError::NotFound(_) => invalid_parent(),
            other => other.into(),
        })?;
    Ok(created(
        format!("/lists/{}", list.id),
        list_json(&list, None),
    ))
}

async fn get_list(
    State(store): State<SharedStore>,
    path: PathParams,
    query: QueryParams,
) -> ApiResult {
    let list_id = path_id(&path, "listId")?;
    let expand = match query_param(&query, "expand")? {
        None => false,
        Some("parent") => true,
        Some(_) => return Err(ApiError::bad_request("expand must be parent")),
    };
    let store = store.lock();
    let list = store.list(list_id)?;
    let parent = if expand {
        Some(store.parent_of(&list)?)
    } else {
        None
    };
    Ok(Json(list_json(&list, parent.as_ref())).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_distinguishes_malformed_from_out_of_range() {
        assert!(matches!(limit_param(None), Ok(None)));
        assert!(matches!(limit_param(Some("5")), Ok(Some(5))));
        let status = |raw| limit_param(Some(raw)).map_err(|error| error.status);
        assert_eq!(status("x").err(), Some(StatusCode::BAD_REQUEST));
        assert_eq!(status("").err(), Some(StatusCode::BAD_REQUEST));
        assert_eq!(status("0").err(), Some(StatusCode::UNPROCESSABLE_ENTITY));
        assert_eq!(status("-3").err(), Some(StatusCode::UNPROCESSABLE_ENTITY));
        assert_eq!(status("101").err(), Some(StatusCode::UNPROCESSABLE_ENTITY));
    }

    #[test]
    fn offset_crashes_only_on_non_integers() {
        assert_eq!(offset_param(None).ok(), Some(0));
        assert_eq!(offset_param(Some("2")).ok(), Some(2));
        assert_eq!(offset_param(Some("+2")).ok(), Some(2));
        assert_eq!(offset_param(Some("-0")).ok(), Some(0));
        assert_eq!(
            offset_param(Some("99999999999999999999999")).ok(),
            Some(usize::MAX)
        );
        let status = |raw| offset_param(Some(raw)).map_err(|error| error.status);
        assert_eq!(status("-1").err(), Some(StatusCode::BAD_REQUEST));
        for raw in ["abc", "", "1.5", "1e3", " 1", "-", "0x10"] {
            assert_eq!(
                status(raw).err(),
                Some(StatusCode::INTERNAL_SERVER_ERROR),
                "{raw:?}"
            );
        }
    }

    #[test]
    fn if_match_crashes_only_inside_quotes() {
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::IF_MATCH, value.parse().expect("header value"));
            check_if_match(&headers, 3).map_err(|error| error.status)
        };
        assert!(check_if_match(&HeaderMap::new(), 3).is_ok());
        // Only quoted tags are compared; the rest (`*` included) is ignored.
        for passes in ["\"3\"", "*", "3", "abc", "\"", "W/\"3\"", "\"3", "3\""] {
            assert!(with(passes).is_ok(), "{passes}");
        }
        assert_eq!(with("\"2\"").err(), Some(StatusCode::PRECONDITION_FAILED));
        assert_eq!(
            with("\"99999999999999999999999\"").err(),
            Some(StatusCode::PRECONDITION_FAILED)
        );
        for quoted in ["\"abc\"", "\"\"", "\"3.0\"", "\"-3\"", "\" 3\""] {
            assert_eq!(
                with(quoted).err(),
                Some(StatusCode::INTERNAL_SERVER_ERROR),
                "{quoted}"
            );
        }
    }

    #[test]
    fn only_well_formed_bearer_credentials_pass() {
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::AUTHORIZATION, value.parse().expect("header value"));
            credentials(&headers).map_err(|error| error.status)
        };
        assert!(credentials(&HeaderMap::new()).is_ok());
        assert!(with("Bearer abc.def").is_ok());
        assert!(with("bearer x").is_ok());
        for bad in [
            "Bearer",
            "Bearer ",
            "Token abc",
            "Basic dXNlcjpwYXNz",
            "abc",
            "",
            "Bearer a b",
        ] {
            assert_eq!(
                with(bad).err(),
                Some(StatusCode::INTERNAL_SERVER_ERROR),
                "{bad:?}"
            );
        }
    }
}
