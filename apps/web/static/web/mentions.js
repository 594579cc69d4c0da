// Suggestions while writing "@name" in the message box, as Zulip's typeahead: the people whose name
// (a word of it) or email starts with what follows "@", then the organization's user groups, then
// the wildcard mentions (in a channel: all, everyone, channel, topic; to people: all, everyone). ↑
// and ↓ move, Enter or Tab writes the mention (`@**Full Name**`, with `|id` when two people have
// that name; `@*group*`; `@**all**`), Esc closes; a click too. The people field of a direct message
// suggests alike, after its last comma (the newcomer QA pass: names had to be typed out whole), and
// the search box people after `sender:` (`from:`, `dm:`, `dm-including:`) and channels after `channel:`.

import { el } from "./render.js";
import { $, state } from "./state.js";

const MOST = 8;

// Suggestions for one field: `typed(box)` is what is being written ({at, text}: where it starts,
// lowercased) or null; `suggestions(text)` the items ({key, label, detail, insert}) for it.
function typeahead({ boxId, listId, typed, suggestions }) {
  let found = [];
  let current = 0; // the one Enter writes

  function show() {
    const list = $(listId);
    const box = $(boxId);
    const optionId = (item) => `${list.id}-${item.key}`;
    list.replaceChildren(
      ...found.map((item, index) =>
        el(
          "li",
          {
            id: optionId(item),
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
    if (found.length) box.setAttribute("aria-activedescendant", optionId(found[current]));
    else box.removeAttribute("aria-activedescendant");
  }

  function hide() {
    found = [];
    show();
  }

  function write(item) {
    const box = $(boxId);
    const where = typed(box);
    if (!where) return hide();
    const after = box.value.slice(box.selectionStart);
    box.value = box.value.slice(0, where.at) + item.insert + after;
    const caret = where.at + item.insert.length;
    box.setSelectionRange(caret, caret);
    box.dispatchEvent(new Event("input")); // kept as a draft; the suggestions close
  }

  function suggest() {
    const where = typed($(boxId));
    found = where ? suggestions(where.text, where).slice(0, MOST) : [];
    current = 0;
    show();
  }

  // Keys while suggestions show; registered before the field's own (Enter sends otherwise).
  function onKey(event) {
    if (!found.length || event.isComposing) return;
    if (!typed($(boxId))) return hide(); // the box was sent or emptied meanwhile
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      current = (current + (event.key === "ArrowDown" ? 1 : found.length - 1)) % found.length;
      show();
    } else if ((event.key === "Enter" && !event.shiftKey) || event.key === "Tab") {
      write(found[current]);
    } else if (event.key === "Escape") {
      hide();
    } else return;
    event.preventDefault();
    event.stopImmediatePropagation();
  }

  return { suggest, hide, onKey };
}

// The "@text" just before the cursor: where its "@" is, and the text.
function mentionTyped(box) {
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
  const insert = `@**${person.full_name}${shared ? `|${person.user_id}` : ""}** `;
  return { key: `user-${person.user_id}`, label: person.full_name, detail: person.email, insert };
}

function mentionSuggestions(text) {
  const people = [...state.users.values()]
    .filter((person) => person.is_active !== false && person.user_id !== state.ownUserId && matches(person, text))
    .sort((a, b) => a.full_name.localeCompare(b.full_name))
    .slice(0, MOST) // before personItem, which reads every person: "@" alone matches everyone
    .map(personItem);
  const groups = [...state.userGroups.values()]
    .filter((group) => group.name.toLowerCase().split(/\s+/).some((word) => word.startsWith(text)))
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((group) => ({ key: `group-${group.id}`, label: group.name, detail: "user group", insert: `@*${group.name}* ` }));
  const wildcards = ($("#compose-channel").value === "dm" ? DM_WILDCARDS : CHANNEL_WILDCARDS)
    .filter(([name]) => name.startsWith(text))
    .map(([name, detail]) => ({ key: `wildcard-${name}`, label: name, detail, insert: `@**${name}** ` }));
  return [...people, ...groups, ...wildcards];
}

const mentions = typeahead({ boxId: "#compose-content", listId: "#mentions", typed: mentionTyped, suggestions: mentionSuggestions });
export const { suggest: suggestMentions, hide: hideMentions, onKey: onMentionKey } = mentions;

// The person being named after the people field's last comma (nothing typed yet: no suggestion).
function personTyped(box) {
  const match = /(^|,)\s*([^,]*)$/.exec(box.value.slice(0, box.selectionStart));
  const text = match[2].trim().toLowerCase();
  return text ? { at: match.index + match[0].length - match[2].length, text } : null;
}

// Active people (not oneself, not already named) whose name, a word of it or email starts with it.
function peopleSuggestions(text) {
  const named = new Set($("#compose-people").value.split(",").map((part) => part.trim().toLowerCase()));
  return [...state.users.values()]
    .filter((person) => person.is_active !== false && person.user_id !== state.ownUserId)
    .filter((person) => !named.has(person.email.toLowerCase()) && !named.has(person.full_name.toLowerCase()))
    .filter((person) => person.full_name.toLowerCase().startsWith(text) || matches(person, text))
    .sort((a, b) => a.full_name.localeCompare(b.full_name))
    .slice(0, MOST)
    .map((person) => ({ key: `user-${person.user_id}`, label: person.full_name, detail: person.email, insert: `${person.email}, ` }));
}

const people = typeahead({ boxId: "#compose-people", listId: "#people-suggestions", typed: personTyped, suggestions: peopleSuggestions });
export const { suggest: suggestPeople, hide: hidePeople, onKey: onPeopleKey } = people;

// The operand being written in the search box after an operator naming people or a channel: where
// it starts (a dm's after its last comma; an opening quote included) and what it is.
const SEARCH_OPERANDS = {
  ...Object.fromEntries(["sender", "from", "dm", "pm-with", "dm-including", "group-pm-with"].map((op) => [op, "person"])),
  channel: "channel",
  stream: "channel",
};

function operandTyped(box) {
  const before = box.value.slice(0, box.selectionStart);
  const match = /(^|\s)-?([a-z-]+):("[^"]*|[^\s"]*)$/i.exec(before);
  const kind = match && SEARCH_OPERANDS[match[2].toLowerCase()];
  if (!kind) return null;
  let operand = match[3];
  if (kind === "person") operand = operand.slice(operand.lastIndexOf(",") + 1);
  return { at: before.length - operand.length, text: operand.replace(/^"/, "").toLowerCase(), kind };
}

function operandSuggestions(text, { kind }) {
  if (kind === "channel") {
    return [...state.streams.entries()]
      .filter(([, channel]) => {
        const name = channel.name.toLowerCase();
        return name.startsWith(text) || name.split(/\s+/).some((word) => word.startsWith(text)); // "design t" too
      })
      .sort(([, a], [, b]) => Number(a.is_archived) - Number(b.is_archived) || a.name.localeCompare(b.name))
      .map(([id, channel]) => ({
        key: `channel-${id}`,
        label: channel.name,
        detail: channel.is_archived ? "archived channel" : "channel",
        insert: `${/[\s"]/.test(channel.name) ? `"${channel.name.replaceAll('"', "")}"` : channel.name} `,
      }));
  }
  // "me" first, as in Zulip's (the verify QA pass: `sender:me` and Enter wrote a Mel's email).
  const me = "me".startsWith(text) ? [{ key: "me", label: "me", detail: state.users.get(state.ownUserId)?.full_name ?? "", insert: "me " }] : [];
  const people = [...state.users.values()]
    .filter((person) => person.is_active !== false && (matches(person, text) || person.full_name.toLowerCase().startsWith(text)))
    .sort((a, b) => a.full_name.localeCompare(b.full_name))
    .slice(0, MOST)
    .map((person) => ({ key: `user-${person.user_id}`, label: person.full_name, detail: person.email, insert: `${person.email} ` }));
  return [...me, ...people];
}

const operands = typeahead({ boxId: "#search", listId: "#search-suggestions", typed: operandTyped, suggestions: operandSuggestions });
export const { suggest: suggestOperands, hide: hideOperands, onKey: onOperandKey } = operands;
