// Keyboard shortcuts, Zulip's main ones: / searches, c writes, d opens the drafts, j and k (or ↓ and
// ↑ on a message) move from message to message, Home to the first one loaded (older ones then load)
// and End (or G) to the last, r (or Enter on a message) replies to it in its conversation. Not
// while typing in a field (Esc leaves the search field), nor with Ctrl, Alt or ⌘ (the browser's).

import { replyTo } from "./compose.js";
import { $, state } from "./state.js";

// Where keys are the place's own: fields, and the emoji picker (its arrow keys, its search).
const OWN_KEYS = "input, textarea, select, [contenteditable], #emoji-picker";

const messageItems = () => [...document.querySelectorAll("#messages li.message")];

// The message moved from: the one focused, else none (the first move picks one on the screen).
const focusedMessage = () => document.activeElement?.closest?.("#messages li.message") ?? null;

function onScreen(item) {
  const { top, bottom } = item.getBoundingClientRect();
  const box = $("#compose").getBoundingClientRect().top; // what the message box covers is not shown
  return bottom > 0 && top < Math.min(window.innerHeight, box);
}

function move(step) {
  const items = messageItems();
  if (!items.length) return;
  const from = focusedMessage();
  let to;
  if (from === null) {
    const shown = items.filter(onScreen);
    to = step > 0 ? (shown[0] ?? items[0]) : (shown.at(-1) ?? items.at(-1));
  } else {
    to = items[Math.min(Math.max(items.indexOf(from) + step, 0), items.length - 1)];
  }
  to.focus({ preventScroll: true });
  to.scrollIntoView({ block: "nearest" });
}

function moveToEnd(last) {
  const items = messageItems();
  const to = last ? items.at(-1) : items[0];
  if (!to) return;
  to.focus({ preventScroll: true });
  to.scrollIntoView({ block: last ? "end" : "start" });
}

function reply() {
  const item = focusedMessage();
  const message = item && state.messages.get(Number(item.dataset.messageId));
  if (message) replyTo(message);
  else $("#compose-content").focus();
}

const KEYS = {
  "/": () => $("#search").focus(),
  c: () => $("#compose-content").focus(),
  d: () => $("#open-drafts").click(),
  j: () => move(1),
  k: () => move(-1),
  r: reply,
  Home: () => moveToEnd(false),
  End: () => moveToEnd(true),
  G: () => moveToEnd(true),
};

export function onShortcutKey(event) {
  if (event.defaultPrevented || event.ctrlKey || event.altKey || event.metaKey || event.isComposing) return;
  if (event.target.closest?.(OWN_KEYS)) return;
  // A panel's own keys (the verify QA pass: End moved to the messages behind the invitations).
  if (document.querySelector("#main > section:not([hidden])")) return;
  const onMessage = focusedMessage() !== null;
  let action = KEYS[event.key];
  if (onMessage && event.key === "ArrowDown") action = KEYS.j;
  else if (onMessage && event.key === "ArrowUp") action = KEYS.k;
  else if (onMessage && event.key === "Enter" && event.target === focusedMessage()) action = reply;
  if (!action) return;
  event.preventDefault(); // "/" typed nowhere
  action();
}

// Esc in the search field leaves it, as in Zulip.
export function onSearchKey(event) {
  if (event.key === "Escape") event.target.blur();
}
