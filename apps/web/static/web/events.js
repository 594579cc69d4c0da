// The page's event queue: POST /json/register, then long-polls of GET /json/events for as long as
// the page is open. A queue the server no longer knows (BAD_EVENT_QUEUE_ID: it expired while the
// laptop slept, or the server dropped it) is registered again, and the page reloads its state; any
// other failure is retried with a growing, jittered delay, showing "reconnecting" meanwhile.

import { api, ApiError } from "./api.js";

// At most 10 s between tries, as the mobile app's (zulip-flutter's BackoffMachine): a server
// restarted is seen back within seconds (the newcomer QA pass: 30 s left the page "Reconnecting…"
// for 22 s with the server up).
const MAX_BACKOFF_MS = 10000;
// While events flow (a busy channel), polls are at least this far apart, so each answer brings what
// came meanwhile: one poll per event would spend the polls' rate limit in a minute (the web app QA
// pass: a burst of 176 messages locked the page out).
const MIN_POLL_INTERVAL_MS = 400;

export class EventQueue {
  // onState(registerResponse): a new queue and the state it starts from. onEvents(events): each
  // batch, in order. onStatus("connecting" | "connected" | "reconnecting", seconds to the next try, the error).
  constructor(registerParams, { onState, onEvents, onStatus }) {
    this.registerParams = registerParams;
    this.onState = onState;
    this.onEvents = onEvents;
    this.onStatus = onStatus;
    this.queueId = null;
    this.lastEventId = -1;
    this.failures = 0;
    this.lastPollAt = 0;
    this.controller = null;
    this.wakeUp = null;
    this.stopped = false;
  }

  start() {
    // Back online, or the tab shown again after a sleep: retry now rather than at the next backoff.
    window.addEventListener("online", () => this.retryNow());
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") this.retryNow();
    });
    this.run();
  }

  stop() {
    this.stopped = true;
    if (this.controller) this.controller.abort();
  }

  retryNow() {
    if (this.wakeUp) this.wakeUp();
  }

  async run() {
    while (!this.stopped) {
      try {
        if (this.queueId === null) await this.register();
        const early = this.lastPollAt + MIN_POLL_INTERVAL_MS - Date.now();
        if (early > 0 && this.failures === 0) await this.sleep(early);
        this.lastPollAt = Date.now();
        // After a failure, a first poll that does not wait: its answer says the server is back.
        const body = await this.poll({ dontBlock: this.failures > 0 });
        this.failures = 0;
        this.onStatus("connected");
        if (body.events.length) {
          this.lastEventId = Math.max(this.lastEventId, ...body.events.map((event) => event.id));
          const shown = body.events.filter((event) => event.type !== "heartbeat");
          if (shown.length) this.onEvents(shown);
        }
      } catch (error) {
        if (this.stopped || (error.status === 401 && !error.staleSession)) return;
        if (error.staleSession) continue; // polled again, with the session's new key
        console.warn("event queue:", error);
        if (error instanceof ApiError && error.code === "BAD_EVENT_QUEUE_ID") {
          this.queueId = null; // registered again at once: the state is reloaded with it
          continue;
        }
        this.failures += 1;
        const delay = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.min(this.failures - 1, 5));
        // A refusal that names its wait (a rate limit, a server busy) is not asked again sooner.
        const wait = Math.max(delay / 2 + Math.random() * (delay / 2), (error.retryAfter ?? 0) * 1000);
        this.onStatus("reconnecting", Math.round(wait / 1000), error);
        await this.sleep(wait);
      }
    }
  }

  async register() {
    this.onStatus(this.failures ? "reconnecting" : "connecting");
    const state = await api("POST", "/register", this.registerParams);
    this.queueId = state.queue_id;
    this.lastEventId = state.last_event_id;
    this.failures = 0;
    this.onStatus("connected"); // the poll that follows waits, connected, until something happens
    this.onState(state);
  }

  async poll({ dontBlock = false } = {}) {
    this.controller = new AbortController();
    // A poll waits up to a minute on the server; past two, the connection is presumed dead
    // (a laptop that slept with it open).
    const timeout = setTimeout(() => this.controller.abort(), 120000);
    try {
      return await api(
        "GET",
        "/events",
        { queue_id: this.queueId, last_event_id: this.lastEventId, dont_block: dontBlock || undefined },
        { signal: this.controller.signal },
      );
    } finally {
      clearTimeout(timeout);
    }
  }

  sleep(ms) {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = done;
    }).finally(() => {
      this.wakeUp = null;
    });
  }
}
