// The API as the web app calls it: the same endpoints every client uses, under /json/ with this
// browser's session (apps/core/sessions.py). Parameters go as Zulip's clients send them: form
// fields, strings as they are and everything else as JSON text.

const csrfToken = document.querySelector('meta[name="csrf-token"]').content;

export class ApiError extends Error {
  // `retryAfter`: the seconds a refusal asks to wait (a rate limit's 429, a 503), from its
  // Retry-After header or, as Zulip's answers have it, the body's `retry-after`.
  constructor(status, body, retryAfter = null) {
    const wait = Number(body?.["retry-after"] ?? retryAfter);
    const seconds = Number.isFinite(wait) && wait > 0 ? Math.ceil(wait) : null;
    let text = body && body.msg ? body.msg : `HTTP ${status}`;
    if (status === 429 && seconds) text += `: try again in ${seconds} s`;
    super(text);
    this.status = status;
    this.code = body && body.code ? body.code : null;
    this.body = body;
    this.retryAfter = seconds;
  }
}

// What a request that got no answer at all says (fetch's own "Failed to fetch" names nothing).
export const UNREACHABLE = "the server cannot be reached (is this device online?)";

export function encodeParams(params) {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(params || {})) {
    if (value === undefined || value === null) continue;
    form.append(name, typeof value === "string" ? value : JSON.stringify(value));
  }
  return form;
}

// Called when the session has ended (a 401): the page cannot do anything more. The login page says
// so, and keeps the view (the location's hash) to come back to (the web app QA pass: logged out in
// another tab, one logged in again to the combined feed).
let onLoggedOut = () => window.location.assign(`/login/?session_ended${window.location.hash}`);
let loggedOut = false;
export function whenLoggedOut(callback) {
  onLoggedOut = callback;
}

// The page logs out (its form is sent): the refusals that follow are no reason to go elsewhere than
// where logging out leads (a long poll refused at once navigated to the login page "session ended",
// aborting the form's own navigation).
export function loggingOut() {
  loggedOut = true;
}

// `aside`: a request the page makes of itself (a typing notice), whose refusal is no reason to leave
// the page for the login (the writer's next action, or the event queue, finds the session ended).
export async function api(method, path, params = {}, { signal, aside = false } = {}) {
  let url = `/json${path}`;
  const init = { method, credentials: "same-origin", headers: { Accept: "application/json" }, signal };
  if (method === "GET") {
    const query = encodeParams(params).toString();
    if (query) url += `?${query}`;
  } else {
    init.headers["X-CSRFToken"] = csrfToken;
    init.headers["Content-Type"] = "application/x-www-form-urlencoded";
    init.body = encodeParams(params).toString();
  }
  return send(url, init, { aside });
}

// A file, as Zulip's web app sends one (a multipart form): POST /json/user_uploads answers its `url`,
// POST /json/users/me/avatar the new `avatar_url`.
export const upload = (file) => postFile("/json/user_uploads", file);
export const uploadAvatar = (file) => postFile("/json/users/me/avatar", file);

function postFile(url, file) {
  const form = new FormData();
  form.append("file", file, file.name);
  const headers = { Accept: "application/json", "X-CSRFToken": csrfToken };
  return send(url, { method: "POST", credentials: "same-origin", headers, body: form });
}

async function send(url, init, { aside = false } = {}) {
  let response;
  try {
    response = await fetch(url, init);
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, { msg: UNREACHABLE });
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null; // a proxy's HTML error page: handled as any failed request
  }
  if (!response.ok || !body || body.result !== "success") {
    const error = new ApiError(response.status, body, response.headers.get("Retry-After"));
    if (response.status === 401 && !aside) {
      // A request sent before the session got a new key (a new password gives it one: the event
      // queue's long poll may have been waiting since) is refused with the old one; only when the
      // browser's cookie is refused too has the session ended.
      if (await sessionIsOpen()) {
        error.staleSession = true;
      } else if (!loggedOut) {
        // Once: a click's request and the long poll refused together navigated twice, the second
        // aborting the first (the CI run of 56f8ceb).
        loggedOut = true;
        onLoggedOut(error);
      }
    }
    throw error;
  }
  return body;
}

async function sessionIsOpen() {
  try {
    const response = await fetch("/json/users/me", { credentials: "same-origin", headers: { Accept: "application/json" } });
    return response.ok;
  } catch {
    return false;
  }
}
