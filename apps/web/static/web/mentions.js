// Suggestions while writing "@name" in the message box, as Zulip's typeahead: the people whose name
// (a word of it) or email starts with what follows "@", then the organization's user groups, then
// the wildcard mentions (in a channel: all, everyone, channel, topic; to people: all, everyone). ↑
// and ↓ move, Enter or Tab writes the mention (`@**Full Name**`, with `|id` when two people have
// that name; `@*group*`; `@**all**`), Esc closes; a click too.

import { el } from "./render.js";
import { $, state } from "./state.js";

const MOST = 8;
let found = []; // what is suggested: {key, label, detail, mention}
let current = 0; // the one Enter writes

// The "@text" just before the cursor: where its "@" is, and the text.
function typed(box) {
  const before = box.value.slice(0, box.selectionStart);
  const match = /(^|\s)@([^\s@*`]*)$/.exec(before);
  return match ? { at: match.index + match[1].length, text: match[2].toLowerCase() } : null;
}

// What is typed after @ holds no space: a word of the name or the email starting with it.
function matches(person, text) {
  const words = [...person.full_name.toLowerCase().split(/\s+/), person.email.toLowerCase()];
  return words.some((word) => word.startsWith(text));
}

const CHANNEL_WILDCARDS = [
  ["all", "Notify channel"],
  ["everyone", "Notify channel"],
  ["channel", "Notify channel"],
  ["topic", "Notify topic"],
];
const DM_WILDCARDS = [
  ["all", "Notify recipients"],
  ["everyone", "Notify recipients"],
];

function personItem(person) {
  const shared = [...state.users.values()].filter((other) => other.full_name === person.full_name).length > 1;
  const mention = `@**${person.full_name}${shared ? `|${person.user_id}` : ""}** `;
  return { key: `user-${person.user_id}`, label: person.full_name, detail: person.email, mention };
}

export function suggestMentions() {
  const box = $("#compose-content");
  const where = typed(box);
  if (!where) {
    found = [];
  } else {
    const text = where.text;
    const people = [...state.users.values()]
      .filter((person) => person.is_active !== false && person.user_id !== state.ownUserId && matches(person, text))
      .sort((a, b) => a.full_name.localeCompare(b.full_name))
      .slice(0, MOST) // before personItem, which reads every person: "@" alone matches everyone
      .map(personItem);
    const groups = [...state.userGroups.values()]
      .filter((group) => group.name.toLowerCase().split(/\s+/).some((word) => word.startsWith(text)))
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((group) => ({ key: `group-${group.id}`, label: group.name, detail: "user group", mention: `@*${group.name}* ` }));
    const wildcards = ($("#compose-channel").value === "dm" ? DM_WILDCARDS : CHANNEL_WILDCARDS)
      .filter(([name]) => name.startsWith(text))
      .map(([name, detail]) => ({ key: `wildcard-${name}`, label: name, detail, mention: `@**${name}** ` }));
    found = [...people, ...groups, ...wildcards].slice(0, MOST);
  }
  current = 0;
  show();
}

function show() {
  const list = $("#mentions");
  const box = $("#compose-content");
  list.replaceChildren(
    ...found.map((item, index) =>
      el(
        "li",
        {
          id: `mention-${item.key}`,
          role: "option",
          "aria-selected": index === current ? "true" : "false",
          // Chosen on mousedown: the box keeps the focus (a click would blur it first).
          onmousedown: (event) => {
            event.preventDefault();
            write(item);
          },
        },
        item.label,
        el("span", { class: "mention-email" }, ` ${item.detail}`),
      ),
    ),
  );
  list.hidden = found.length === 0;
  box.setAttribute("aria-expanded", found.length ? "true" : "false");
  if (found.length) box.setAttribute("aria-activedescendant", `mention-${found[current].key}`);
  else box.removeAttribute("aria-activedescendant");
}

export function hideMentions() {
  found = [];
  show();
}

function write(item) {
  const box = $("#compose-content");
  const where = typed(box);
  if (!where) return hideMentions();
  const mention = item.mention;
  const after = box.value.slice(box.selectionStart);
  box.value = box.value.slice(0, where.at) + mention + after;
  const caret = where.at + mention.length;
  box.setSelectionRange(caret, caret);
  box.dispatchEvent(new Event("input")); // kept as a draft; the suggestions close
}

// Keys while suggestions show; registered before the box's own (Enter sends otherwise).
export function onMentionKey(event) {
  if (!found.length || event.isComposing) return;
  if (!typed($("#compose-content"))) return hideMentions(); // the box was sent or emptied meanwhile
  if (event.key === "ArrowDown" || event.key === "ArrowUp") {
    current = (current + (event.key === "ArrowDown" ? 1 : found.length - 1)) % found.length;
    show();
  } else if ((event.key === "Enter" && !event.shiftKey) || event.key === "Tab") {
    write(found[current]);
  } else if (event.key === "Escape") {
    hideMentions();
  } else return;
  event.preventDefault();
  event.stopImmediatePropagation();
}
