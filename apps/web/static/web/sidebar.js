// The sidebar (channels with unread counts, people with their presence) and the channel's topics.

import { hashFor } from "./narrow.js";
import { el, listed } from "./render.js";
import { $, activeSubs, ctx, isMutedTopic, state, topicPolicy } from "./state.js";

// Unread messages the combined feed counts: not of a muted topic, nor of a muted channel's (unless
// the topic is unmuted or followed). Those of muted topics count in their topic.
const heard = (w) => w.streamId === undefined || !isMutedTopic(w.streamId, w.topic);
// A channel's own count leaves out only its muted topics (a muted channel keeps its count, dimmed:
// the web app QA pass, a muted channel showed neither a count nor that it was muted).
const inChannel = (id) => (w) => w.streamId === id && topicPolicy(id, w.topic) !== 1;

function unreadCount(test) {
  let count = 0;
  for (const where of state.unread.values()) if (test(where)) count += 1;
  return count;
}

function countBadge(count, label) {
  // "1 unread message", "2 unread messages" (labels are plural: "direct messages from Olivia").
  const said = count === 1 ? label.replace(/messages/, "message") : label;
  return count ? el("span", { class: "count", "aria-label": `${count} unread ${said}` }, String(count)) : null;
}

export function renderSidebar() {
  const channels = activeSubs();
  $("#channels").replaceChildren(
    ...channels.map((sub) => {
      const current = state.view.streamId === sub.stream_id;
      return el(
        "li",
        { dataset: { streamId: sub.stream_id }, class: sub.is_muted ? "muted" : null, title: sub.is_muted ? "Muted" : null },
        el("span", { class: "swatch", style: `background:${sub.color || "#888"}`, "aria-hidden": "true" }),
        el("a", { href: hashFor({ kind: "channel", streamId: sub.stream_id }), "aria-current": current ? "page" : null }, sub.name),
        " ",
        el("span", { class: "count-slot" }),
      );
    }),
  );
  renderCounts();
}

export function renderCounts() {
  for (const item of $("#channels").children) {
    const id = Number(item.dataset.streamId);
    item.querySelector(".count-slot").replaceChildren(countBadge(unreadCount(inChannel(id)), "messages") || "");
  }
  $("#count-feed").replaceChildren(countBadge(unreadCount(heard), "messages") || "");
  $("#count-dms").replaceChildren(countBadge(unreadCount((w) => w.dm), "direct messages") || "");
  const streamId = state.view.streamId;
  for (const item of $("#topics").children) {
    const topic = item.dataset.topic.toLowerCase();
    const count = unreadCount((w) => w.streamId !== undefined && w.streamId === streamId && w.topic.toLowerCase() === topic);
    item.querySelector(".count-slot").replaceChildren(countBadge(count, "messages") || "");
  }
  renderPeople(); // their direct messages' counts
  renderGroupDms();
  showMarkRead();
  document.title = titleWithCount(document.title);
}

// The tab's title begins with the combined feed's unread count, as Zulip's ("(3) #general · Acme").
export function titleWithCount(title) {
  const base = title.replace(/^\(\d+\) /, "");
  const count = unreadCount(heard);
  return count ? `(${count}) ${base}` : base;
}

// The view's "Mark as read", while it has unread messages (not in a search, which reads nothing).
export function showMarkRead() {
  const view = state.view;
  const shownUnread = () => [...state.messages.values()].some((m) => !(m.flags || []).includes("read"));
  const has = {
    feed: () => unreadCount(heard) > 0,
    channel: () => unreadCount(inChannel(view.streamId)) > 0,
    topic: () => unreadCount((w) => w.streamId === view.streamId && w.topic.toLowerCase() === view.topic.toLowerCase()) > 0,
    dms: () => unreadCount((w) => w.dm) > 0,
    dm: () => (view.userIds.length === 1 && unreadCount((w) => w.userId === view.userIds[0]) > 0) || shownUnread(),
    starred: shownUnread,
  }[view.kind];
  $("#mark-read").hidden = !has?.();
}

function presenceOf(userId) {
  const times = state.presences[userId];
  if (!times) return "offline";
  const now = Date.now() / 1000;
  if (now - (times.active_timestamp || 0) < state.offlineAfter) return "active";
  if (now - (times.idle_timestamp || 0) < state.offlineAfter) return "idle";
  return "offline";
}

export function renderPeople() {
  const people = [...state.users.values()].filter((u) => !u.is_bot && u.is_active !== false);
  people.sort((a, b) => a.full_name.localeCompare(b.full_name));
  const labels = { active: "online", idle: "idle", offline: "offline" };
  $("#people").replaceChildren(
    ...people.map((person) => {
      const status = person.user_id === state.ownUserId ? "active" : presenceOf(person.user_id);
      return el(
        "li",
        { dataset: { userId: person.user_id } },
        // None when the organization shows nobody online (everyone would look offline).
        state.presenceDisabled
          ? null
          : el("span", { class: `presence ${status}`, role: "img", "aria-label": labels[status], title: labels[status] }),
        el("a", { href: hashFor({ kind: "dm", userIds: [person.user_id] }) }, person.full_name),
        " ",
        countBadge(unreadCount((w) => w.userId === person.user_id), `direct messages from ${person.full_name}`),
      );
    }),
  );
}

// A group conversation's key: the ids of its people but oneself, sorted.
export const groupKey = (userIds) => userIds.filter((id) => id !== state.ownUserId).sort((a, b) => a - b).join(",");

// A group direct message was sent or received: its conversation first in the sidebar.
export function noteGroupDm(userIds, messageId) {
  const key = groupKey(userIds);
  const known = state.groupDms.get(key);
  if (!known || known.maxId < messageId) state.groupDms.set(key, { userIds: key.split(",").map(Number), maxId: messageId });
}

const MOST_GROUP_DMS = 8;

// The latest group conversations, each with its unread count (the web app QA pass: they had no
// place; one-to-one conversations are the people's, below).
export function renderGroupDms() {
  const groups = [...state.groupDms.entries()].sort(([, a], [, b]) => b.maxId - a.maxId).slice(0, MOST_GROUP_DMS);
  const list = $("#group-dms");
  list.hidden = groups.length === 0;
  list.replaceChildren(
    ...groups.map(([key, { userIds }]) => {
      const names = userIds.map((id) => ctx.userName(id));
      const current = state.view.kind === "dm" && groupKey(state.view.userIds) === key;
      return el(
        "li",
        { dataset: { group: key } },
        el("a", { href: hashFor({ kind: "dm", userIds }), "aria-current": current ? "page" : null }, listed(names)),
        " ",
        countBadge(unreadCount((w) => w.group === key), `messages with ${names.join(", ")}`),
      );
    }),
  );
}

export function addTopic(name, maxId) {
  const found = state.topics.find((t) => t.name.toLowerCase() === name.toLowerCase());
  if (found) found.max_id = Math.max(found.max_id, maxId);
  else state.topics.push({ name, max_id: maxId });
  renderTopics();
}

export function renderTopics() {
  const list = $("#topics");
  const topics = [...state.topics].sort((a, b) => b.max_id - a.max_id);
  list.hidden = !state.view.streamId || topics.length === 0;
  list.replaceChildren(
    ...topics.map((topic) => {
      const current = state.view.kind === "topic" && state.view.topic.toLowerCase() === topic.name.toLowerCase();
      // A muted topic is dimmed and says so, as in Zulip (the web app QA pass: listed like any other,
      // with an unread count for messages the channel's view hides).
      const muted = topicPolicy(state.view.streamId, topic.name) === 1;
      return el(
        "li",
        { dataset: { topic: topic.name }, class: muted ? "muted" : null },
        el("a", { href: hashFor({ kind: "topic", streamId: state.view.streamId, topic: topic.name }), "aria-current": current ? "page" : null }, topic.name),
        " ",
        el("span", { class: "count-slot" }),
      );
    }),
  );
  renderCounts();
}
