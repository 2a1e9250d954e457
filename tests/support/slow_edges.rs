//! A purpose-built project tracker (34 operations) that is slow and crashes
//! (answers 500) only on the inputs that most often break servers, and only
//! behind ids that a bare listing alone gives (issue 30):
//!
//! - It answers one request at a time and holds each for [`SPACING`], so it
//!   serves at most 50 requests a second however many arrive at once: a
//!   search has a few thousand requests in 90 s, not hundreds of thousands.
//! - Projects (`prj-…`) and boards (`brd-…`) have made-up ids, listed by
//!   `GET /projects` and `GET /projects/{project_id}/boards`; nothing creates
//!   either. Their listings take optional filters (`owner`, `tag`,
//!   `name_pattern`) that any value not in the seed data empties: only a
//!   bare listing (`limit` and `offset` have defaults) gives the ids.
//!
//! The planted crashes ([`Crash`]), each answering a Python or Node error
//! text, each on its exact trigger alone (a near miss is refused with 400
//! or 422, as every other operation refuses wrong input):
//!
//! 1. `listTasks` (`GET /projects/{project_id}/boards/{board_id}/tasks`): an
//!    `offset` past 64 bits, written digit for digit ("OverflowError: Python
//!    int too large to convert to SQLite INTEGER"), on an existing project
//!    and board (else 404): two levels of listed ids deep.
//! 2. `getTask` (`…/tasks/{task_id}`): a `task_id` past 64 bits, on an
//!    existing project and board; an unknown task id is a 404.
//! 3. `updateBoard` (`PATCH /projects/{project_id}/boards/{board_id}`): a
//!    `page_limit` past 64 bits in the JSON body, read as the digits it is
//!    written with (a rounded `1e30` is a 422).
//! 4. `updateProjectSettings` (`PUT /projects/{project_id}/settings`): a
//!    JSON body that is not an object (`null`, `[]`, `[null, null]`, `"x"`,
//!    `1`, `true`): "TypeError: Cannot read properties of null (reading
//!    'theme')"; an object with wrong fields is a 422.
//! 5. `createLabel` (`POST /projects/{project_id}/labels`): an object or an
//!    array in the string field `name` ("AttributeError: 'dict' object has
//!    no attribute 'strip'"); a number, boolean or null there is a 422.
//! 6. `bulkCreateTasks` (`POST …/tasks/bulk`, an array of tasks): a value
//!    that is neither a string nor null in an item's enum field `status`;
//!    a string outside the enum, or null, is a 422.
//! 7. `listUsers` (`GET /users`): a `limit` past 64 bits, the one crash
//!    that needs no id (a baseline); an ordinary out-of-range limit is a 400.
//! 8. `createAutomation` (`POST /automations`): an integer past 64 bits in
//!    a field of the trigger's alternative (`trigger` is a `oneOf`
//!    discriminated by `type`: `schedule.retries` or `webhook.timeout_ms`),
//!    in an otherwise valid body (as Arize Phoenix's prompt
//!    `invocation_parameters.<provider>.seed`).
//! 9. `searchActivity` (`POST /activity/search`): a text query with a
//!    `-word` exclusion, as the description's own example of
//!    `filter.text.query` has, two levels down behind `anyOf [.., null]`
//!    ("IndexError" in the query parser; as Prefect's event filter, which
//!    broke on its examples).
//! 10. `createLink` (`POST /projects/{project_id}/links`): a well-formed
//!     `board_id` (`brd-` and six hex digits) that names no board
//!     ("AssertionError: Board … not found", as Prefect's block documents);
//!     a malformed one is a 422, and so is a `name` that is not lowercase
//!     letters, digits and dashes, refused in Prefect's words and shape
//!     (`exception_detail` entries), so the run must learn the rule first.
//!
//! The server counts the requests each operation received, when each came,
//! and which crashes fired, so a test can say what was and was not reached.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

/// How long the server holds each request, one at a time: at most 50 a second.
pub const SPACING: Duration = Duration::from_millis(20);

/// A project that exists (the first `GET /projects` lists).
pub const PROJECT: &str = "prj-7c1e4a";
/// A board of [`PROJECT`].
pub const BOARD: &str = "brd-5e0c71";
/// A task on [`BOARD`].
pub const TASK: i64 = 73021;

/// The description the server implements.
pub const SPEC: &str = r##"
openapi: 3.0.3
info:
  title: Tracker
  version: "2.3"
  description: Projects, their boards and tasks, labels, comments and people.
paths:
  /health:
    get:
      operationId: healthCheck
      tags: [meta]
      responses:
        "200":
          description: the service is up
          content:
            application/json:
              schema:
                type: object
                required: [status]
                properties: {status: {type: string, enum: [ok]}}
  /version:
    get:
      operationId: getVersion
      tags: [meta]
      responses:
        "200":
          description: what runs
          content:
            application/json:
              schema:
                type: object
                properties: {version: {type: string}, build: {type: string}}
  /me:
    get:
      operationId: getCurrentUser
      tags: [users]
      responses:
        "200":
          description: the caller
          content: {application/json: {schema: {$ref: "#/components/schemas/User"}}}
  /settings:
    get:
      operationId: getAccountSettings
      tags: [settings]
      responses:
        "200":
          description: the caller's settings
          content: {application/json: {schema: {$ref: "#/components/schemas/AccountSettings"}}}
    put:
      operationId: updateAccountSettings
      tags: [settings]
      requestBody:
        required: true
        content: {application/json: {schema: {$ref: "#/components/schemas/AccountSettings"}}}
      responses:
        "200":
          description: the settings, replaced
          content: {application/json: {schema: {$ref: "#/components/schemas/AccountSettings"}}}
        "400": {$ref: "#/components/responses/BadRequest"}
        "422": {$ref: "#/components/responses/Unprocessable"}
  /users:
    get:
      operationId: listUsers
      tags: [users]
      parameters:
        - {name: role, in: query, schema: {type: string, enum: [admin, member, guest]}}
        - {$ref: "#/components/parameters/limit"}
        - {$ref: "#/components/parameters/offset"}
      responses:
        "200":
          description: the users
          content:
            application/json:
              schema: {type: array, items: {$ref: "#/components/schemas/User"}}
        "400": {$ref: "#/components/responses/BadRequest"}
    post:
      operationId: createUser
      tags: [users]
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name, email]
              properties:
                name: {type: string, minLength: 1, maxLength: 60}
                email: {type: string, format: email, maxLength: 120}
                role: {type: string, enum: [admin, member, guest]}
      responses:
        "201":
          description: the new user
          content: {application/json: {schema: {$ref: "#/components/schemas/User"}}}
        "400": {$ref: "#/components/responses/BadRequest"}
        "422": {$ref: "#/components/responses/Unprocessable"}
  /users/{user_id}:
    get:
      operationId: getUser
      tags: [users]
      parameters:
        - {name: user_id, in: path, required: true, schema: {type: string}}
      responses:
        "200":
          description: the user
          content: {application/json: {schema: {$ref: "#/components/schemas/User"}}}
        "404": {$ref: "#/components/responses/NotFound"}
  /projects:
    get:
      operationId: listProjects
      tags: [projects]
      parameters:
        - {name: owner, in: query, description: only projects this user owns, schema: {type: string}}
        - {name: tag, in: query, description: only projects with this tag, schema: {type: string}}
        - {name: name_pattern, in: query, description: "a name, * for any run of characters", schema: {type: string}}
        - {$ref: "#/components/parameters/limit"}
        - {$ref: "#/components/parameters/offset"}
      responses:
        "200":
          description: the projects
          content:
            application/json:
              schema: {type: array, items: {$ref: "#/components/schemas/Project"}}
        "400": {$ref: "#/components/responses/BadRequest"}
  /projects/{project_id}:
    parameters:
      - {$ref: "#/components/parameters/project_id"}
    get:
      operationId: getProject
      tags: [projects]
      responses:
        "200":
          description: the project
          content: {application/json: {schema: {$ref: "#/components/schemas/Project"}}}
        "404": {$ref: "#/components/responses/NotFound"}
    patch:
      operationId: updateProject
      tags: [projects]
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties:
                name: {type: string, minLength: 1, maxLength: 80}
                description: {type: string, maxLength: 500}
      responses:
        "200":
          description: the project, changed
          content: {application/json: {schema: {$ref: "#/components/schemas/Project"}}}
        "400": {$ref: "#/components/responses/BadRequest"}
        "404": {$ref: "#/components/responses/NotFound"}
        "422": {$ref: "#/components/responses/Unprocessable"}
  /projects/{project_id}/members:
    get:
      operationId: listMembers
      tags: [projects]
      parameters:
        - {$ref: "#/components/parameters/project_id"}
      responses:
        "200":
          description: who works on the project
          content:
            application/json:
              schema:
                type: array
                items:
                  type: object
                  required: [user_id, role]
                  properties:
                    user_id: {type: string}
                    role: {type: string, enum: [owner, editor, viewer]}
        "404": {$ref: "#/components/responses/NotFound"}
  /projects/{project_id}/settings:
    parameters:
      - {$ref: "#/components/parameters/project_id"}
    get:
      operationId: getProjectSettings
      tags: [projects]
      responses:
        "200":
          description: the project's settings
          content: {application/json: {schema: {$ref: "#/components/schemas/ProjectSettings"}}}
        "404": {$ref: "#/components/responses/NotFound"}
    put:
      operationId: updateProjectSettings
      tags: [projects]
      requestBody:
        required: true
        content: {application/json: {schema: {$ref: "#/components/schemas/ProjectSettings"}}}
      responses:
        "200":
          description: the settings, replaced
          content: {application/json: {schema: {$ref: "#/components/schemas/ProjectSettings"}}}
        "400": {$ref: "#/components/responses/BadRequest"}
        "404": {$ref: "#/components/responses/NotFound"}
        "422": {$ref: "#/components/responses/Unprocessable"}
  /projects/{project_id}/labels:
    parameters:
      - {$ref: "#/components/parameters/project_id"}
    get:
      operationId: listLabels
      tags: [labels]
      responses:
        "200":
          description: the project's labels
          content:
            application/json:
              schema: {type: array, items: {$ref: "#/components/schemas/Label"}}
        "404": {$ref: "#/components/responses/NotFound"}
    post:
      operationId: createLabel
      tags: [labels]
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name]
              properties:
                name: {type: string, minLength: 1, maxLength: 40}
                color: {type: string, pattern: "^#[0-9a-f]{6}$"}
      responses:
        "201":
          description: the new label
          content: {application/json: {schema: {$ref: "#/components/schemas/Label"}}}
        "400": {$ref: "#/components/responses/BadRequest"}
        "404": {$ref: "#/components/responses/NotFound"}
        "422": {$ref: "#/components/responses/Unprocessable"}
  /projects/{project_id}/labels/{label_id}:
    delete:
      operationId: deleteLabel
      tags: [labels]
      parameters:
        - {$ref: "#/components/parameters/project_id"}
        - {name: label_id, in: path, required: true, schema: {type: string}}
      responses:
        "204": {description: deleted}
        "404": {$ref: "#/components/responses/NotFound"}
  /projects/{project_id}/boards:
    get:
      operationId: listBoards
      tags: [boards]
      parameters:
        - {$ref: "#/components/parameters/project_id"}
        - {name: owner, in: query, description: only boards this user owns, schema: {type: string}}
        - {name: name_pattern, in: query, description: "a name, * for any run of characters", schema: {type: string}}
        - {$ref: "#/components/parameters/limit"}
        - {$ref: "#/components/parameters/offset"}
      responses:
        "200":
          description: the project's boards
          content:
            application/json:
              schema: {type: array, items: {$ref: "#/components/schemas/Board"}}
        "400": {$ref: "#/components/responses/BadRequest"}
        "404": {$ref: "#/components/responses/NotFound"}
  /projects/{project_id}/boards/{board_id}:
    parameters:
      - {$ref: "#/components/parameters/project_id"}
      - {$ref: "#/components/parameters/board_id"}
    get:
      operationId: getBoard
      tags: [boards]
      responses:
        "200":
          description: the board
          content: {application/json: {schema: {$ref: "#/components/schemas/Board"}}}
        "404": {$ref: "#/components/responses/NotFound"}
    patch:
      operationId: updateBoard
      tags: [boards]
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties:
                name: {type: string, minLength: 1, maxLength: 80}
                page_limit: {type: integer, format: int64, minimum: 1, description: tasks shown per page}
                archived: {type: boolean}
      responses:
        "200":
          description: the board, changed
          content: {application/json: {schema: {$ref: "#/components/schemas/Board"}}}
        "400": {$ref: "#/components/responses/BadRequest"}
        "404": {$ref: "#/components/responses/NotFound"}
        "422": {$ref: "#/components/responses/Unprocessable"}
  /projects/{project_id}/boards/{board_id}/tasks:
    parameters:
      - {$ref: "#/components/parameters/project_id"}
      - {$ref: "#/components/parameters/board_id"}
    get:
      operationId: listTasks
      tags: [tasks]
      parameters:
        - {name: status, in: query, schema: {type: string, enum: [open, done]}}
        - {name: tag, in: query, schema: {type: string}}
        - {name: assignee, in: query, schema: {type: string}}
        - {$ref: "#/components/parameters/limit"}
        - {$ref: "#/components/parameters/offset"}
      responses:
        "200":
          description: the board's tasks
          content:
            application/json:
              schema: {type: array, items: {$ref: "#/components/schemas/Task"}}
        "400": {$ref: "#/components/responses/BadRequest"}
        "404": {$ref: "#/components/responses/NotFound"}
    post:
      operationId: createTask
      tags: [tasks]
      requestBody:
        required: true
        content: {application/json: {schema: {$ref: "#/components/schemas/TaskInput"}}}
      responses:
        "201":
          description: the new task
          content: {application/json: {schema: {$ref: "#/components/schemas/Task"}}}
        "400": {$ref: "#/components/responses/BadRequest"}
        "404": {$ref: "#/components/responses/NotFound"}
        "422": {$ref: "#/components/responses/Unprocessable"}
  /projects/{project_id}/boards/{board_id}/tasks/bulk:
    post:
      operationId: bulkCreateTasks
      tags: [tasks]
      parameters:
        - {$ref: "#/components/parameters/project_id"}
        - {$ref: "#/components/parameters/board_id"}
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: array
              minItems: 1
              maxItems: 50
              items: {$ref: "#/components/schemas/TaskInput"}
      responses:
        "201":
          description: the new tasks
          content:
            application/json:
              schema: {type: array, items: {$ref: "#/components/schemas/Task"}}
        "400": {$ref: "#/components/responses/BadRequest"}
        "404": {$ref: "#/components/responses/NotFound"}
        "422": {$ref: "#/components/responses/Unprocessable"}
  /projects/{project_id}/boards/{board_id}/tasks/{task_id}:
    parameters:
      - {$ref: "#/components/parameters/project_id"}
      - {$ref: "#/components/parameters/board_id"}
      - {$ref: "#/components/parameters/task_id"}
    get:
      operationId: getTask
      tags: [tasks]
      responses:
        "200":
          description: the task
          content: {application/json: {schema: {$ref: "#/components/schemas/Task"}}}
        "400": {$ref: "#/components/responses/BadRequest"}
        "404": {$ref: "#/components/responses/NotFound"}
    delete:
      operationId: deleteTask
      tags: [tasks]
      responses:
        "204": {description: deleted}
        "400": {$ref: "#/components/responses/BadRequest"}
        "404": {$ref: "#/components/responses/NotFound"}
  /projects/{project_id}/boards/{board_id}/tasks/{task_id}/comments:
    parameters:
      - {$ref: "#/components/parameters/project_id"}
      - {$ref: "#/components/parameters/board_id"}
      - {$ref: "#/components/parameters/task_id"}
    get:
      operationId: listComments
      tags: [comments]
      responses:
        "200":
          description: the task's comments
          content:
            application/json:
              schema: {type: array, items: {$ref: "#/components/schemas/Comment"}}
        "400": {$ref: "#/components/responses/BadRequest"}
        "404": {$ref: "#/components/responses/NotFound"}
    post:
      operationId: addComment
      tags: [comments]
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [body]
              properties:
                body: {type: string, minLength: 1, maxLength: 2000}
      responses:
        "201":
          description: the new comment
          content: {application/json: {schema: {$ref: "#/components/schemas/Comment"}}}
        "400": {$ref: "#/components/responses/BadRequest"}
        "404": {$ref: "#/components/responses/NotFound"}
        "422": {$ref: "#/components/responses/Unprocessable"}
  /search/tasks:
    get:
      operationId: searchTasks
      tags: [search]
      parameters:
        - {name: q, in: query, required: true, schema: {type: string, minLength: 1, maxLength: 100}}
        - {$ref: "#/components/parameters/limit"}
      responses:
        "200":
          description: tasks whose title holds q
          content:
            application/json:
              schema: {type: array, items: {$ref: "#/components/schemas/Task"}}
        "400": {$ref: "#/components/responses/BadRequest"}
  /search/projects:
    get:
      operationId: searchProjects
      tags: [search]
      parameters:
        - {name: q, in: query, required: true, schema: {type: string, minLength: 1, maxLength: 100}}
      responses:
        "200":
          description: projects whose name holds q
          content:
            application/json:
              schema: {type: array, items: {$ref: "#/components/schemas/Project"}}
        "400": {$ref: "#/components/responses/BadRequest"}
  /activity:
    get:
      operationId: listActivity
      tags: [meta]
      parameters:
        - {name: limit, in: query, schema: {type: integer, minimum: 1, maximum: 50, default: 10}}
      responses:
        "200":
          description: what happened lately
          content:
            application/json:
              schema:
                type: array
                items:
                  type: object
                  required: [at, actor, action]
                  properties:
                    at: {type: string, format: date-time}
                    actor: {type: string}
                    action: {type: string}
        "400": {$ref: "#/components/responses/BadRequest"}
  /tags:
    get:
      operationId: listTags
      tags: [meta]
      responses:
        "200":
          description: every tag in use
          content:
            application/json:
              schema: {type: array, items: {type: string}}
  /automations:
    post:
      operationId: createAutomation
      tags: [automations]
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name, trigger]
              properties:
                name: {type: string, minLength: 1, maxLength: 80}
                trigger:
                  oneOf:
                    - $ref: "#/components/schemas/ScheduleTrigger"
                    - $ref: "#/components/schemas/WebhookTrigger"
                  discriminator: {propertyName: type}
      responses:
        "201":
          description: the new automation
          content: {application/json: {schema: {$ref: "#/components/schemas/Automation"}}}
        "400": {$ref: "#/components/responses/BadRequest"}
        "422": {$ref: "#/components/responses/Unprocessable"}
  /activity/search:
    post:
      operationId: searchActivity
      tags: [search]
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              properties:
                filter:
                  anyOf:
                    - $ref: "#/components/schemas/ActivityFilter"
                    - {type: "null"}
                limit: {type: integer, minimum: 1, maximum: 50}
      responses:
        "200":
          description: what happened, filtered
          content:
            application/json:
              schema: {type: array, items: {$ref: "#/components/schemas/Activity"}}
        "400": {$ref: "#/components/responses/BadRequest"}
        "422": {$ref: "#/components/responses/Unprocessable"}
  /projects/{project_id}/links:
    post:
      operationId: createLink
      tags: [projects]
      parameters:
        - {$ref: "#/components/parameters/project_id"}
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name, board_id]
              properties:
                name: {type: string, minLength: 1, maxLength: 40}
                board_id: {type: string, description: the board the link opens}
      responses:
        "201":
          description: the new link
          content: {application/json: {schema: {$ref: "#/components/schemas/Link"}}}
        "400": {$ref: "#/components/responses/BadRequest"}
        "404": {$ref: "#/components/responses/NotFound"}
        "422":
          description: a body with wrong fields
          content: {application/json: {schema: {type: object}}}
components:
  parameters:
    project_id: {name: project_id, in: path, required: true, schema: {type: string}}
    board_id: {name: board_id, in: path, required: true, schema: {type: string}}
    task_id: {name: task_id, in: path, required: true, schema: {type: integer, format: int64}}
    limit: {name: limit, in: query, schema: {type: integer, minimum: 1, maximum: 100, default: 20}}
    offset: {name: offset, in: query, schema: {type: integer, minimum: 0, default: 0}}
  responses:
    BadRequest:
      description: a malformed request
      content: {application/json: {schema: {$ref: "#/components/schemas/Error"}}}
    NotFound:
      description: no such resource
      content: {application/json: {schema: {$ref: "#/components/schemas/Error"}}}
    Unprocessable:
      description: a body with wrong fields
      content: {application/json: {schema: {$ref: "#/components/schemas/Error"}}}
  schemas:
    Error:
      type: object
      required: [error]
      properties: {error: {type: string}}
    User:
      type: object
      required: [id, name, email, role]
      properties:
        id: {type: string}
        name: {type: string}
        email: {type: string}
        role: {type: string, enum: [admin, member, guest]}
    AccountSettings:
      type: object
      required: [timezone, locale]
      properties:
        timezone: {type: string, minLength: 1, maxLength: 64}
        locale: {type: string, enum: [en, de, fr, ja]}
        digest: {type: string, enum: [daily, weekly, "off"]}
    Project:
      type: object
      required: [id, name, owner, tags]
      properties:
        id: {type: string}
        name: {type: string}
        description: {type: string}
        owner: {type: string}
        tags: {type: array, items: {type: string}}
    ProjectSettings:
      type: object
      required: [theme, default_view]
      properties:
        theme: {type: string, enum: [light, dark]}
        default_view: {type: string, enum: [list, board]}
        notifications: {type: boolean}
    Label:
      type: object
      required: [id, name]
      properties:
        id: {type: string}
        name: {type: string}
        color: {type: string}
    Board:
      type: object
      required: [id, project_id, name, owner, page_limit, archived]
      properties:
        id: {type: string}
        project_id: {type: string}
        name: {type: string}
        owner: {type: string}
        page_limit: {type: integer, format: int64}
        archived: {type: boolean}
    TaskInput:
      type: object
      required: [title, status]
      properties:
        title: {type: string, minLength: 1, maxLength: 200}
        status: {type: string, enum: [open, done]}
        priority: {type: integer, minimum: 1, maximum: 5}
        tags: {type: array, maxItems: 10, items: {type: string}}
    Task:
      type: object
      required: [id, board_id, title, status, priority, tags]
      properties:
        id: {type: integer, format: int64}
        board_id: {type: string}
        title: {type: string}
        status: {type: string, enum: [open, done]}
        priority: {type: integer}
        tags: {type: array, items: {type: string}}
    Comment:
      type: object
      required: [id, task_id, author, body]
      properties:
        id: {type: integer}
        task_id: {type: integer, format: int64}
        author: {type: string}
        body: {type: string}
    ScheduleTrigger:
      type: object
      required: [type, schedule]
      properties:
        type: {type: string, enum: [schedule]}
        schedule:
          type: object
          required: [cron]
          properties:
            cron: {type: string, minLength: 1, maxLength: 60}
            retries: {type: integer, minimum: 0}
    WebhookTrigger:
      type: object
      required: [type, webhook]
      properties:
        type: {type: string, enum: [webhook]}
        webhook:
          type: object
          required: [path]
          properties:
            path: {type: string, minLength: 1, maxLength: 100}
            timeout_ms: {type: integer, minimum: 1}
    Automation:
      type: object
      required: [id, name, trigger]
      properties:
        id: {type: string}
        name: {type: string}
        trigger: {type: object}
    ActivityFilter:
      type: object
      properties:
        actor:
          anyOf:
            - {type: string}
            - {type: "null"}
        text:
          anyOf:
            - $ref: "#/components/schemas/TextFilter"
            - {type: "null"}
    TextFilter:
      type: object
      required: [query]
      properties:
        query:
          type: string
          minLength: 1
          maxLength: 200
          description: words an entry must hold; -word leaves out the entries that hold it
          examples: ["deploy -staging", "login"]
    Activity:
      type: object
      required: [at, actor, action]
      properties:
        at: {type: string, format: date-time}
        actor: {type: string}
        action: {type: string}
    Link:
      type: object
      required: [id, name, board_id]
      properties:
        id: {type: string}
        name: {type: string}
        board_id: {type: string}
"##;

/// Every operation: its method, path template (as the description writes
/// it) and operationId. A literal segment comes before a parameter in the
/// same place (`tasks/bulk` before `tasks/{task_id}`).
pub const ROUTES: [(&str, &str, &str); 34] = [
    ("GET", "/health", "healthCheck"),
    ("GET", "/version", "getVersion"),
    ("GET", "/me", "getCurrentUser"),
    ("GET", "/settings", "getAccountSettings"),
    ("PUT", "/settings", "updateAccountSettings"),
    ("GET", "/users", "listUsers"),
    ("POST", "/users", "createUser"),
    ("GET", "/users/{user_id}", "getUser"),
    ("GET", "/projects", "listProjects"),
    ("GET", "/projects/{project_id}", "getProject"),
    ("PATCH", "/projects/{project_id}", "updateProject"),
    ("GET", "/projects/{project_id}/members", "listMembers"),
    (
        "GET",
        "/projects/{project_id}/settings",
        "getProjectSettings",
    ),
    (
        "PUT",
        "/projects/{project_id}/settings",
        "updateProjectSettings",
    ),
    ("GET", "/projects/{project_id}/labels", "listLabels"),
    ("POST", "/projects/{project_id}/labels", "createLabel"),
    (
        "DELETE",
        "/projects/{project_id}/labels/{label_id}",
        "deleteLabel",
    ),
    ("GET", "/projects/{project_id}/boards", "listBoards"),
    (
        "GET",
        "/projects/{project_id}/boards/{board_id}",
        "getBoard",
    ),
    (
        "PATCH",
        "/projects/{project_id}/boards/{board_id}",
        "updateBoard",
    ),
    (
        "GET",
        "/projects/{project_id}/boards/{board_id}/tasks",
        "listTasks",
    ),
    (
        "POST",
        "/projects/{project_id}/boards/{board_id}/tasks",
        "createTask",
    ),
    (
        "POST",
        "/projects/{project_id}/boards/{board_id}/tasks/bulk",
        "bulkCreateTasks",
    ),
    (
        "GET",
        "/projects/{project_id}/boards/{board_id}/tasks/{task_id}",
        "getTask",
    ),
    (
        "DELETE",
        "/projects/{project_id}/boards/{board_id}/tasks/{task_id}",
        "deleteTask",
    ),
    (
        "GET",
        "/projects/{project_id}/boards/{board_id}/tasks/{task_id}/comments",
        "listComments",
    ),
    (
        "POST",
        "/projects/{project_id}/boards/{board_id}/tasks/{task_id}/comments",
        "addComment",
    ),
    ("GET", "/search/tasks", "searchTasks"),
    ("GET", "/search/projects", "searchProjects"),
    ("GET", "/activity", "listActivity"),
    ("GET", "/tags", "listTags"),
    ("POST", "/automations", "createAutomation"),
    ("POST", "/activity/search", "searchActivity"),
    ("POST", "/projects/{project_id}/links", "createLink"),
];

/// A planted crash (see the module's list).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Crash {
    /// 1: `listTasks` with an `offset` past 64 bits.
    TasksOffset,
    /// 2: `getTask` with a `task_id` past 64 bits.
    TaskId,
    /// 3: `updateBoard` with a `page_limit` past 64 bits.
    BoardPageLimit,
    /// 4: `updateProjectSettings` with a body that is not an object.
    SettingsNotObject,
    /// 5: `createLabel` with an object or array as `name`.
    LabelNameObject,
    /// 6: `bulkCreateTasks` with a non-string, non-null `status`.
    BulkStatusNotString,
    /// 7: `listUsers` with a `limit` past 64 bits.
    UsersLimit,
    /// 8: `createAutomation` with an integer past 64 bits in a field of
    /// the trigger's alternative.
    AutomationTriggerInteger,
    /// 9: `searchActivity` with a `-word` in the text query.
    ActivityExclusion,
    /// 10: `createLink` with a well-formed `board_id` that names no board.
    LinkDanglingBoard,
}

impl Crash {
    /// Every planted crash.
    pub const ALL: [Crash; 10] = [
        Crash::TasksOffset,
        Crash::TaskId,
        Crash::BoardPageLimit,
        Crash::SettingsNotObject,
        Crash::LabelNameObject,
        Crash::BulkStatusNotString,
        Crash::UsersLimit,
        Crash::AutomationTriggerInteger,
        Crash::ActivityExclusion,
        Crash::LinkDanglingBoard,
    ];

    /// The operationId it crashes.
    pub fn operation(self) -> &'static str {
        match self {
            Crash::TasksOffset => "listTasks",
            Crash::TaskId => "getTask",
            Crash::BoardPageLimit => "updateBoard",
            Crash::SettingsNotObject => "updateProjectSettings",
            Crash::LabelNameObject => "createLabel",
            Crash::BulkStatusNotString => "bulkCreateTasks",
            Crash::UsersLimit => "listUsers",
            Crash::AutomationTriggerInteger => "createAutomation",
            Crash::ActivityExclusion => "searchActivity",
            Crash::LinkDanglingBoard => "createLink",
        }
    }

    /// What triggers it, for messages.
    pub fn trigger(self) -> &'static str {
        match self {
            Crash::TasksOffset => "an offset past 64 bits on a listed project and board",
            Crash::TaskId => "a task_id past 64 bits on a listed project and board",
            Crash::BoardPageLimit => "a body page_limit past 64 bits on a listed board",
            Crash::SettingsNotObject => "a body that is not an object on a listed project",
            Crash::LabelNameObject => "an object or array as name on a listed project",
            Crash::BulkStatusNotString => "a non-string status in a bulk item on a listed board",
            Crash::UsersLimit => "a limit past 64 bits",
            Crash::AutomationTriggerInteger => {
                "an integer past 64 bits in the trigger alternative's retries or timeout_ms"
            }
            Crash::ActivityExclusion => "a -word in filter.text.query (the description's example)",
            Crash::LinkDanglingBoard => {
                "a well-formed board_id that names no board, with a lowercase name, on a listed project"
            }
        }
    }

    /// The 500's body: the error a Python or Node service would show.
    fn error_text(self) -> &'static str {
        const OVERFLOW: &str = "Traceback (most recent call last):\n  File \"/srv/tracker/db.py\", \
            line 88, in execute\n    cursor.execute(sql, params)\n\
            OverflowError: Python int too large to convert to SQLite INTEGER\n";
        match self {
            Crash::TasksOffset
            | Crash::TaskId
            | Crash::BoardPageLimit
            | Crash::UsersLimit
            | Crash::AutomationTriggerInteger => OVERFLOW,
            Crash::ActivityExclusion => {
                "Traceback (most recent call last):\n  File \"/srv/tracker/search.py\", \
                 line 31, in parse_query\n    excluded.append(terms[i + 1])\n\
                 IndexError: list index out of range\n"
            }
            Crash::LinkDanglingBoard => {
                "Traceback (most recent call last):\n  File \"/srv/tracker/links.py\", \
                 line 19, in create_link\n    assert board, f\"Board {board_id} not found\"\n\
                 AssertionError: Board not found\n"
            }
            Crash::SettingsNotObject => {
                "TypeError: Cannot read properties of null (reading 'theme')\n    \
                 at validateSettings (/srv/app/settings.js:41:22)\n"
            }
            Crash::LabelNameObject => {
                "Traceback (most recent call last):\n  File \"/srv/tracker/labels.py\", \
                 line 23, in create_label\n    name = payload[\"name\"].strip()\n\
                 AttributeError: 'dict' object has no attribute 'strip'\n"
            }
            Crash::BulkStatusNotString => {
                "Traceback (most recent call last):\n  File \"/srv/tracker/tasks.py\", \
                 line 57, in bulk_create\n    status = item[\"status\"].lower()\n\
                 AttributeError: 'int' object has no attribute 'lower'\n"
            }
        }
    }
}

/// What reached the server.
#[derive(Debug, Default)]
struct Stats {
    per_operation: BTreeMap<&'static str, u64>,
    fired: BTreeMap<Crash, u64>,
    arrivals: Vec<Instant>,
}

/// The server's state: its data, its one-at-a-time gate, what it saw.
#[derive(Debug)]
pub struct Tracker {
    data: Mutex<Data>,
    gate: Semaphore,
    stats: Mutex<Stats>,
}

impl Tracker {
    /// How many times `crash` fired.
    pub fn fired(&self, crash: Crash) -> u64 {
        self.stats
            .lock()
            .unwrap()
            .fired
            .get(&crash)
            .copied()
            .unwrap_or(0)
    }

    /// Requests per operationId (`unrouted` for paths no operation has).
    pub fn requests(&self) -> BTreeMap<&'static str, u64> {
        self.stats.lock().unwrap().per_operation.clone()
    }

    /// Every request received.
    pub fn total(&self) -> usize {
        self.stats.lock().unwrap().arrivals.len()
    }

    /// The most requests handled in any one second.
    pub fn busiest_second(&self) -> usize {
        let arrivals = &self.stats.lock().unwrap().arrivals;
        let mut start = 0;
        let mut most = 0;
        for (end, at) in arrivals.iter().enumerate() {
            while at.duration_since(arrivals[start]) >= Duration::from_secs(1) {
                start += 1;
            }
            most = most.max(end + 1 - start);
        }
        most
    }

    /// Seconds from the first request to the last.
    pub fn span(&self) -> Duration {
        let arrivals = &self.stats.lock().unwrap().arrivals;
        match (arrivals.first(), arrivals.last()) {
            (Some(first), Some(last)) => last.duration_since(*first),
            _ => Duration::ZERO,
        }
    }

    /// A summary for a failing test: crashes fired and missed, requests per
    /// operation, the rate.
    pub fn summary(&self) -> String {
        let mut text = String::from("planted crashes:\n");
        for crash in Crash::ALL {
            let n = self.fired(crash);
            text.push_str(&format!(
                "  {:<22} {} ({}): fired {n} times\n",
                crash.operation(),
                if n > 0 { "TRIGGERED" } else { "missed" },
                crash.trigger(),
            ));
        }
        text.push_str("requests per operation:\n");
        for (op, n) in self.requests() {
            text.push_str(&format!("  {op:<22} {n}\n"));
        }
        let span = self.span().as_secs_f64();
        text.push_str(&format!(
            "{} requests in {span:.1} s ({:.1}/s), busiest second {}\n",
            self.total(),
            self.total() as f64 / span.max(0.001),
            self.busiest_second()
        ));
        text
    }
}

#[derive(Debug)]
struct Data {
    users: Vec<Value>,
    projects: Vec<Value>,
    boards: Vec<Value>,
    tasks: Vec<Value>,
    labels: Vec<(String, Value)>,
    comments: Vec<Value>,
    project_settings: BTreeMap<String, Value>,
    account: Value,
    next_id: i64,
}

impl Data {
    fn seed() -> Data {
        let users = vec![
            json!({"id": "usr-4f1c", "name": "Ada Brandt", "email": "ada@tracker.test", "role": "admin"}),
            json!({"id": "usr-9b2e", "name": "Lin Okafor", "email": "lin@tracker.test", "role": "member"}),
            json!({"id": "usr-c07a", "name": "Omar Reyes", "email": "omar@tracker.test", "role": "guest"}),
        ];
        let projects = vec![
            json!({"id": PROJECT, "name": "Apollo relaunch", "description": "the site, again",
                   "owner": "usr-4f1c", "tags": ["saffron-otter"]}),
            json!({"id": "prj-2f9b03", "name": "Billing revamp", "description": "invoices",
                   "owner": "usr-9b2e", "tags": ["velvet-knot"]}),
            json!({"id": "prj-d40e6b", "name": "Courier app", "description": "deliveries",
                   "owner": "usr-4f1c", "tags": ["copper-wren", "velvet-knot"]}),
        ];
        let board_ids = [
            (PROJECT, [BOARD, "brd-a83f12"]),
            ("prj-2f9b03", ["brd-0d9e44", "brd-71b6ca"]),
            ("prj-d40e6b", ["brd-e2f058", "brd-3c47d9"]),
        ];
        let mut boards = Vec::new();
        let mut tasks = Vec::new();
        let mut project_settings = BTreeMap::new();
        let mut labels = Vec::new();
        let mut task_id = TASK;
        for (p, (project, ids)) in board_ids.iter().enumerate() {
            project_settings.insert(
                project.to_string(),
                json!({"theme": "light", "default_view": "board", "notifications": true}),
            );
            labels.push((
                project.to_string(),
                json!({"id": format!("lbl-{}a", 31 + p), "name": "bug", "color": "#d73a4a"}),
            ));
            for (id, name) in ids.iter().zip(["Backlog", "Sprint"]) {
                boards.push(json!({"id": id, "project_id": project,
                    "name": name, "owner": "usr-9b2e",
                    "page_limit": 25, "archived": false}));
                for (t, title) in ["Write the brief", "Fix the login", "Ship it"]
                    .iter()
                    .enumerate()
                {
                    tasks.push(json!({"id": task_id, "board_id": id, "title": title,
                        "status": if t == 2 { "done" } else { "open" }, "priority": t + 1,
                        "tags": ["saffron-otter"], "assignee": "usr-c07a"}));
                    task_id += 1;
                }
            }
        }
        let comments =
            vec![json!({"id": 1, "task_id": TASK, "author": "usr-4f1c", "body": "on it"})];
        Data {
            users,
            projects,
            boards,
            tasks,
            labels,
            comments,
            project_settings,
            account: json!({"timezone": "Europe/Lisbon", "locale": "en", "digest": "weekly"}),
            next_id: 90000,
        }
    }

    fn project(&self, id: &str) -> Result<&Value, Stop> {
        self.projects
            .iter()
            .find(|p| p["id"] == id)
            .ok_or_else(|| stop(StatusCode::NOT_FOUND, "no such project"))
    }

    fn board_index(&self, project: &str, board: &str) -> Result<usize, Stop> {
        self.project(project)?;
        self.boards
            .iter()
            .position(|b| b["project_id"] == project && b["id"] == board)
            .ok_or_else(|| stop(StatusCode::NOT_FOUND, "no such board"))
    }

    fn fresh_id(&mut self) -> i64 {
        self.next_id += 1;
        self.next_id
    }
}

/// A request as the handlers read it.
struct Req {
    params: Pairs,
    query: Pairs,
    body: Bytes,
}

impl Req {
    fn param(&self, name: &str) -> &str {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map_or("", |(_, v)| v)
    }

    fn query(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON, or a 400.
    fn json(&self) -> Result<Value, Stop> {
        serde_json::from_slice(&self.body)
            .map_err(|_| stop(StatusCode::BAD_REQUEST, "the body is not JSON"))
    }

    /// The body as a JSON object, or a 400.
    fn object(&self) -> Result<Map<String, Value>, Stop> {
        match self.json()? {
            Value::Object(map) => Ok(map),
            _ => Err(stop(StatusCode::BAD_REQUEST, "the body must be an object")),
        }
    }
}

fn refuse(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(json!({"error": message}))).into_response()
}

/// Why a handler stops short: a refusal with its status and message, or a
/// planted crash.
enum Stop {
    Refuse(StatusCode, String),
    /// A 422 in Prefect's words and shape: the body field and the message.
    Invalid(&'static str, String),
    Crash(Crash),
}

fn stop(status: StatusCode, message: &str) -> Stop {
    Stop::Refuse(status, message.to_string())
}

fn unprocessable(message: &str) -> Stop {
    stop(StatusCode::UNPROCESSABLE_ENTITY, message)
}

fn ok(status: StatusCode, body: Value) -> Result<Response, Stop> {
    Ok((status, axum::Json(body)).into_response())
}

/// An integer as text: one that fits 64 bits, one written in digits that
/// does not, or no integer.
enum IntText {
    Fits(i64),
    PastSixtyFourBits,
    NotInteger,
}

fn int_text(text: &str) -> IntText {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return IntText::NotInteger;
    }
    match text.parse::<i64>() {
        Ok(v) => IntText::Fits(v),
        Err(_) => IntText::PastSixtyFourBits,
    }
}

/// A query integer between `min` and `max`, `default` when absent, else a 400.
fn bounded(req: &Req, name: &str, default: i64, min: i64, max: i64) -> Result<i64, Stop> {
    match req.query(name).map(int_text) {
        None => Ok(default),
        Some(IntText::Fits(v)) if (min..=max).contains(&v) => Ok(v),
        Some(_) => Err(stop(
            StatusCode::BAD_REQUEST,
            &format!("{name} must be an integer from {min} to {max}"),
        )),
    }
}

/// `limit` and `offset` applied to `items`, after checking them.
fn page(req: &Req, items: Vec<Value>) -> Result<Response, Stop> {
    let limit = bounded(req, "limit", 20, 1, 100)?;
    let offset = bounded(req, "offset", 0, 0, i64::MAX)?;
    let chosen: Vec<Value> = items
        .into_iter()
        .skip(usize::try_from(offset).unwrap_or(usize::MAX))
        .take(limit as usize)
        .collect();
    ok(StatusCode::OK, Value::Array(chosen))
}

/// Whether `name` matches `pattern`, `*` standing for any run of characters.
fn glob(pattern: &str, name: &str) -> bool {
    let regex = format!(
        "(?i)^{}$",
        pattern
            .split('*')
            .map(regex::escape)
            .collect::<Vec<_>>()
            .join(".*")
    );
    regex::Regex::new(&regex).is_ok_and(|r| r.is_match(name))
}

/// Whether `item` passes the optional filters `owner`, `tag`,
/// `name_pattern` and `assignee` the request gives.
fn filtered(req: &Req, item: &Value) -> bool {
    req.query("owner").is_none_or(|o| item["owner"] == o)
        && req.query("assignee").is_none_or(|a| item["assignee"] == a)
        && req.query("tag").is_none_or(|t| {
            item["tags"]
                .as_array()
                .is_some_and(|tags| tags.iter().any(|x| x == t))
        })
        && req
            .query("name_pattern")
            .is_none_or(|p| glob(p, item["name"].as_str().unwrap_or("")))
}

/// A string field: absent is `None`, a string of the right length is kept,
/// anything else is a 422.
fn string_field(
    body: &Map<String, Value>,
    name: &str,
    required: bool,
    len: std::ops::RangeInclusive<usize>,
) -> Result<Option<String>, Stop> {
    match body.get(name) {
        None if !required => Ok(None),
        Some(Value::String(s)) if len.contains(&s.chars().count()) => Ok(Some(s.clone())),
        _ => Err(unprocessable(&format!(
            "{name} must be a string of {} to {} characters",
            len.start(),
            len.end()
        ))),
    }
}

/// An enum field: absent is `None`, one of `allowed` is kept, anything else
/// is a 422.
fn enum_field(
    body: &Map<String, Value>,
    name: &str,
    required: bool,
    allowed: &[&str],
) -> Result<Option<String>, Stop> {
    match body.get(name) {
        None if !required => Ok(None),
        Some(Value::String(s)) if allowed.contains(&s.as_str()) => Ok(Some(s.clone())),
        _ => Err(unprocessable(&format!(
            "{name} must be one of {}",
            allowed.join(", ")
        ))),
    }
}

fn bool_field(body: &Map<String, Value>, name: &str) -> Result<Option<bool>, Stop> {
    match body.get(name) {
        None => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        _ => Err(unprocessable(&format!("{name} must be a boolean"))),
    }
}

/// The number text written after `"key":` in a JSON body.
fn number_text<'a>(body: &'a str, key: &str) -> Option<&'a str> {
    let quoted = format!("\"{key}\"");
    let at = body.find(&quoted)? + quoted.len();
    let rest = body[at..].trim_start().strip_prefix(':')?.trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || "-+.eE".contains(c)))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// A task made from one item of `createTask` or `bulkCreateTasks`, whose
/// `status` the caller checked to be a string or absent.
fn task_from(board: &str, id: i64, item: &Map<String, Value>) -> Result<Value, Stop> {
    let title = string_field(item, "title", true, 1..=200)?;
    let status = enum_field(item, "status", true, &["open", "done"])?;
    let priority = match item.get("priority") {
        None => 3,
        Some(p) => match p.as_i64() {
            Some(v) if (1..=5).contains(&v) => v,
            _ => return Err(unprocessable("priority must be an integer from 1 to 5")),
        },
    };
    let tags = match item.get("tags") {
        None => Vec::new(),
        Some(Value::Array(tags)) if tags.len() <= 10 && tags.iter().all(Value::is_string) => {
            tags.clone()
        }
        _ => return Err(unprocessable("tags must be at most 10 strings")),
    };
    Ok(
        json!({"id": id, "board_id": board, "title": title, "status": status,
              "priority": priority, "tags": tags}),
    )
}

/// One operation's answer, or why it stops short.
fn handle(t: &Tracker, op: &str, req: &Req) -> Result<Response, Stop> {
    let mut data = t.data.lock().unwrap();
    let data = &mut *data;
    match op {
        "healthCheck" => ok(StatusCode::OK, json!({"status": "ok"})),
        "getVersion" => ok(
            StatusCode::OK,
            json!({"version": "2.3.1", "build": "4e1a9c0"}),
        ),
        "getCurrentUser" => ok(StatusCode::OK, data.users[0].clone()),
        "getAccountSettings" => ok(StatusCode::OK, data.account.clone()),
        "updateAccountSettings" => {
            let body = req.object()?;
            let timezone = string_field(&body, "timezone", true, 1..=64)?;
            let locale = enum_field(&body, "locale", true, &["en", "de", "fr", "ja"])?;
            let digest = enum_field(&body, "digest", false, &["daily", "weekly", "off"])?;
            let mut settings = json!({"timezone": timezone, "locale": locale});
            if let Some(d) = digest {
                settings["digest"] = json!(d);
            }
            data.account = settings.clone();
            ok(StatusCode::OK, settings)
        }
        "listUsers" => {
            if let Some(IntText::PastSixtyFourBits) = req.query("limit").map(int_text) {
                return Err(Stop::Crash(Crash::UsersLimit));
            }
            let role = req.query("role");
            if role.is_some_and(|r| !["admin", "member", "guest"].contains(&r)) {
                return Err(stop(StatusCode::BAD_REQUEST, "unknown role"));
            }
            let users = data
                .users
                .iter()
                .filter(|u| role.is_none_or(|r| u["role"] == r))
                .cloned()
                .collect();
            page(req, users)
        }
        "createUser" => {
            let body = req.object()?;
            let name = string_field(&body, "name", true, 1..=60)?;
            let email = string_field(&body, "email", true, 3..=120)?;
            if !email.as_deref().is_some_and(|e| e.contains('@')) {
                return Err(unprocessable("email must be an address"));
            }
            let role = enum_field(&body, "role", false, &["admin", "member", "guest"])?;
            let id = format!("usr-{:x}", data.fresh_id());
            let user = json!({"id": id, "name": name, "email": email,
                              "role": role.unwrap_or_else(|| "member".into())});
            data.users.push(user.clone());
            ok(StatusCode::CREATED, user)
        }
        "getUser" => match data.users.iter().find(|u| u["id"] == req.param("user_id")) {
            Some(u) => ok(StatusCode::OK, u.clone()),
            None => Err(stop(StatusCode::NOT_FOUND, "no such user")),
        },
        "listProjects" => {
            let projects = data
                .projects
                .iter()
                .filter(|p| filtered(req, p))
                .cloned()
                .collect();
            page(req, projects)
        }
        "getProject" => ok(
            StatusCode::OK,
            data.project(req.param("project_id"))?.clone(),
        ),
        "updateProject" => {
            data.project(req.param("project_id"))?;
            let body = req.object()?;
            let name = string_field(&body, "name", false, 1..=80)?;
            let description = string_field(&body, "description", false, 0..=500)?;
            let project = data
                .projects
                .iter_mut()
                .find(|p| p["id"] == req.param("project_id"))
                .expect("checked above");
            if let Some(n) = name {
                project["name"] = json!(n);
            }
            if let Some(d) = description {
                project["description"] = json!(d);
            }
            ok(StatusCode::OK, project.clone())
        }
        "listMembers" => {
            let project = data.project(req.param("project_id"))?;
            ok(
                StatusCode::OK,
                json!([{"user_id": project["owner"], "role": "owner"},
                       {"user_id": "usr-c07a", "role": "viewer"}]),
            )
        }
        "getProjectSettings" => {
            let id = req.param("project_id");
            data.project(id)?;
            ok(StatusCode::OK, data.project_settings[id].clone())
        }
        "updateProjectSettings" => {
            let id = req.param("project_id");
            data.project(id)?;
            // The crash: the body is dereferenced before its shape is checked.
            let body = match req.json()? {
                Value::Object(map) => map,
                _ => return Err(Stop::Crash(Crash::SettingsNotObject)),
            };
            let theme = enum_field(&body, "theme", true, &["light", "dark"])?;
            let view = enum_field(&body, "default_view", true, &["list", "board"])?;
            let notifications = bool_field(&body, "notifications")?;
            let settings = json!({"theme": theme, "default_view": view,
                                  "notifications": notifications.unwrap_or(true)});
            data.project_settings
                .insert(id.to_string(), settings.clone());
            ok(StatusCode::OK, settings)
        }
        "listLabels" => {
            let id = req.param("project_id");
            data.project(id)?;
            let labels = data
                .labels
                .iter()
                .filter(|(p, _)| p == id)
                .map(|(_, l)| l.clone())
                .collect();
            ok(StatusCode::OK, Value::Array(labels))
        }
        "createLabel" => {
            let id = req.param("project_id");
            data.project(id)?;
            let body = req.object()?;
            // The crash: `name.strip()` on whatever came, which only a
            // dict or a list lacks (numbers fail the type check first).
            if matches!(body.get("name"), Some(Value::Object(_) | Value::Array(_))) {
                return Err(Stop::Crash(Crash::LabelNameObject));
            }
            let name = string_field(&body, "name", true, 1..=40)?;
            let color = match body.get("color") {
                None => "#cccccc".to_string(),
                Some(Value::String(c))
                    if c.len() == 7
                        && c.starts_with('#')
                        && c[1..]
                            .bytes()
                            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) =>
                {
                    c.clone()
                }
                Some(_) => return Err(unprocessable("color must be #rrggbb")),
            };
            let label =
                json!({"id": format!("lbl-{:x}", data.fresh_id()), "name": name, "color": color});
            data.labels.push((id.to_string(), label.clone()));
            ok(StatusCode::CREATED, label)
        }
        "deleteLabel" => {
            let id = req.param("project_id");
            data.project(id)?;
            let before = data.labels.len();
            data.labels
                .retain(|(p, l)| !(p == id && l["id"] == req.param("label_id")));
            if data.labels.len() == before {
                return Err(stop(StatusCode::NOT_FOUND, "no such label"));
            }
            Ok(StatusCode::NO_CONTENT.into_response())
        }
        "listBoards" => {
            let id = req.param("project_id");
            data.project(id)?;
            let boards = data
                .boards
                .iter()
                .filter(|b| b["project_id"] == id && filtered(req, b))
                .cloned()
                .collect();
            page(req, boards)
        }
        "getBoard" => {
            let at = data.board_index(req.param("project_id"), req.param("board_id"))?;
            ok(StatusCode::OK, data.boards[at].clone())
        }
        "updateBoard" => {
            let at = data.board_index(req.param("project_id"), req.param("board_id"))?;
            let body = req.object()?;
            let name = string_field(&body, "name", false, 1..=80)?;
            let archived = bool_field(&body, "archived")?;
            let page_limit = match body.get("page_limit") {
                None => None,
                Some(v) if v.as_i64().is_some_and(|n| n >= 1) => v.as_i64(),
                Some(Value::Number(_)) => {
                    // The crash: an integer the JSON reader kept whole
                    // (serde_json rounds it to a float; the digits say what
                    // was written) is stored in a 64-bit column.
                    let text = String::from_utf8_lossy(&req.body);
                    match number_text(&text, "page_limit").map(int_text) {
                        Some(IntText::PastSixtyFourBits) => {
                            return Err(Stop::Crash(Crash::BoardPageLimit));
                        }
                        _ => return Err(unprocessable("page_limit must be a positive integer")),
                    }
                }
                Some(_) => return Err(unprocessable("page_limit must be a positive integer")),
            };
            let board = &mut data.boards[at];
            if let Some(n) = name {
                board["name"] = json!(n);
            }
            if let Some(a) = archived {
                board["archived"] = json!(a);
            }
            if let Some(p) = page_limit {
                board["page_limit"] = json!(p);
            }
            ok(StatusCode::OK, board.clone())
        }
        "listTasks" => {
            let board = req.param("board_id");
            data.board_index(req.param("project_id"), board)?;
            if let Some(IntText::PastSixtyFourBits) = req.query("offset").map(int_text) {
                return Err(Stop::Crash(Crash::TasksOffset));
            }
            let status = req.query("status");
            if status.is_some_and(|s| !["open", "done"].contains(&s)) {
                return Err(stop(StatusCode::BAD_REQUEST, "status must be open or done"));
            }
            let tasks = data
                .tasks
                .iter()
                .filter(|t| {
                    t["board_id"] == board
                        && status.is_none_or(|s| t["status"] == s)
                        && filtered(req, t)
                })
                .cloned()
                .collect();
            page(req, tasks)
        }
        "createTask" => {
            let board = req.param("board_id").to_string();
            data.board_index(req.param("project_id"), &board)?;
            let body = req.object()?;
            let id = data.fresh_id();
            let task = task_from(&board, id, &body)?;
            data.tasks.push(task.clone());
            ok(StatusCode::CREATED, task)
        }
        "bulkCreateTasks" => {
            let board = req.param("board_id").to_string();
            data.board_index(req.param("project_id"), &board)?;
            let Value::Array(items) = req.json()? else {
                return Err(unprocessable("the body must be a list of tasks"));
            };
            if items.is_empty() || items.len() > 50 {
                return Err(unprocessable("from 1 to 50 tasks at once"));
            }
            let mut made = Vec::new();
            for item in &items {
                let Value::Object(item) = item else {
                    return Err(unprocessable("each task must be an object"));
                };
                // The crash: `status.lower()` before the enum check, which
                // a string passes and null is caught before.
                if item
                    .get("status")
                    .is_some_and(|s| !s.is_string() && !s.is_null())
                {
                    return Err(Stop::Crash(Crash::BulkStatusNotString));
                }
                let id = data.fresh_id();
                made.push(task_from(&board, id, item)?);
            }
            data.tasks.extend(made.iter().cloned());
            ok(StatusCode::CREATED, Value::Array(made))
        }
        "getTask" | "deleteTask" | "listComments" | "addComment" => {
            let board = req.param("board_id").to_string();
            data.board_index(req.param("project_id"), &board)?;
            let task = match int_text(req.param("task_id")) {
                IntText::Fits(v) => v,
                IntText::PastSixtyFourBits if op == "getTask" => {
                    return Err(Stop::Crash(Crash::TaskId));
                }
                IntText::PastSixtyFourBits => {
                    return Err(stop(StatusCode::NOT_FOUND, "no such task"));
                }
                IntText::NotInteger => {
                    return Err(stop(StatusCode::BAD_REQUEST, "task_id must be an integer"));
                }
            };
            let at = data
                .tasks
                .iter()
                .position(|t| t["board_id"] == board.as_str() && t["id"] == task)
                .ok_or_else(|| stop(StatusCode::NOT_FOUND, "no such task"))?;
            match op {
                "getTask" => ok(StatusCode::OK, data.tasks[at].clone()),
                "deleteTask" => {
                    data.tasks.remove(at);
                    Ok(StatusCode::NO_CONTENT.into_response())
                }
                "listComments" => ok(
                    StatusCode::OK,
                    Value::Array(
                        data.comments
                            .iter()
                            .filter(|c| c["task_id"] == task)
                            .cloned()
                            .collect(),
                    ),
                ),
                _ => {
                    let body = req.object()?;
                    let text = string_field(&body, "body", true, 1..=2000)?;
                    let comment = json!({"id": data.fresh_id(), "task_id": task,
                                         "author": "usr-4f1c", "body": text});
                    data.comments.push(comment.clone());
                    ok(StatusCode::CREATED, comment)
                }
            }
        }
        "searchTasks" | "searchProjects" => {
            let q = req.query("q").unwrap_or("");
            if q.is_empty() || q.chars().count() > 100 {
                return Err(stop(
                    StatusCode::BAD_REQUEST,
                    "q must be 1 to 100 characters",
                ));
            }
            let q = q.to_lowercase();
            let (items, field) = if op == "searchTasks" {
                (&data.tasks, "title")
            } else {
                (&data.projects, "name")
            };
            let found: Vec<Value> = items
                .iter()
                .filter(|i| {
                    i[field]
                        .as_str()
                        .is_some_and(|s| s.to_lowercase().contains(&q))
                })
                .cloned()
                .collect();
            let limit = if op == "searchTasks" {
                bounded(req, "limit", 20, 1, 100)?
            } else {
                100
            };
            ok(
                StatusCode::OK,
                Value::Array(found.into_iter().take(limit as usize).collect()),
            )
        }
        "listActivity" => {
            let limit = bounded(req, "limit", 10, 1, 50)?;
            let all = [
                json!({"at": "2024-03-01T09:00:00Z", "actor": "usr-4f1c", "action": "created a project"}),
                json!({"at": "2024-03-02T10:30:00Z", "actor": "usr-9b2e", "action": "closed a task"}),
            ];
            ok(
                StatusCode::OK,
                Value::Array(all.into_iter().take(limit as usize).collect()),
            )
        }
        "listTags" => ok(
            StatusCode::OK,
            json!(["saffron-otter", "velvet-knot", "copper-wren"]),
        ),
        "createAutomation" => {
            let body = req.object()?;
            let name = string_field(&body, "name", true, 1..=80)?;
            let Some(Value::Object(trigger)) = body.get("trigger") else {
                return Err(unprocessable("trigger must be an object"));
            };
            let (inner, text, number) = match trigger.get("type").and_then(Value::as_str) {
                Some("schedule") => ("schedule", "cron", "retries"),
                Some("webhook") => ("webhook", "path", "timeout_ms"),
                _ => return Err(unprocessable("trigger type must be schedule or webhook")),
            };
            let Some(Value::Object(fields)) = trigger.get(inner) else {
                return Err(unprocessable(&format!("trigger.{inner} must be an object")));
            };
            string_field(fields, text, true, 1..=100)?;
            let least = i64::from(number == "timeout_ms");
            match fields.get(number) {
                None => {}
                Some(v) if v.as_i64().is_some_and(|n| n >= least) => {}
                Some(Value::Number(_)) => {
                    // The crash: the integer, read whole, is stored in a
                    // 64-bit column once the body has passed its checks.
                    let raw = String::from_utf8_lossy(&req.body);
                    return match number_text(&raw, number).map(int_text) {
                        Some(IntText::PastSixtyFourBits) => {
                            Err(Stop::Crash(Crash::AutomationTriggerInteger))
                        }
                        _ => Err(unprocessable(&format!("{number} must be an integer"))),
                    };
                }
                Some(_) => return Err(unprocessable(&format!("{number} must be an integer"))),
            }
            ok(
                StatusCode::CREATED,
                json!({"id": format!("aut-{:x}", data.fresh_id()), "name": name,
                       "trigger": Value::Object(trigger.clone())}),
            )
        }
        "searchActivity" => {
            let body = req.object()?;
            let limit = match body.get("limit") {
                None => 10,
                Some(v) => match v.as_i64() {
                    Some(n) if (1..=50).contains(&n) => n,
                    _ => return Err(unprocessable("limit must be an integer from 1 to 50")),
                },
            };
            let mut query = None;
            match body.get("filter") {
                None | Some(Value::Null) => {}
                Some(Value::Object(filter)) => {
                    match filter.get("actor") {
                        None | Some(Value::Null | Value::String(_)) => {}
                        Some(_) => return Err(unprocessable("actor must be a string")),
                    }
                    match filter.get("text") {
                        None | Some(Value::Null) => {}
                        Some(Value::Object(text)) => {
                            query = string_field(text, "query", true, 1..=200)?;
                        }
                        Some(_) => return Err(unprocessable("text must be an object")),
                    }
                }
                Some(_) => return Err(unprocessable("filter must be an object")),
            }
            // The crash: an exclusion (`-word`) sends the parser past the
            // end of its term list.
            let terms: Vec<&str> = query.as_deref().unwrap_or("").split_whitespace().collect();
            if terms.iter().any(|t| t.len() > 1 && t.starts_with('-')) {
                return Err(Stop::Crash(Crash::ActivityExclusion));
            }
            let all = [
                json!({"at": "2024-03-01T09:00:00Z", "actor": "usr-4f1c", "action": "deploy to staging"}),
                json!({"at": "2024-03-02T10:30:00Z", "actor": "usr-9b2e", "action": "login"}),
            ];
            let found: Vec<Value> = all
                .into_iter()
                .filter(|a| {
                    terms
                        .iter()
                        .all(|t| a["action"].as_str().unwrap_or("").contains(t))
                })
                .take(limit as usize)
                .collect();
            ok(StatusCode::OK, Value::Array(found))
        }
        "createLink" => {
            let id = req.param("project_id");
            data.project(id)?;
            let body = req.object()?;
            // Validation first, as pydantic does, in Prefect's words.
            let name = match body.get("name") {
                Some(Value::String(n)) if (1..=40).contains(&n.chars().count()) => n.clone(),
                _ => {
                    return Err(Stop::Invalid(
                        "name",
                        "Input should be a valid string of 1 to 40 characters".into(),
                    ));
                }
            };
            if !name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            {
                return Err(Stop::Invalid(
                    "name",
                    "Value error, Link name must only contain lowercase letters, numbers, and dashes."
                        .into(),
                ));
            }
            let board = match body.get("board_id") {
                Some(Value::String(b))
                    if b.len() == 10
                        && b.starts_with("brd-")
                        && b[4..]
                            .bytes()
                            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)) =>
                {
                    b.clone()
                }
                _ => {
                    return Err(Stop::Invalid(
                        "board_id",
                        "Value error, a board id is brd- and six hex digits".into(),
                    ));
                }
            };
            // The crash: the handler asserts the board it looks up exists.
            if !data.boards.iter().any(|b| b["id"] == board.as_str()) {
                return Err(Stop::Crash(Crash::LinkDanglingBoard));
            }
            ok(
                StatusCode::CREATED,
                json!({"id": format!("lnk-{:x}", data.fresh_id()), "name": name, "board_id": board}),
            )
        }
        _ => Err(stop(StatusCode::NOT_FOUND, "no such operation")),
    }
}

/// Name and value pairs, decoded.
type Pairs = Vec<(String, String)>;

/// The operation `method path` calls and its path parameters;
/// `Err(true)` when the path is known but not with that method.
fn route(method: &Method, path: &str) -> Result<(&'static str, Pairs), bool> {
    let segments: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    let mut path_known = false;
    for (m, template, op) in ROUTES {
        let parts: Vec<&str> = template.split('/').collect();
        if parts.len() != segments.len() {
            continue;
        }
        let mut params = Vec::new();
        let fits = parts.iter().zip(&segments).all(|(part, seg)| {
            if let Some(name) = part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
                let value = percent_encoding::percent_decode_str(seg).decode_utf8_lossy();
                params.push((name.to_string(), value.into_owned()));
                !seg.is_empty()
            } else {
                part == seg
            }
        });
        if fits {
            path_known = true;
            if method.as_str() == m {
                return Ok((op, params));
            }
        }
    }
    Err(path_known)
}

async fn dispatch(
    State(t): State<Arc<Tracker>>,
    method: Method,
    uri: Uri,
    body: Bytes,
) -> Response {
    // One request at a time, each held for SPACING: the slow service.
    let _turn = t.gate.acquire().await.expect("the gate is never closed");
    let routed = route(&method, uri.path());
    {
        let mut stats = t.stats.lock().unwrap();
        stats.arrivals.push(Instant::now());
        let op = routed.as_ref().map_or("unrouted", |(op, _)| op);
        *stats.per_operation.entry(op).or_insert(0) += 1;
    }
    let response = match routed {
        Ok((op, params)) => {
            let req = Req {
                params,
                query: url::form_urlencoded::parse(uri.query().unwrap_or("").as_bytes())
                    .into_owned()
                    .collect(),
                body,
            };
            match handle(&t, op, &req) {
                Ok(answer) => answer,
                Err(Stop::Refuse(status, message)) => refuse(status, &message),
                Err(Stop::Invalid(field, message)) => (
                    StatusCode::UNPROCESSABLE_ENTITY,
                    axum::Json(json!({
                        "exception_message": "Invalid request received.",
                        "exception_detail": [{"type": "value_error", "loc": ["body", field],
                                              "msg": message}],
                    })),
                )
                    .into_response(),
                Err(Stop::Crash(crash)) => {
                    *t.stats.lock().unwrap().fired.entry(crash).or_insert(0) += 1;
                    (
                        StatusCode::INTERNAL_SERVER_ERROR,
                        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                        crash.error_text(),
                    )
                        .into_response()
                }
            }
        }
        Err(true) => refuse(StatusCode::METHOD_NOT_ALLOWED, "method not allowed"),
        Err(false) => refuse(StatusCode::NOT_FOUND, "no such path"),
    };
    tokio::time::sleep(SPACING).await;
    response
}

/// Starts a fresh tracker (its own data and counts) on a free port of
/// 127.0.0.1.
pub async fn start() -> (SocketAddr, Arc<Tracker>, JoinHandle<()>) {
    let tracker = Arc::new(Tracker {
        data: Mutex::new(Data::seed()),
        gate: Semaphore::new(1),
        stats: Mutex::new(Stats::default()),
    });
    let router = Router::new().fallback(dispatch).with_state(tracker.clone());
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .expect("a free loopback port");
    let addr = listener.local_addr().expect("a bound address");
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (addr, tracker, task)
}
