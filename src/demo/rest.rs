//! The REST front end, as described by `models/demo/openapi.yaml`.
//!
//! Bodies and parameters are validated by hand rather than with axum's typed
//! extractors, so every invalid input gets the documented 400 + `Error` body
//! (axum's own rejections would answer 422 or plain text).

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Map, Value};

use super::store::{
    Author, Book, BookPatch, BookStatus, NewBook, Order, OrderStatus, Review, SharedStore,
    StoreError, MAX_AMOUNT,
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

async fn list_books(State(store): State<SharedStore>, path: PathParams) -> ApiResult {
    let author_id = path_id(&path, "authorId")?;
    let books = store.lock().list_books(author_id)?;
    Ok(list(
        books
            .iter()
            .map(|book| book_json(book, PriceView::Stored))
            .collect(),
    ))
}

async fn create_book(State(store): State<SharedStore>, path: PathParams, body: Bytes) -> ApiResult {
    let author_id = path_id(&path, "authorId")?;
    let object = json_object(&body)?;
    let new = NewBook {
        title: required(string_field(&object, "title", 1)?, "title")?,
        price: required(amount_field(&object, "price")?, "price")?,
        stock: required(integer_field(&object, "stock", 0, MAX_AMOUNT)?, "stock")?,
        tags: tags_field(&object)?.unwrap_or_default(),
    };
    let book = store.lock().create_book(author_id, new)?;
    Ok(created(
        format!("/authors/{author_id}/books/{}", book.id),
        book_json(&book, PriceView::Fresh),
    ))
}

async fn get_book(State(store): State<SharedStore>, path: PathParams) -> ApiResult {
    let author_id = path_id(&path, "authorId")?;
    let book_id = path_id(&path, "bookId")?;
    let book = store.lock().book_of(author_id, book_id)?;
    Ok(Json(book_json(&book, PriceView::Stored)).into_response())
}

async fn update_book(State(store): State<SharedStore>, path: PathParams, body: Bytes) -> ApiResult {
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
    let book = store.lock().update_book(author_id, book_id, patch)?;
    Ok(Json(book_json(&book, PriceView::Fresh)).into_response())
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

async fn create_review(
    State(store): State<SharedStore>,
    path: PathParams,
    body: Bytes,
) -> ApiResult {
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

async fn list_orders(State(store): State<SharedStore>, query: QueryParams) -> ApiResult {
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
}
