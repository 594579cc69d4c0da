// The message box: to a channel's topic or to people, or editing an own message. Enter sends,
// Shift+Enter is a new line, Esc cancels an edit. What is being written is kept by this tab
// (sessionStorage: each tab its own) until it is sent: a reload or a session that ended (a new
// password set elsewhere) loses nothing; an edit puts it aside and gives it back. It is kept by the
// server too, as a draft (Zulip's drafts: the writer's other devices and tabs list it, drafts.js),
// unless the writer's settings say not (enable_drafts_synchronization).

import { api, loggingOut, UNREACHABLE, upload } from "./api.js";
import { viewShows } from "./narrow.js";
import { el } from "./render.js";
import { $, activeSubs, ctx, isArchived, state } from "./state.js";

// The channels the box may address: the subscribed ones, and the one shown if it is not (a public
// channel takes messages from those not subscribed, as in Zulip); none archived.
export function renderComposeChannels() {
  const select = $("#compose-channel");
  const chosen = select.value;
  const channels = activeSubs();
  const shown = state.view.streamId;
  const visiting = shown && !state.subs.has(shown) && !isArchived(shown) && state.streams.get(shown);
  select.replaceChildren(
    el("option", { value: "", disabled: true }, "Choose where it goes"),
    ...channels.map((sub) => el("option", { value: sub.stream_id }, `#${sub.name}`)),
    ...(visiting ? [el("option", { value: shown }, `#${visiting.name} (not subscribed)`)] : []),
    el("option", { value: "dm" }, "Direct message"),
  );
  // A channel no longer there (unsubscribed, archived) is not swapped for another (the browser
  // would choose the first: the web app QA pass, a draft to a private channel went to #general):
  // none is chosen until the writer chooses.
  select.value = [...select.options].some((o) => o.value === chosen) ? chosen : "";
  toggleComposeFields();
}

export function toggleComposeFields() {
  const dm = $("#compose-channel").value === "dm";
  $("#compose-topic-field").hidden = dm;
  $("#compose-people-field").hidden = !dm;
}

// A view chosen: the message box is addressed to it, unless something is being written there to
// an address of its own (kept, as Zulip's compose box keeps it). Text typed before the page first
// addressed the box (while it loads) has none yet: it takes the view's.
let addressed = false;
let addressedFor = null; // the view the box was last addressed for (viewKey)
let archivedShown = ""; // the notice of the archived channel shown
const viewKey = (view) => JSON.stringify([view.kind, view.streamId, view.topic, view.userIds, view.query]);
export function presetCompose(view, { again = false } = {}) {
  const select = $("#compose-channel");
  // An archived channel shown is read, not written to: the box says so while it is shown (and
  // archived), and is addressed to nothing (its channel is not offered).
  const notice = view.streamId && isArchived(view.streamId) ? archivedNotice(view.streamId) : "";
  if (notice || $("#compose-status").textContent === archivedShown) setComposeStatus(notice);
  archivedShown = notice;
  // An edit keeps the message's address (the draft put aside gets its own back when it ends).
  if (state.editing !== null) return;
  // Kept with no address too (its channel gone: the web app QA pass, the draft went to #general).
  if (addressed && $("#compose-content").value.trim()) return;
  // The same view drawn again (the page registered again after a restart; its channel renamed,
  // archived or back): the box keeps the address its writer gave it (the web app QA pass: a topic
  // typed in a channel's view was emptied by a restart, and the next message went to "general
  // chat"), its channel chosen again once offered again. `again`: addressed to the view anew all
  // the same (a message just sent elsewhere from it).
  const sameView = addressed && !again && addressedFor === viewKey(view);
  addressed = true;
  addressedFor = viewKey(view);
  renderComposeChannels(); // the channel shown may be one not subscribed to
  const offered = view.streamId && [...select.options].some((o) => o.value === String(view.streamId));
  if (sameView) {
    if (select.value === "" && offered) select.value = String(view.streamId);
  } else if (offered) {
    select.value = String(view.streamId);
    $("#compose-topic").value = view.kind === "topic" ? view.topic : "";
  } else if (view.kind === "dm" || view.kind === "dms") {
    select.value = "dm";
    const people = (view.userIds ?? []).map((id) => state.users.get(id)).filter(Boolean);
    if (people.length) $("#compose-people").value = people.map((person) => person.email).join(", ");
  } else {
    // A view of several conversations (the combined feed, starred messages, a search): the writer
    // chooses where a message goes, as in Zulip (it went to the alphabetically first channel).
    select.value = "";
    $("#compose-topic").value = "";
  }
  toggleComposeFields();
}

const archivedNotice = (id) => `#${ctx.streamName(id)} is archived: its messages can be read, nothing more can be sent to it.`;

let statusWrittenIn = ""; // the view (its hash) the status was written in

export function setComposeStatus(text) {
  $("#compose-status").textContent = text;
  statusWrittenIn = window.location.hash;
}

// A status written about another view goes as a view is shown (the web app QA pass: "Sent to …: not
// shown here." stayed on once that view was opened, and on through every view after); one saying the
// server cannot be reached stays until it is reached again.
export function clearStatusOfOtherView() {
  const text = $("#compose-status").textContent;
  if (text && statusWrittenIn !== window.location.hash && !text.endsWith(UNREACHABLE)) setComposeStatus("");
}

// --- what is being written, kept until sent -------------------------------------------------------

const draftKey = () => `parley.compose.${state.ownUserId}`;
const drafts = window.sessionStorage;

function composeFields() {
  return {
    channel: $("#compose-channel").value,
    topic: $("#compose-topic").value,
    people: $("#compose-people").value,
    content: $("#compose-content").value,
  };
}

function fillCompose({ channel, topic, people, content }) {
  const select = $("#compose-channel");
  select.value = [...select.options].some((o) => o.value === channel) ? channel : ""; // gone: none
  $("#compose-topic").value = topic ?? "";
  $("#compose-people").value = people ?? "";
  $("#compose-content").value = content ?? "";
  toggleComposeFields();
}

// Called as the box changes (not while an edit is in it: the edit is the message's, not a draft).
export function keepDraft() {
  if (state.editing !== null) return;
  keepInTab();
  clearTimeout(syncTimer);
  syncTimer = setTimeout(syncDraft, SYNC_AFTER_MS);
}

// Not while an edit is in the box (a draft's save answered during an edit kept the edited message's
// text as the tab's draft, given back in place of the draft after a reload: seen under load).
function keepInTab() {
  if (state.editing !== null) return;
  try {
    const fields = composeFields();
    if (fields.content.trim()) drafts.setItem(draftKey(), JSON.stringify({ ...fields, draftId, keptAddress }));
    else drafts.removeItem(draftKey());
  } catch {
    // storage full or refused (a private window): the box still works, unkept
  }
}

// --- kept by the server too ----------------------------------------------------------------------

const SYNC_AFTER_MS = 1000; // the writer paused this long: the server's draft is brought up to date
let draftId = null; // the server's draft of what the box holds
let saved = null; // the box's fields as the server has them (null: not known to be)
// A draft taken up whose address the box cannot show (a channel left or archived, someone
// deactivated): {fields: the box's address as shown, address: the draft's}. Kept while the writer
// leaves the address as shown (the drafts QA pass: a restored draft lost its channel and topic).
let keptAddress = null;
let syncTimer = null;
let syncing = Promise.resolve(true); // one request at a time, in order: a draft is created once
let unreached = false; // the last save failed to reach the server: tried again once it answers

// The id of the server's draft the box holds (null: none).
export const boxDraftId = () => draftId;

// The server answers again: a draft it did not get is kept now, not at the next change (the drafts
// QA pass: typed offline and left alone, it stayed in the tab only).
export function serverBack() {
  if (unreached) syncDraft();
}

// The server's draft of the box's text forgotten (deleted on another device): the box keeps its
// text, and the next change keeps it anew.
export function draftDeleted(id) {
  if (id === draftId) draftId = saved = null;
}

// The server's draft brought up to date now (created, changed, or deleted once the box is empty);
// resolves to whether the server has what the box holds. A failure is said (the server refused:
// too many drafts) or left to the next change (unreachable: the tab keeps the text meanwhile).
export function syncDraft() {
  clearTimeout(syncTimer);
  syncing = syncing.then(saveOnServer);
  return syncing;
}

const sameFields = (a, b) => a !== null && b !== null && JSON.stringify(a) === JSON.stringify(b);

async function saveOnServer() {
  unreached = false;
  if (!state.syncDrafts || state.editing !== null) return true;
  const fields = composeFields();
  if (sameFields(fields, saved)) return true; // unchanged: its time stays (the drafts QA pass)
  try {
    if (!fields.content.trim()) {
      // Forgotten once the server deleted it (the verify QA pass: cleared offline, the failed
      // deletion was tried again with no draft left to delete, and the text stayed listed).
      const id = draftId;
      if (id !== null) {
        try {
          await api("DELETE", `/drafts/${id}`);
        } catch (error) {
          if (error.status !== 404) throw error; // 404: deleted already (on another device)
        }
        window.dispatchEvent(new CustomEvent("parley:draft-deleted", { detail: id })); // before its event comes
      }
      if (draftId === id) draftId = null;
      saved = fields;
      return true;
    }
    const draft = asApiDraft(fields);
    if (draftId !== null) {
      try {
        await api("PATCH", `/drafts/${draftId}`, { draft });
        saved = fields;
        return true;
      } catch (error) {
        if (error.status !== 404) throw error;
        draftId = null; // deleted meanwhile (on another device): kept anew
      }
    }
    draftId = (await api("POST", "/drafts", { drafts: [draft] })).ids[0];
    saved = fields;
    keepInTab();
    return true;
  } catch (error) {
    saved = null;
    unreached = error.status === 0 || error.status >= 500;
    if (error.status >= 400 && error.status < 500 && error.status !== 401) {
      setComposeStatus(`Not kept as a draft: ${error.message}`);
    }
    console.warn("draft:", error);
    return false;
  }
}

// The box's fields as the drafts API takes them: to a channel's topic, to people (those this page
// knows), or not addressed yet; a draft taken up keeps its own address while the box's is left as
// it showed it.
function asApiDraft({ channel, topic, people, content }) {
  const timestamp = Math.floor(Date.now() / 1000);
  const shown = keptAddress?.fields;
  if (shown && shown.channel === channel && shown.topic === topic && shown.people === people) {
    return { ...keptAddress.address, content, timestamp };
  }
  keptAddress = null;
  if (channel === "dm") {
    let emails = [];
    try {
      emails = recipients(people);
    } catch {
      // a name not (yet) someone's: those known are kept
    }
    const to = usersOf(emails).filter(Boolean).map((user) => user.user_id);
    return { type: "private", to, topic: "", content, timestamp };
  }
  if (channel) return { type: "stream", to: [Number(channel)], topic, content, timestamp };
  return { type: "", to: [], topic: "", content, timestamp };
}

// A draft taken up from the list (drafts.js): what the box held is kept as its own draft first, an
// edit in it given up (as Esc would); the box then holds the draft, to go on writing. Null when
// done, else why not (nothing is lost: the box keeps what it held).
export async function takeUpDraft(draft) {
  if (state.sending) return "a message is being sent: restore the draft once it is.";
  if (state.editing !== null) stopEditing();
  // Unsaved, what the box holds would be lost (the drafts QA pass: restoring while offline).
  if ($("#compose-content").value.trim() && !(await syncDraft())) {
    return "what the message box holds could not be kept as a draft (is this device online?).";
  }
  const people = draft.type === "private" ? draft.to.map((id) => state.users.get(id)?.email).filter(Boolean) : [];
  fillCompose({
    channel: draft.type === "stream" ? String(draft.to[0]) : draft.type === "private" ? "dm" : "",
    topic: draft.topic,
    people: people.join(", "),
    content: draft.content,
  });
  const fields = composeFields();
  keptAddress = { fields, address: { type: draft.type, to: draft.to, topic: draft.topic } };
  saved = fields;
  addressed = true;
  draftId = draft.id;
  keepInTab();
  const box = $("#compose-content");
  box.focus();
  box.setSelectionRange(box.value.length, box.value.length);
  return null;
}

// Logging out on purpose leaves nothing behind in this tab (a shared computer): what the box holds
// is kept by the server first (the drafts QA pass: the last second's typing was lost), for a while.
export async function forgetDraft(event) {
  const form = event.target;
  if (!form.dataset.drafted) {
    event.preventDefault();
    await Promise.race([syncDraft(), new Promise((resolve) => setTimeout(resolve, 3000))]);
    form.dataset.drafted = "yes";
    // Sent again once this submit event is over: while it is, the browser ignores the request (the
    // draft already saved, the await above ends within the event, and logging out did nothing).
    setTimeout(() => form.requestSubmit());
    return;
  }
  loggingOut();
  try {
    drafts.removeItem(draftKey());
  } catch {
    // nothing was kept
  }
}

// Once the channels are known (the page's first /register): what was being written comes back.
let restored = false;
export function restoreDraft() {
  if (restored) return;
  restored = true;
  if (state.editing !== null || $("#compose-content").value) return;
  try {
    const kept = JSON.parse(drafts.getItem(draftKey()) || "null");
    if (kept && typeof kept.content === "string") {
      fillCompose(kept);
      addressed = true;
      draftId = Number.isInteger(kept.draftId) ? kept.draftId : null;
      keptAddress = kept.keptAddress?.address ? kept.keptAddress : null; // its address, reloaded too
      syncDraft(); // the server may not have its last change (a reload right after typing)
    }
  } catch {
    drafts.removeItem(draftKey());
  }
}

// --- replying to a message, quoting it -------------------------------------------------------------

// The box addressed to the message's conversation (unless something is being written: it keeps its
// own address), focused at the end of its text.
export function replyTo(message) {
  if (state.editing !== null) stopEditing();
  const box = $("#compose-content");
  if (!box.value.trim() && message.type === "stream") {
    fillCompose({ channel: String(message.stream_id), topic: message.subject, people: "", content: "" });
  } else if (!box.value.trim()) {
    const others = message.display_recipient.filter((person) => person.id !== state.ownUserId);
    const people = (others.length ? others : message.display_recipient).map((person) => person.email);
    fillCompose({ channel: "dm", topic: "", people: people.join(", "), content: "" });
  }
  box.focus();
  box.setSelectionRange(box.value.length, box.value.length);
}

// Quote and reply, as Zulip's: the message's Markdown in a ```quote block (a longer fence when it
// holds one), under a silent mention of its author and a link to it. Addressed to its conversation,
// unless something is being written: the quote is added to it.
export function quoteInCompose(message, raw, link) {
  replyTo(message);
  const box = $("#compose-content");
  const longest = Math.max(0, ...(raw.match(/`{3,}/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  const quote = `@_**${message.sender_full_name}|${message.sender_id}** [said](${link}):\n${fence}quote\n${raw}\n${fence}\n`;
  box.value = box.value.trim() ? `${box.value.trimEnd()}\n\n${quote}` : quote;
  box.focus();
  box.setSelectionRange(box.value.length, box.value.length);
  keepDraft();
}

// --- editing an own message ----------------------------------------------------------------------

let putAside = null; // what was being written when the edit began
let editedTopic = null; // the topic of the channel message being edited (null: a direct message)
let editedRaw = ""; // its content as the edit began
let editedWidget = false; // it is a poll or a to-do list: its text stays as it is (the server refuses an edit of it)

// An edit shows the message's own address: a channel message's topic may be changed with its
// content (this message only, as Zulip's "change_one"); where it goes may not (the web app QA pass:
// the fields stayed editable, and what was typed in them was silently ignored). The message being
// edited is marked in the list.
export async function startEditing(message) {
  // The box holds still while the message's text loads (the web app QA pass: what was typed
  // meanwhile was sent as a new message, then the edit began).
  setSending(true);
  let body;
  try {
    body = await api("GET", `/messages/${message.id}`, { apply_markdown: false });
  } finally {
    setSending(false);
  }
  const raw = body.raw_content;
  if (state.editing === null) putAside = composeFields();
  markEditing(false);
  state.editing = message.id;
  markEditing(true);
  editedTopic = message.type === "stream" ? message.subject : null;
  editedRaw = raw;
  editedWidget = (message.submessages || []).length > 0;
  fillCompose({
    channel: message.type === "stream" ? String(message.stream_id) : "dm",
    topic: editedTopic ?? "",
    people: message.type === "stream" ? "" : $("#compose-people").value,
    content: raw,
  });
  $("#compose-topic-field").hidden = editedTopic === null;
  $("#compose-people-field").hidden = true;
  $("#compose-channel").disabled = true;
  $("#send").textContent = "Save edit";
  $("#cancel-edit").hidden = false;
  $("#compose-content").readOnly = editedWidget;
  $("#compose-file").disabled = editedWidget; // nothing may be added to it either
  if (editedWidget) {
    setComposeStatus("A poll's or to-do list's text cannot be edited; its topic can.");
    $("#compose-topic").focus();
  } else {
    $("#compose-content").focus();
  }
}

export function stopEditing() {
  markEditing(false);
  state.editing = null;
  editedTopic = null;
  editedWidget = false;
  $("#compose-content").readOnly = state.sending;
  $("#compose-file").disabled = false;
  $("#compose-channel").disabled = false;
  fillCompose(putAside ?? { ...composeFields(), content: "" });
  putAside = null;
  keepInTab(); // the draft given back, as the tab keeps it (what changed during the edit too)
  $("#send").textContent = "Send";
  $("#cancel-edit").hidden = true;
}

// (Drawn again, in any view, the message keeps the mark: render.js asks ctx.editingId.)
function markEditing(on) {
  if (state.editing !== null) document.getElementById(`message-${state.editing}`)?.classList.toggle("editing", on);
}

// What an edit changes, only that (the web app QA pass: a poll's topic could not be changed, as its
// content, sent unchanged, may not be edited): the content, a channel message's topic (emptied: the
// server applies the organization's rule for empty topics).
function editParams(content) {
  const params = content === editedRaw ? {} : { content };
  const topic = $("#compose-topic").value.trim();
  if (editedTopic !== null && topic !== editedTopic) Object.assign(params, { topic, propagate_mode: "change_one" });
  return params;
}

// --- sending -------------------------------------------------------------------------------------

// One message at a time: while it goes, the box holds still (a second Enter sends nothing twice,
// and nothing typed meanwhile is cleared with it).
function setSending(sending) {
  state.sending = sending;
  $("#compose-content").readOnly = sending || editedWidget;
  $("#send").disabled = sending;
}

export async function onSend(event) {
  event.preventDefault();
  if (state.sending) return;
  const content = $("#compose-content").value;
  if (!content.trim()) {
    if (state.editing !== null) setComposeStatus("Not saved: an edit cannot be empty (delete the message instead).");
    return;
  }
  const target = $("#compose-channel").value;
  if (!target && state.editing === null) {
    setComposeStatus("Not sent: choose where it goes (a channel or direct message).");
    return;
  }
  setComposeStatus("Sending…");
  setSending(true);
  try {
    let elsewhere = null;
    if (state.editing !== null) {
      const changes = editParams(content);
      if (Object.keys(changes).length) await api("PATCH", `/messages/${state.editing}`, changes);
      stopEditing();
    } else {
      if (target === "dm") {
        const to = recipients($("#compose-people").value);
        await api("POST", "/messages", { type: "direct", to, content });
        elsewhere = notShownHere({ type: "private", display_recipient: people(to) }, "direct message");
      } else {
        const topic = $("#compose-topic").value;
        await api("POST", "/messages", { type: "stream", to: Number(target), topic, content });
        // An empty topic is named as the server shows it to this page (the web app QA pass: "› :").
        const shownTopic = topic.trim() || state.emptyTopicName;
        const place = `#${ctx.streamName(Number(target))} › ${shownTopic}`;
        elsewhere = notShownHere({ type: "stream", stream_id: Number(target), subject: shownTopic }, place);
      }
      $("#compose-content").value = "";
      keepDraft();
      syncDraft(); // sent: its draft goes at once
      // Sent where the view shown is not (the box kept an address of its own): said so, and the box
      // is the view's again, as Zulip's (the web app QA pass: the next message went there unseen).
      if (elsewhere) presetCompose(state.view, { again: true });
    }
    if (elsewhere) setComposeStatus(`Sent to ${elsewhere}: not shown here.`);
    else if ($("#compose-status").textContent === "Sending…") setComposeStatus(""); // not "Sent! Scroll down…"
  } catch (error) {
    setComposeStatus(`${state.editing !== null ? "Not saved" : "Not sent"}: ${error.message}`);
  } finally {
    setSending(false);
  }
}

// Where a message sent goes, if the view shown leaves it out (as viewShows reads a message; a search
// is not known before the server says): its name for the writer, else null.
function notShownHere(message, place) {
  if (state.view.kind === "search" || (message.type === "private" && !message.display_recipient.every(Boolean))) {
    return null;
  }
  return viewShows(state.view, message, state.ownUserId) ? null : place;
}

// The people of a direct message (addresses as `recipients` gives them) and the writer, as a
// message's display_recipient names them; null for anyone this page does not know.
function people(emails) {
  return [...usersOf(emails), state.users.get(state.ownUserId)].map((user) => user && { id: user.user_id });
}

// The users with these email addresses (any case); undefined for an address this page does not know.
export function usersOf(emails) {
  const byEmail = new Map([...state.users.values()].map((user) => [user.email.toLowerCase(), user]));
  return emails.map((email) => byEmail.get(email.toLowerCase()));
}

// The people a direct message goes to, as typed: email addresses, or names (someone's full name,
// any case, if nobody else has it), comma-separated.
export function recipients(typed) {
  return typed
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      if (part.includes("@")) return part;
      const named = [...state.users.values()].filter((u) => u.is_active !== false && u.full_name.toLowerCase() === part.toLowerCase());
      if (named.length === 1) return named[0].email;
      throw new Error(named.length ? `Several people are named ${part}: use an email address` : `Nobody is named ${part}`);
    });
}

// Enter in the topic or the people field goes on to the message, as in Zulip (the web app QA pass:
// it sent the message with a topic half typed).
export function onAddressKey(event) {
  if (event.key === "Enter" && !event.isComposing) {
    event.preventDefault();
    $("#compose-content").focus();
  } else {
    onComposeKey(event); // Esc gives up an edit there too (the web app QA pass)
  }
}

// On a touch screen (a phone's keyboard has no Shift+Enter) Enter starts a new line and the Send
// button sends, as in phones' chat apps (the web app QA pass: a message of several lines could not
// be written on a phone).
export const enterSends = () => !window.matchMedia("(hover: none) and (pointer: coarse)").matches;

export function onComposeKey(event) {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing && enterSends()) {
    event.preventDefault();
    $("#compose").requestSubmit();
  } else if (event.key === "Escape" && state.editing !== null) {
    // Esc gives up an edit (what was being written before it comes back); a draft is never
    // thrown away by a key.
    event.preventDefault();
    stopEditing();
    setComposeStatus("");
  } else if (event.key === "Escape" && !event.defaultPrevented) {
    event.target.blur(); // out of the box (what it holds stays), for the keyboard shortcuts
  }
}

// A file chosen: uploaded, then linked where the cursor is, as Zulip's web app does ([name](url)).
export async function onAttach(event) {
  const input = event.target;
  const file = input.files[0];
  if (!file) return;
  // Too large (or uploads off: 0): said at once, before it is sent whole only to be refused.
  const limit = state.maxUploadMiB;
  if (limit === 0 || (limit !== null && file.size > limit * 1024 * 1024)) {
    const why = limit ? `${file.name} is larger than this server's maximum upload size (${limit} MiB)` : "this server takes no files";
    setComposeStatus(`Not uploaded: ${why}.`);
    input.value = "";
    return;
  }
  setComposeStatus(`Uploading ${file.name}…`);
  try {
    const body = await upload(file);
    const name = file.name.replace(/[[\]]/g, "");
    const box = $("#compose-content");
    const at = box.selectionStart ?? box.value.length;
    const before = box.value.slice(0, at);
    const space = before && !/\s$/.test(before) ? " " : ""; // two files in a row stay two links
    box.value = `${before}${space}[${name}](${body.url})${box.value.slice(box.selectionEnd ?? at)}`;
    box.focus();
    keepDraft();
    setComposeStatus("");
  } catch (error) {
    setComposeStatus(`Not uploaded: ${error.message}`);
  } finally {
    input.value = "";
  }
}
