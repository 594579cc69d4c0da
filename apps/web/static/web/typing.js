// Typing notifications, as in Zulip's apps. While someone writes to the conversation shown (a topic,
// a channel's topics, a direct message), "Alice is typing…" shows above the message box, until they
// stop, send, or the server's expiry period passes with no word from them. While this page's writer
// writes to a conversation, its people are told (POST /json/typing): "start" again each started wait
// period while the writing goes on, "stop" once the box has been still for the stopped wait period,
// is emptied or sent, or is addressed elsewhere; never when the writer's settings say not to.

import { api } from "./api.js";
import { recipients, usersOf } from "./compose.js";
import { conversationWith } from "./narrow.js";
import { el } from "./render.js";
import { $, ctx, state } from "./state.js";

// Zulip's periods (the server's, from /register: server_typing_*_milliseconds).
export const periods = { startedWait: 30000, stoppedWait: 12000, startedExpiry: 45000 };
// What the writer lets the page tell (their settings send_*_typing_notifications).
export const allowed = { direct: true, stream: true };

// --- telling others ---------------------------------------------------------------------------------

let told = null; // the conversation told "start": {key, params, at}
let stillTimer = null;

// Where the box's text goes, as POST /typing names it; null while there is nothing to tell.
function conversationWritten() {
  if (state.editing !== null || !$("#compose-content").value.trim()) return null;
  const target = $("#compose-channel").value;
  if (target === "dm") {
    if (!allowed.direct) return null;
    const ids = peopleIds($("#compose-people").value);
    if (!ids?.length || ids.includes(undefined)) return null;
    return { key: `dm:${conversationWith(ids, state.ownUserId)}`, params: { type: "direct", op: "", to: ids } };
  }
  if (!target || !allowed.stream) return null;
  const topic = $("#compose-topic").value.trim();
  return {
    key: `stream:${target}:${topic.toLowerCase()}`,
    params: { type: "stream", op: "", stream_id: Number(target), topic },
  };
}

// The ids of the people typed in the box's people field; null while a name there is nobody's. Read
// again when that field changes or someone joins or leaves, not at each key typed in the message
// (each reading goes through every user).
let typedPeople = { typed: null, users: null, ids: null };
function peopleIds(typed) {
  if (typedPeople.typed !== typed || typedPeople.users !== state.users.size) {
    let ids = null;
    try {
      ids = usersOf(recipients(typed)).map((user) => user?.user_id);
    } catch {
      // a name nobody has (or several have): nobody to tell yet
    }
    typedPeople = { typed, users: state.users.size, ids };
  }
  return typedPeople.ids;
}

function tell(op, params) {
  // A notice that does not arrive loses nothing: the other side's expiry ends it.
  api("POST", "/typing", { ...params, op }, { aside: true }).catch((error) => console.warn("typing:", error.message));
}

// The box changed (its text or its address): "start" to where it goes now, "stop" where it went.
export function noteWriting() {
  const now = conversationWritten();
  if (told && told.key !== now?.key) stopWriting();
  if (!now) return;
  if (!told || Date.now() - told.at >= periods.startedWait) {
    tell("start", now.params);
    told = { ...now, at: Date.now() };
  }
  clearTimeout(stillTimer);
  stillTimer = setTimeout(stopWriting, periods.stoppedWait);
}

// Sent, given up, or still for a while: whoever was told "start" is told "stop".
export function stopWriting() {
  clearTimeout(stillTimer);
  if (!told) return;
  tell("stop", told.params);
  told = null;
}

// --- others writing ---------------------------------------------------------------------------------

// Who is writing where: conversation key -> {where, writers: Map(user id -> expiry timer)}, where
// being {streamId, topic} or {people: "5,7"} (the conversation's people other than the page's user).
const writing = new Map();

function keyOf(where) {
  return where.people !== undefined ? `dm:${where.people}` : `stream:${where.streamId}:${where.topic.toLowerCase()}`;
}

function whereOf(event) {
  if (event.message_type === "stream") return { streamId: event.stream_id, topic: event.topic };
  return { people: conversationWith(event.recipients.map((person) => person.user_id), state.ownUserId).join(",") };
}

export function onTypingEvent(event) {
  const writer = event.sender.user_id;
  if (writer === state.ownUserId) return;
  const where = whereOf(event);
  if (event.op === "start") startedWriting(where, writer);
  else stoppedWriting(where, writer);
}

function startedWriting(where, writer) {
  const key = keyOf(where);
  if (!writing.has(key)) writing.set(key, { where, writers: new Map() });
  const { writers } = writing.get(key);
  clearTimeout(writers.get(writer));
  writers.set(writer, setTimeout(() => stoppedWriting(where, writer), periods.startedExpiry));
  renderWriting();
}

function stoppedWriting(where, writer) {
  const key = keyOf(where);
  const entry = writing.get(key);
  if (!entry?.writers.has(writer)) return;
  clearTimeout(entry.writers.get(writer));
  entry.writers.delete(writer);
  if (!entry.writers.size) writing.delete(key);
  renderWriting();
}

// A message arrived: its sender has stopped writing it.
export function messageArrived(message) {
  if (message.type === "stream") stoppedWriting({ streamId: message.stream_id, topic: message.subject }, message.sender_id);
  else {
    const people = conversationWith(message.display_recipient.map((person) => person.id), state.ownUserId).join(",");
    stoppedWriting({ people }, message.sender_id);
  }
}

function viewHas(view, where) {
  if (where.people !== undefined) {
    return view.kind === "dm" && where.people === conversationWith(view.userIds, state.ownUserId).join(",");
  }
  if (where.streamId !== view.streamId) return false;
  return view.kind === "channel" || (view.kind === "topic" && where.topic.toLowerCase() === view.topic.toLowerCase());
}

// The writers of the conversations the view shows (a channel's: with their topics), muted people left out.
function writersShown(view) {
  const shown = [];
  for (const { where, writers } of writing.values()) {
    if (!viewHas(view, where)) continue;
    for (const id of writers.keys()) {
      if (state.mutedUsers.has(id)) continue;
      const name = ctx.userName(id);
      shown.push(view.kind === "channel" ? `${name} (${topicShown(where.topic)})` : name);
    }
  }
  return [...new Set(shown)];
}

// A topic as the channel's list of topics spells it (a typing notice says it as its writer typed
// it: topics are the same whatever their case), or the organization's name for the empty topic.
function topicShown(topic) {
  const known = state.topics.find((t) => t.name.toLowerCase() === topic.toLowerCase());
  return known?.name || topic || state.emptyTopicName;
}

function sentence(names) {
  if (names.length > 3) return "Several people are typing…";
  if (names.length === 1) return `${names[0]} is typing…`;
  return `${names.slice(0, -1).join(", ")} and ${names.at(-1)} are typing…`;
}

export function renderWriting() {
  const names = writersShown(state.view);
  const node = $("#typing");
  node.hidden = !names.length;
  node.replaceChildren(names.length ? el("span", {}, sentence(names)) : "");
}
