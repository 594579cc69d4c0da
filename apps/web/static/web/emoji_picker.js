// The emoji picker: any emoji as a reaction (a message's "Add a reaction" button), as in Zulip's
// apps. The organization's custom emoji first, then the server's Unicode emoji (GET
// /emoji/emoji_api.json, Zulip's server_emoji_data_url: every emoji's names, fetched once); without
// a search, the common ones; a search finds any by name (those whose name starts so first). Enter
// in the search picks the first found; Esc, or a click elsewhere, closes it.

import { el } from "./render.js";
import { $, state } from "./state.js";

const COMMON = [
  "+1", "-1", "tada", "heart", "joy", "smile", "laughing", "grinning", "wink", "thinking", "eyes", "fire",
  "rocket", "white_check_mark", "x", "clap", "pray", "wave", "100", "ok_hand", "muscle", "sob", "cry",
  "heart_eyes", "sunglasses", "confused", "scream", "rage", "star", "sparkles", "bulb", "coffee", "pizza",
  "beer", "gift", "warning", "question", "hourglass", "calendar", "lock",
];
const SHOWN_AT_MOST = 120;

let unicode = null; // [{code, names}] once loaded
let loading = null;
let opener = null; // the button that opened the picker
let onPick = null;

function loadEmoji() {
  loading ??= fetch("/emoji/emoji_api.json", { credentials: "same-origin" })
    .then((response) => (response.ok ? response.json() : Promise.reject(new Error(`HTTP ${response.status}`))))
    .then((body) => {
      unicode = Object.entries(body.code_to_names).map(([code, names]) => ({ code, names }));
    })
    .catch((error) => {
      loading = null; // tried again at the next opening
      throw error;
    });
  return loading;
}

const characters = (code) => String.fromCodePoint(...code.split("-").map((hex) => parseInt(hex, 16)));

// What the picker offers for `query`: {name, label, picture | text}, custom emoji first.
function choices(query) {
  const wanted = query.trim().toLowerCase().replace(/^:|:$/g, "").replace(/\s+/g, "_");
  const custom = Object.values(state.realmEmoji)
    .filter((emoji) => !emoji.deactivated)
    .map(({ name, id, source_url }) => ({ name, names: [name], picture: source_url, code: String(id), type: "realm_emoji" }));
  const all = [
    ...custom,
    ...(unicode || []).map(({ code, names }) => ({ name: names[0], names, text: characters(code), code, type: "unicode_emoji" })),
  ];
  if (!wanted) {
    const byName = new Map(all.flatMap((emoji) => emoji.names.map((name) => [name, emoji])));
    const common = COMMON.map((name) => byName.get(name)).filter(Boolean);
    return [...custom, ...common.filter((emoji) => !custom.includes(emoji))];
  }
  const starting = all.filter((emoji) => emoji.names.some((name) => name.startsWith(wanted)));
  const containing = all.filter((emoji) => !starting.includes(emoji) && emoji.names.some((name) => name.includes(wanted)));
  return [...starting, ...containing];
}

function render() {
  const found = choices($("#emoji-search").value);
  const list = $("#emoji-choices");
  list.replaceChildren(
    ...found.slice(0, SHOWN_AT_MOST).map((emoji) =>
      el(
        "button",
        {
          type: "button",
          class: "emoji-choice",
          title: `:${emoji.name}:`,
          "aria-label": emoji.name.replaceAll("_", " "),
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

// Opens the picker below (or above) `button`; `pick({name, code, type})` is called with the emoji
// chosen (Zulip's emoji_name, emoji_code and reaction_type).
export function openEmojiPicker(button, pick) {
  opener = button;
  onPick = pick;
  const picker = $("#emoji-picker");
  picker.hidden = false;
  $("#emoji-search").value = "";
  place(picker, button);
  render();
  $("#emoji-search").focus();
  if (unicode === null) {
    loadEmoji()
      .catch((error) => console.warn("emoji:", error.message))
      .finally(() => !picker.hidden && render());
  }
}

function place(picker, button) {
  const box = button.getBoundingClientRect();
  const { width, height } = picker.getBoundingClientRect();
  const below = box.bottom + 4 + height <= window.innerHeight;
  picker.style.top = `${Math.max(4, below ? box.bottom + 4 : box.top - 4 - height)}px`;
  picker.style.left = `${Math.max(4, Math.min(box.left, window.innerWidth - width - 4))}px`;
}

export function closeEmojiPicker({ refocus = true } = {}) {
  const picker = $("#emoji-picker");
  if (picker.hidden) return;
  picker.hidden = true;
  if (refocus && opener?.isConnected) opener.focus();
  opener = onPick = null;
}

function choose(button) {
  const pick = onPick;
  closeEmojiPicker();
  pick?.({ ...button.dataset });
}

export const emojiPickerOpenedBy = (button) => !$("#emoji-picker").hidden && opener === button;

export function setUpEmojiPicker() {
  const picker = $("#emoji-picker");
  $("#emoji-search").addEventListener("input", render);
  $("#emoji-search").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.isComposing) {
      event.preventDefault();
      const first = $("#emoji-choices button");
      if (first) choose(first);
    }
  });
  $("#emoji-choices").addEventListener("click", (event) => {
    const button = event.target.closest("button.emoji-choice");
    if (button) choose(button);
  });
  picker.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      event.preventDefault();
      event.stopPropagation();
      closeEmojiPicker();
    }
  });
  document.addEventListener("pointerdown", (event) => {
    if (!picker.hidden && !picker.contains(event.target) && !opener?.contains(event.target)) {
      closeEmojiPicker({ refocus: false });
    }
  });
}
