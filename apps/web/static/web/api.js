// The API as the web app calls it: the same endpoints every client uses, under /json/ with this
// browser's session (apps/core/sessions.py). Parameters go as Zulip's clients send them: form
// fields, strings as they are and everything else as JSON text.

const csrfToken = document.querySelector('meta[name="csrf-token"]').content;

export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.msg ? body.msg : `HTTP ${status}`);
    this.status = status;
    this.code = body && body.code ? body.code : null;
    this.body = body;
  }
}

export function encodeParams(params) {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(params || {})) {
    if (value === undefined || value === null) continue;
    form.append(name, typeof value === "string" ? value : JSON.stringify(value));
  }
  return form;
}

// Called when the session has ended (a 401): the page cannot do anything more.
let onLoggedOut = () => window.location.assign("/login/");
export function whenLoggedOut(callback) {
  onLoggedOut = callback;
}

export async function api(method, path, params = {}, { signal } = {}) {
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
  return send(url, init);
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

async function send(url, init) {
  const response = await fetch(url, init);
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null; // a proxy's HTML error page: handled as any failed request
  }
  if (!response.ok || !body || body.result !== "success") {
    const error = new ApiError(response.status, body);
    if (response.status === 401) {
      // A request sent before the session got a new key (a new password gives it one: the event
      // queue's long poll may have been waiting since) is refused with the old one; only when the
      // browser's cookie is refused too has the session ended.
      if (await sessionIsOpen()) {
        error.staleSession = true;
      } else {
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
