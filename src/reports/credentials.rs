//! Credentials that worked and then stopped, watched as answers come: the
//! run may have deleted or changed the very account it uses.

use crate::execution::Exchange;

/// Answers in a row an operation that had answered 2xx must refuse (401 or
/// 403) to count as refusing now.
pub(super) const REFUSED_STREAK: u64 = 20;

/// Credentials that worked and then stopped: the run may have deleted or
/// changed the very account it uses (`DELETE /accounts`). Watched per
/// operation, as endpoints open to all keep answering. A refusal counts
/// only with evidence that it is about credentials: a 401, a
/// `WWW-Authenticate` header, or a 403 on a resource the run did not
/// delete (servers answer 403 for what is gone, or was never there).
#[derive(Default)]
pub(super) struct AuthWatch {
    /// The latest request with credentials that got past them (any
    /// answer but 401 and 403, any method: a `GET /logout` ends a session
    /// as well as a `DELETE /accounts/me`), and its sequence number.
    pub(super) last_change: Option<(Change, u64)>,
    /// Per operation position.
    pub(super) ops: Vec<OpWatch>,
    /// The operations that turned, the request before the earliest of
    /// their runs of refusals began, and the refusal that showed it.
    pub(super) lost: Option<(Vec<String>, Option<Change>, String)>,
    /// When the run of refusals of the `lost` change began.
    pub(super) lost_since: u64,
    /// Paths the run deleted (a refusal under one says nothing of the
    /// credentials).
    pub(super) deleted: std::collections::HashSet<String>,
}

/// Deleted paths remembered, at most.
const DELETED: usize = 1 << 16;

/// A request that got past the credentials: its operation and `METHOD
/// path (answered S)`.
pub(super) type Change = (String, String);

#[derive(Default, Clone)]
pub(super) struct OpWatch {
    pub(super) turned: bool,
    pub(super) streak: u64,
    /// The last request that got past the credentials before this run of
    /// refusals began, and its sequence number.
    pub(super) since: Option<(Change, u64)>,
    /// The first refusal that said it was about credentials (a 401, a
    /// `WWW-Authenticate` header), for the warning to name.
    pub(super) evidence: Option<String>,
}

/// What a refusal says about credentials, for people: `GET /a answered
/// 401 (WWW-Authenticate: Bearer realm="x")`; `None` when nothing in it
/// speaks of credentials.
fn auth_evidence(ex: &Exchange, status: u16) -> Option<String> {
    let challenge = ex.header("www-authenticate");
    if status != 401 && challenge.is_none() {
        return None;
    }
    let path = ex.request.path.split('?').next().unwrap_or("");
    let mut said = format!("{} {path} answered {status}", ex.request.method);
    if let Some(c) = challenge {
        let c: String = c.chars().filter(|c| !c.is_control()).take(80).collect();
        said.push_str(&format!(" with WWW-Authenticate: {c}"));
    }
    Some(said)
}

impl AuthWatch {
    /// Notes answer `status` to `ex`, of the operation at position `i`,
    /// which had answered 2xx before when `worked`.
    pub(super) fn see(&mut self, i: usize, worked: bool, ex: &Exchange, status: u16) {
        let path = ex.request.path.split('?').next().unwrap_or("");
        let evidence = match status {
            401 | 403 => auth_evidence(ex, status),
            _ => None,
        };
        let op = &mut self.ops[i];
        if op.evidence.is_none() {
            op.evidence.clone_from(&evidence);
        }
        let with_credentials = !ex.request.without_credentials()
            && ex.request.identity.as_deref() != Some(crate::execution::identities::ANONYMOUS);
        if with_credentials && !matches!(status, 401 | 403) {
            // Written over in place: most answers of a run get past the
            // credentials, and only the latest is kept.
            let ((operation, what), seq) = self
                .last_change
                .get_or_insert_with(|| (Default::default(), 0));
            operation.clone_from(&ex.request.operation);
            what.clear();
            what.push_str(&ex.request.method);
            what.push(' ');
            what.push_str(path);
            what.push_str(" (answered ");
            what.push_str(&status.to_string());
            what.push(')');
            *seq = ex.seq;
        }
        match status {
            200..=299 => {
                op.streak = 0;
                if ex.request.method == "DELETE" && self.deleted.len() < DELETED {
                    self.deleted.insert(path.trim_end_matches('/').to_string());
                }
            }
            401 | 403 => {
                let gone = {
                    let mut at = path.trim_end_matches('/');
                    let mut found = false;
                    while !at.is_empty() {
                        if self.deleted.contains(at) {
                            found = true;
                            break;
                        }
                        at = at.rsplit_once('/').map_or("", |(head, _)| head);
                    }
                    found
                };
                // A 403 on what the run deleted says the thing is gone.
                if evidence.is_none() && gone {
                    return;
                }
                let op = &mut self.ops[i];
                if op.streak == 0 {
                    op.since = self.last_change.clone();
                }
                op.streak += 1;
                if worked && !op.turned && op.streak == REFUSED_STREAK {
                    op.turned = true;
                    let name = ex.request.operation.clone();
                    let shown = evidence.unwrap_or_else(|| {
                        format!("{} {path} answered {status}", ex.request.method)
                    });
                    let since = op.since.clone();
                    let began = since.as_ref().map_or(0, |(_, seq)| *seq);
                    let before = since.map(|(change, _)| change);
                    match &mut self.lost {
                        // The op whose refusals began first points at
                        // the request that ended the credentials.
                        Some((ops, change, _)) => {
                            ops.push(name);
                            if began < self.lost_since {
                                *change = before;
                                self.lost_since = began;
                            }
                        }
                        None => {
                            self.lost = Some((vec![name], before, shown));
                            self.lost_since = began;
                        }
                    }
                }
            }
            // Anything else got past the credentials check.
            _ => op.streak = 0,
        }
    }
}
