// Building the page's elements. Every text goes in as text (textContent, attributes): only a
// message's `content`, HTML the server rendered and sanitized, is set as HTML.

import { widgetElement } from "./widgets.js";

export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "dataset") Object.assign(node.dataset, value);
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// A name (a person's, a channel's, a topic) inside other text, isolated: right-to-left override
// characters in it do not reorder the text around it (the hostile web app QA pass).
export const bdi = (text) => el("bdi", {}, text);

// Names listed with commas, each isolated.
export const listed = (names) => names.flatMap((name, index) => (index ? [", ", bdi(name)] : [bdi(name)]));

// The reactions the page offers (Zulip's names; the server knows every Unicode emoji's names).
export const QUICK_REACTIONS = [
  { name: "+1", code: "1f44d", label: "thumbs up" },
  { name: "tada", code: "1f389", label: "party popper" },
  { name: "heart", code: "2764", label: "heart" },
  { name: "smile", code: "1f642", label: "smile" },
];

// Zulip's own emoji (a reaction of type zulip_extra_emoji), where Zulip's apps find it on the server.
const ZULIP_EMOJI_URL = "/static/generated/emoji/images/emoji/unicode/zulip.png";

// A reaction's emoji: a custom one (its code is its id) or Zulip's as its picture, any other as
// its characters; its name when neither can be shown.
function emojiShown(reaction, ctx) {
  const url = { realm_emoji: ctx.emojiUrl(reaction.emoji_code), zulip_extra_emoji: ZULIP_EMOJI_URL }[reaction.reaction_type];
  if (url) return el("img", { class: "emoji", src: url, alt: `:${reaction.emoji_name}:` });
  return emojiText(reaction);
}

// An emoji's characters from Zulip's emoji_code ("1f44d", "1f468-200d-1f4bb"); a RangeError for a
// code that names no code points.
export const emojiCharacters = (code) => String.fromCodePoint(...code.split("-").map((hex) => parseInt(hex, 16)));

function emojiText(reaction) {
  if (reaction.reaction_type !== "unicode_emoji") return `:${reaction.emoji_name}:`;
  try {
    return emojiCharacters(reaction.emoji_code);
  } catch {
    return `:${reaction.emoji_name}:`;
  }
}

// The server marks emoji in a message as Zulip's does, `<span class="emoji emoji-1f604" ...>:smile:</span>`
// (Zulip's web app draws them from a sprite sheet): shown here as the characters of their code.
export function showEmoji(content) {
  for (const span of content.querySelectorAll("span.emoji")) {
    const code = [...span.classList].find((name) => /^emoji-[0-9a-f]+(-[0-9a-f]+)*$/.test(name));
    if (!code) continue;
    try {
      span.textContent = emojiCharacters(code.slice(6));
    } catch {
      // not a code point: the name stays
    }
  }
}

// A spoiler (Zulip's markup: a header, then content hidden until opened) as a <details>, whose
// summary is the header ("Spoiler" when it has none).
function showSpoilers(content) {
  for (const block of content.querySelectorAll("div.spoiler-block")) {
    const header = block.querySelector(":scope > .spoiler-header");
    const hidden = block.querySelector(":scope > .spoiler-content");
    const summary = el("summary", {}, ...(header?.textContent.trim() ? [...header.childNodes] : ["Spoiler"]));
    const details = el("details", { class: "spoiler" }, summary, ...(hidden ? [...hidden.childNodes] : []));
    block.replaceWith(details);
  }
}

// An uploaded picture's preview (Zulip's message_inline_image) at most PREVIEW_HEIGHT high and
// PREVIEW_WIDTH wide, never enlarged, and given that size before it loads (from the dimensions the
// server wrote): messages below it do not move when it arrives, nor is a message counted as seen
// while a picture still to load would push it off the screen.
const PREVIEW_HEIGHT = 150;
const PREVIEW_WIDTH = 300;

function showImagePreviews(content) {
  for (const img of content.querySelectorAll(".message_inline_image img[data-original-dimensions]")) {
    const [width, height] = img.dataset.originalDimensions.split("x").map(Number);
    if (!(width > 0 && height > 0)) continue;
    const scale = Math.min(1, PREVIEW_HEIGHT / height, PREVIEW_WIDTH / width);
    img.width = Math.max(1, Math.round(width * scale));
    img.height = Math.max(1, Math.round(height * scale));
  }
}

// Links: a link to a conversation here (Zulip's `#narrow/...`, on this server) opens it in the
// page; any other (a website, a file) in a new tab, the conversation staying open (the web app QA
// pass: a link replaced the chat).
export function showLinks(content) {
  for (const link of content.querySelectorAll("a[href]")) {
    const url = new URL(link.getAttribute("href"), window.location.href);
    const here = url.origin === window.location.origin && url.pathname === "/" && url.hash.startsWith("#");
    if (!here) Object.assign(link, { target: "_blank", rel: "noopener noreferrer" });
  }
}

// A time written in a message (`<time:...>`, sent as `<time datetime="...">` with the time as
// written): shown in the reader's own time zone, as Zulip's web app does.
const localTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "short" });
function showTimes(content) {
  for (const time of content.querySelectorAll("time[datetime]")) {
    const date = new Date(time.getAttribute("datetime"));
    if (!Number.isNaN(date.getTime())) Object.assign(time, { textContent: localTimeFormat.format(date), title: time.textContent });
  }
}

// A mention shows the person's name as it is now (renamed since the message: the new name), as
// Zulip's web app does (the hostile web app QA pass: the old one stayed); silent ones without "@".
// Not one a search highlighted inside (its highlight would go).
function showMentionNames(content, ctx) {
  for (const mention of content.querySelectorAll(".user-mention[data-user-id]")) {
    const id = Number(mention.dataset.userId);
    if (!id || mention.querySelector(".highlight")) continue; // "*": a wildcard
    const name = ctx.userName(id, "");
    if (name) mention.textContent = `${mention.classList.contains("silent") ? "" : "@"}${name}`;
  }
}

// A /me message ("/me waves"): its sender's name in place of the command, as Zulip shows it.
function showMeMessage(content, message) {
  const first = content.querySelector("p")?.firstChild;
  if (message.is_me_message && first?.nodeType === Node.TEXT_NODE && first.data.startsWith("/me")) {
    first.data = `${message.sender_full_name}${first.data.slice(3)}`;
    content.classList.add("me-message");
  }
}

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

function sentAt(timestamp) {
  const date = new Date(timestamp * 1000);
  const today = new Date().toDateString() === date.toDateString();
  return el(
    "time",
    { datetime: date.toISOString(), title: dateFormat.format(date) },
    today ? timeFormat.format(date) : dateFormat.format(date),
  );
}

// Where a message was sent, for views that mix conversations (a link to that conversation).
function recipientLine(message, ctx) {
  if (message.type === "stream") {
    const name = ctx.streamName(message.stream_id) || message.display_recipient;
    return el(
      "a",
      { class: "recipient", href: ctx.hashFor({ kind: "topic", streamId: message.stream_id, topic: message.subject }) },
      "#",
      bdi(name),
      " › ",
      bdi(message.subject),
    );
  }
  const others = message.display_recipient.filter((person) => person.id !== ctx.ownUserId);
  // Their names as the page knows them now (a name changed since the message came shows new).
  const names = others.length ? listed(others.map((person) => ctx.userName(person.id, person.full_name))) : "yourself";
  const href = ctx.hashFor({ kind: "dm", userIds: others.length ? others.map((person) => person.id) : [ctx.ownUserId] });
  return el("a", { class: "recipient", href }, "Direct message with ", names);
}

// Reactions grouped by emoji: one button each, pressed when the user reacted with it.
function reactionButtons(message, ctx) {
  const groups = new Map();
  for (const reaction of message.reactions || []) {
    const key = `${reaction.reaction_type}:${reaction.emoji_code}`;
    if (!groups.has(key)) groups.set(key, { reaction, userIds: [] });
    groups.get(key).userIds.push(reaction.user_id);
  }
  const buttons = [...groups.values()].map(({ reaction, userIds }) => {
    const mine = userIds.includes(ctx.ownUserId);
    const who = userIds.map((id) => ctx.userName(id)).join(", ");
    // Said as words, the page's user as "you" (the picker QA pass: "thumbs_up: 1 (Olivia Owner)").
    const spoken = userIds.map((id) => (id === ctx.ownUserId ? "you" : ctx.userName(id))).join(", ");
    return el(
      "button",
      {
        type: "button",
        class: "reaction",
        "aria-pressed": mine ? "true" : "false",
        "aria-label": `${reaction.emoji_name.replaceAll("_", " ")}: ${userIds.length} (${spoken})`,
        title: who,
        dataset: {
          action: "toggle-reaction",
          emojiName: reaction.emoji_name,
          emojiCode: reaction.emoji_code,
          reactionType: reaction.reaction_type,
        },
      },
      el("span", { "aria-hidden": "true" }, emojiShown(reaction, ctx)),
      ` ${userIds.length}`,
    );
  });
  return el("div", { class: "reactions" }, buttons);
}

export const readToggleLabel = (message) => ((message.flags || []).includes("read") ? "Mark unread" : "Mark read");

function actionButtons(message, ctx) {
  const starred = (message.flags || []).includes("starred");
  const own = message.sender_id === ctx.ownUserId;
  const react = QUICK_REACTIONS.map((emoji) =>
    el(
      "button",
      {
        type: "button",
        class: "quick-reaction",
        "aria-label": `React with ${emoji.label}`,
        title: `React with :${emoji.name}:`,
        dataset: { action: "toggle-reaction", emojiName: emoji.name, emojiCode: emoji.code, reactionType: "unicode_emoji" },
      },
      emojiText({ reaction_type: "unicode_emoji", emoji_code: emoji.code, emoji_name: emoji.name }),
    ),
  );
  return el(
    "div",
    { class: "message-actions" },
    el(
      "button",
      {
        type: "button",
        class: "star",
        "aria-pressed": starred ? "true" : "false",
        "aria-label": starred ? "Unstar" : "Star",
        dataset: { action: "toggle-star" },
      },
      starred ? "★" : "☆",
    ),
    react,
    el(
      "button",
      {
        type: "button",
        class: "pick-reaction",
        "aria-label": "Add a reaction",
        "aria-haspopup": "dialog",
        title: "Add a reaction",
        dataset: { action: "pick-reaction" },
      },
      "☺+",
    ),
    el("button", { type: "button", class: "quote", dataset: { action: "quote" } }, "Quote"),
    el("button", { type: "button", class: "read-toggle", dataset: { action: "toggle-read" } }, readToggleLabel(message)),
    // A poll's or to-do list's text cannot be edited, only its topic: nothing to edit in a direct message.
    own && !(message.type === "private" && message.submessages?.length) &&
      el("button", { type: "button", class: "edit", dataset: { action: "edit" } }, "Edit"),
    (own || ctx.isAdmin) && el("button", { type: "button", class: "delete", dataset: { action: "delete" } }, "Delete"),
  );
}

// A person's picture beside their messages (a decoration: the name says who it is). One that cannot
// be loaded (Gravatar's, on a network without the internet) is the server's default picture.
const DEFAULT_PICTURE = document.querySelector('meta[name="default-picture"]')?.content;

export function showDefaultPictureOnError(event) {
  if (DEFAULT_PICTURE && !event.target.src.includes(DEFAULT_PICTURE)) event.target.src = DEFAULT_PICTURE;
}

export function avatar(url, userId) {
  if (!url) return null;
  const attributes = { class: "avatar", src: url, alt: "", width: 24, height: 24, loading: "lazy", dataset: { userId } };
  return el("img", { ...attributes, onerror: showDefaultPictureOnError });
}

const MENTION_FLAGS = ["mentioned", "stream_wildcard_mentioned", "topic_wildcard_mentioned"];
const mentionsMe = (message) => (message.flags || []).some((flag) => MENTION_FLAGS.includes(flag));

// A muted person's messages the reader asked to see (their Show button), with their name and
// picture: they stay shown when drawn again (a reaction, an edit) or in another view, until the page
// is reloaded.
const revealed = new Set();
export const reveal = (messageId) => revealed.add(messageId);

export function messageItem(message, ctx) {
  const unread = !(message.flags || []).includes("read");
  const content = el("div", { class: "content" });
  const draw = () => {
    const widget = widgetElement(message, ctx); // a poll or a to-do list, in place of its text
    if (widget) {
      content.replaceChildren(widget);
      return;
    }
    content.innerHTML = message.content; // sanitized by the server (apps/messages/rendering.py)
    showEmoji(content);
    showSpoilers(content);
    showImagePreviews(content);
    showLinks(content);
    showTimes(content);
    showMentionNames(content, ctx);
    showMeMessage(content, message);
    // Each paragraph in its own direction (Hebrew, Arabic right to left), as its first letters say.
    for (const block of content.querySelectorAll("p, li, blockquote, h1, h2, h3, h4, h5, h6, td, th")) {
      block.dir = "auto";
    }
  };
  // A muted person's message is hidden until asked for, as in Zulip (their name and picture too).
  const hidden = ctx.isMutedUser(message.sender_id) && !revealed.has(message.id);
  if (hidden) {
    const show = el("button", { type: "button", class: "reveal", dataset: { action: "reveal" } }, "Show");
    content.append(el("p", { class: "muted-sender" }, "This message is hidden: you muted its sender. ", show));
  } else draw();
  return el(
    "li",
    {
      // Mentioning the reader (or a group of theirs, or everyone): marked, as Zulip marks it; not
      // while hidden, nor its reactions (the web app QA pass: both showed around the notice).
      class: `message${unread ? " unread" : ""}${mentionsMe(message) && !hidden ? " mentioned" : ""}${ctx.editingId === message.id ? " editing" : ""}`,
      id: `message-${message.id}`,
      dataset: { messageId: message.id },
      tabindex: "-1",
    },
    el(
      "div",
      { class: "message-header" },
      hidden ? null : avatar(ctx.avatarUrl(message.sender_id) || message.avatar_url, message.sender_id),
      el("strong", { class: "sender" }, hidden ? "Muted user" : message.sender_full_name),
      " ",
      sentAt(message.timestamp),
      message.last_edit_timestamp ? el("span", { class: "edited", title: "This message was edited" }, " (edited)") : null,
      (message.flags || []).includes("starred") ? el("span", { class: "starred-mark", role: "img", "aria-label": "starred" }, "★") : null,
      ctx.mixed ? el("span", { class: "recipient-wrap" }, " · ", recipientLine(message, ctx)) : null,
    ),
    content,
    hidden ? null : reactionButtons(message, ctx),
    actionButtons(message, ctx),
  );
}
