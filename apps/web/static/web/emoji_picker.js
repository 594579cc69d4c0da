// The emoji picker: any emoji as a reaction (a message's "Add a reaction" button), as in Zulip's
// apps. The organization's custom emoji first, then the server's Unicode emoji (GET
// /emoji/emoji_api.json, Zulip's server_emoji_data_url: every emoji's names, fetched once); without
// a search, the common ones; a search finds any by name: a name that is the search first, then
// names that start with it (shortest first), then names with a word that starts with it, then the
// rest. Enter in the search picks the first found; the arrow keys move through the emoji; Esc, a
// click elsewhere, the focus leaving it or the messages' list scrolling close it.

import { el, emojiCharacters } from "./render.js";
import { $, state } from "./state.js";

// Zulip's names for the common emoji (those its apps react with), shown before any search.
const COMMON = [
  "+1", "-1", "tada", "heart", "joy", "smile", "laughing", "grinning", "wink", "thinking", "eyes", "fire",
  "rocket", "check", "x", "clap", "pray", "wave", "100", "ok", "muscle", "sob", "cry",
  "heart_eyes", "sunglasses", "confused", "scream", "rage", "star", "sparkles", "bulb", "coffee", "pizza",
  "beer", "gift", "warning", "question", "hourglass", "calendar", "locked",
];
const SHOWN_AT_MOST = 120;
const GAP = 4; // px between the picker and its button, or the window's edge

let unicode = null; // [{code, names, text}] once loaded
let loading = null;
let opener = null; // the button that opened the picker
let openerMessageId = null; // its message (the button is drawn again when the message is)
let onPick = null;

function loadEmoji() {
  loading ??= fetch("/emoji/emoji_api.json", { credentials: "same-origin" })
    .then((response) => (response.ok ? response.json() : Promise.reject(new Error(`HTTP ${response.status}`))))
    .then((body) => {
      // Their characters once, not at each key typed in the search.
      unicode = Object.entries(body.code_to_names).flatMap(([code, names]) => {
        try {
          return [{ code, names, text: emojiCharacters(code) }];
        } catch {
          return []; // not code points: not offered
        }
      });
    })
    .catch((error) => {
      loading = null; // tried again at the next opening
      throw error;
    });
  return loading;
}

// How well a name answers the search (lower is better), or null: the name itself, a name starting
// with it (the shorter, the better), a word of the name starting with it, the search inside it.
function rank(name, wanted) {
  if (name === wanted) return 0;
  if (name.startsWith(wanted)) return 1 + name.length / 1000;
  if (name.includes(`_${wanted}`)) return 2 + name.length / 1000;
  if (name.includes(wanted)) return 3 + name.length / 1000;
  return null;
}

// What the picker offers for `query`: {name (the one found, or Zulip's common one), code, type,
// picture | text}, custom emoji first among equals.
function choices(query) {
  const wanted = query.trim().toLowerCase().replace(/^:|:$/g, "").replace(/\s+/g, "_");
  const custom = Object.values(state.realmEmoji)
    .filter((emoji) => !emoji.deactivated)
    .map(({ name, id, source_url }) => ({ names: [name], picture: source_url, code: String(id), type: "realm_emoji" }));
  const all = [
    ...custom,
    ...(unicode || []).map(({ code, names, text }) => ({ names, text, code, type: "unicode_emoji" })),
  ];
  if (!wanted) {
    const byName = new Map(all.flatMap((emoji) => emoji.names.map((name) => [name, emoji])).reverse()); // the first wins
    const unicodeOne = (name) => byName.has(name) && !custom.includes(byName.get(name));
    const common = COMMON.filter(unicodeOne).map((name) => ({ ...byName.get(name), name }));
    return [...custom.map((emoji) => ({ ...emoji, name: emoji.names[0] })), ...common];
  }
  const found = [];
  for (const emoji of all) {
    let best = null;
    for (const name of emoji.names) {
      const score = rank(name, wanted);
      if (score !== null && (best === null || score < best.score)) best = { score, name };
    }
    if (best) found.push({ ...emoji, name: best.name, score: best.score });
  }
  return found.sort((a, b) => a.score - b.score); // stable: custom emoji first among equals
}

function render() {
  const found = choices($("#emoji-search").value);
  $("#emoji-choices").replaceChildren(
    ...found.slice(0, SHOWN_AT_MOST).map((emoji, index) =>
      el(
        "button",
        {
          type: "button",
          class: "emoji-choice",
          title: `:${emoji.name}:`,
          "aria-label": emoji.name.replaceAll("_", " "),
          tabindex: index === 0 ? "0" : "-1", // one Tab stop: the arrow keys move inside
          dataset: { name: emoji.name, code: emoji.code, type: emoji.type },
        },
        emoji.picture ? el("img", { class: "emoji", src: emoji.picture, alt: "" }) : emoji.text,
      ),
    ),
  );
  let note = "";
  if (unicode === null) note = loading ? "Loading…" : "The emoji could not be loaded: close and try again.";
  else if (!found.length) note = "No emoji has that name.";
  else if (found.length > SHOWN_AT_MOST) note = `${found.length - SHOWN_AT_MOST} more: type more of the name.`;
  $("#emoji-note").textContent = note;
}

// Opens the picker beside `button`; `pick({name, code, type})` is called with the emoji chosen
// (Zulip's emoji_name, emoji_code and reaction_type).
export function openEmojiPicker(button, pick) {
  if (opener) closeEmojiPicker({ refocus: false });
  opener = button;
  openerMessageId = button.closest("li.message")?.dataset.messageId ?? null;
  onPick = pick;
  const picker = $("#emoji-picker");
  $("#emoji-search").value = "";
  render();
  picker.hidden = false;
  place();
  // Its message's buttons stay shown while it is open (on a touch screen they show only while the
  // message has the focus, and the focus goes to the search).
  button.closest("li.message")?.classList.add("picking");
  button.setAttribute("aria-expanded", "true");
  $("#emoji-search").focus();
  if (unicode === null) {
    loadEmoji()
      .catch((error) => console.warn("emoji:", error.message))
      .finally(() => {
        if (picker.hidden) return;
        render();
        if (opener?.isConnected) place(); // placed again at its size once filled (it was "Loading…")
      });
  }
}

// Below its button if it fits there, else above (anchored there as a search shrinks it), else on
// the side with more room, never taller than that room: always on screen.
function place() {
  const picker = $("#emoji-picker");
  const box = opener.getBoundingClientRect();
  picker.style.maxHeight = "";
  const { width, height } = picker.getBoundingClientRect();
  const roomBelow = window.innerHeight - box.bottom - 2 * GAP;
  const roomAbove = box.top - 2 * GAP;
  const below = height <= roomBelow || roomBelow >= roomAbove;
  picker.style.maxHeight = `${Math.max(80, Math.min(height, below ? roomBelow : roomAbove))}px`;
  picker.style.top = below ? `${box.bottom + GAP}px` : "auto";
  picker.style.bottom = below ? "auto" : `${window.innerHeight - box.top + GAP}px`;
  picker.style.left = `${Math.max(GAP, Math.min(box.left, window.innerWidth - width - GAP))}px`;
}

export function closeEmojiPicker({ refocus = true } = {}) {
  const picker = $("#emoji-picker");
  if (picker.hidden) return;
  picker.hidden = true;
  // The button, or the one drawn in its place if its message was drawn again meanwhile.
  const button = opener?.isConnected
    ? opener
    : document.querySelector(`li.message[data-message-id="${openerMessageId}"] button.pick-reaction`);
  button?.closest("li.message")?.classList.remove("picking");
  button?.setAttribute("aria-expanded", "false");
  if (refocus) button?.focus();
  opener = onPick = openerMessageId = null;
}

function choose(button) {
  const pick = onPick;
  closeEmojiPicker();
  pick?.({ ...button.dataset });
}

export const emojiPickerOpenedBy = (button) => !$("#emoji-picker").hidden && opener === button;

// The arrow keys in the grid: a step left or right, a row up or down (Home and End: first, last).
function moveInGrid(event) {
  const buttons = [...$("#emoji-choices").querySelectorAll("button")];
  const at = buttons.indexOf(document.activeElement);
  if (at < 0) return;
  const columns = buttons.filter((button) => button.offsetTop === buttons[0].offsetTop).length || 1;
  const step = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -columns, ArrowDown: columns }[event.key];
  let to = step === undefined ? null : at + step;
  if (event.key === "Home") to = 0;
  if (event.key === "End") to = buttons.length - 1;
  if (to === null || to < 0 || to >= buttons.length) return;
  event.preventDefault();
  buttons[at].tabIndex = -1;
  buttons[to].tabIndex = 0;
  buttons[to].focus();
}

export function setUpEmojiPicker() {
  const picker = $("#emoji-picker");
  $("#emoji-search").addEventListener("input", () => {
    render();
    place();
  });
  $("#emoji-search").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.isComposing) {
      event.preventDefault();
      const first = $("#emoji-choices button");
      if (first) choose(first);
    } else if (event.key === "ArrowDown") {
      event.preventDefault();
      $("#emoji-choices button")?.focus();
    }
  });
  $("#emoji-choices").addEventListener("click", (event) => {
    const button = event.target.closest("button.emoji-choice");
    if (button) choose(button);
  });
  $("#emoji-choices").addEventListener("keydown", moveInGrid);
  picker.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      closeEmojiPicker();
    }
  });
  // The focus gone elsewhere (Tab past its last stop), or a click elsewhere: closed, the focus left
  // where it went. The messages scrolling (by hand, or as new ones arrive) would leave it behind.
  picker.addEventListener("focusout", (event) => {
    const to = event.relatedTarget;
    if (to && !picker.contains(to) && to !== opener) closeEmojiPicker({ refocus: false }); // (its button toggles it)
  });
  document.addEventListener("pointerdown", (event) => {
    if (!picker.hidden && !picker.contains(event.target) && !opener?.contains(event.target)) {
      closeEmojiPicker({ refocus: false });
    }
  });
  $("#messages").addEventListener("scroll", () => closeEmojiPicker({ refocus: false }), { passive: true });
  // The page itself scrolled or resized (one column, where a phone's keyboard opening does both):
  // placed again beside its button.
  const placeAgain = () => !picker.hidden && opener?.isConnected && place();
  window.addEventListener("scroll", placeAgain, { passive: true });
  window.addEventListener("resize", placeAgain);
}
