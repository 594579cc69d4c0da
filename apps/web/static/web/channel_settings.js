// The "Channel settings" panel, for the channel shown (as Zulip's channel settings): its name,
// description and privacy (PATCH /json/streams/{id}), its subscribers, adding and removing them
// (POST and DELETE /json/users/me/subscriptions with principals), and archiving it (DELETE
// /json/streams/{id}). What one is offered follows the channel's permissions, read anew at each
// drawing: its can_administer_channel_group (an organization administrator's too) changes and
// archives it, can_remove_subscribers_group removes others. The server checks everything again and
// says what it refuses.

import { api } from "./api.js";
import { $, isArchived, state } from "./state.js";
import { bdi, el } from "./render.js";

let shownId = null; // the channel the panel is for, while open

// The three kinds of channel, as Zulip's privacy menu offers them.
const PRIVACY = {
  public: { is_private: false, history_public_to_subscribers: true },
  "private-shared": { is_private: true, history_public_to_subscribers: true },
  "private-protected": { is_private: true, history_public_to_subscribers: false },
};
const privacyOf = (stream) =>
  !stream.invite_only ? "public" : stream.history_public_to_subscribers ? "private-shared" : "private-protected";

// Whether someone is in a group setting (a group's id, or {direct_members, direct_subgroups}), the
// members of subgroups counted (`groups`: every group by id, system groups too).
function inGroupSetting(setting, userId, groups) {
  const inGroup = (id, seen) => {
    if (seen.has(id)) return false;
    seen.add(id);
    const group = groups.get(id);
    return Boolean(group) && (group.members.includes(userId) || group.direct_subgroup_ids.some((sub) => inGroup(sub, seen)));
  };
  if (typeof setting === "number") return inGroup(setting, new Set());
  const seen = new Set();
  return setting.direct_members.includes(userId) || setting.direct_subgroups.some((id) => inGroup(id, seen));
}

function say(where, text) {
  $(where).textContent = text;
}

// A field shows the server's value, unless it holds a change of one's own not yet saved (another
// administrator's change drawn meanwhile keeps it, and is said: the verify QA pass, saving would
// undo it unawares).
function showValue(field, value, label) {
  const overtaken = field.value !== field.defaultValue && value !== field.defaultValue && field.value !== value;
  if (field.value === field.defaultValue) field.value = value;
  field.defaultValue = value;
  if (overtaken) say("#channel-form-status", `${label} was changed meanwhile to “${value}”: Save replaces it with yours.`);
}

function showPrivacy(stream) {
  const menu = $("#channel-privacy");
  const value = privacyOf(stream);
  const unsaved = menu.value !== menu.dataset.saved;
  menu.dataset.saved = value;
  if (!unsaved) menu.value = value;
}

const CANNOT_SHOW = "The channel cannot be shown";

// The channel, its subscribers and every group (for its permissions). An archived channel is not
// served by id (as in Zulip: "Invalid channel ID"); it is found among all channels, and its
// subscribers (kept for when it is unarchived) are not listed.
async function fetchShown(id) {
  // Guests are not served the groups (as in Zulip), nor given a channel's administration.
  const groups = state.isGuest
    ? Promise.resolve({ user_groups: [] })
    : api("GET", "/user_groups", { include_deactivated_groups: false });
  if (isArchived(id)) {
    const { streams } = await api("GET", "/streams", { exclude_archived: false });
    const stream = streams.find((channel) => channel.stream_id === id);
    if (!stream) throw new Error("Invalid channel ID");
    return [stream, null, (await groups).user_groups];
  }
  const [{ stream }, { subscribers }, { user_groups }] = await Promise.all([
    api("GET", `/streams/${id}`),
    api("GET", `/streams/${id}/members`),
    groups,
  ]);
  return [stream, subscribers, user_groups];
}

async function draw() {
  const id = shownId;
  let stream, subscribers, groups;
  try {
    [stream, subscribers, groups] = await fetchShown(id);
  } catch (error) {
    if (shownId === id) say("#channel-settings-status", `${CANNOT_SHOW}: ${error.message}`);
    return;
  }
  if (shownId !== id || !isOpen()) return; // closed, or another channel's meanwhile
  if ($("#channel-settings-status").textContent.startsWith(CANNOT_SHOW)) say("#channel-settings-status", "");
  const byId = new Map(groups.map((group) => [group.id, group]));
  const administers = state.isAdmin || inGroupSetting(stream.can_administer_channel_group, state.ownUserId, byId);
  const removesOthers = administers || inGroupSetting(stream.can_remove_subscribers_group, state.ownUserId, byId);
  const archived = Boolean(stream.is_archived);

  $("#channel-settings-title").replaceChildren("Settings of #", bdi(stream.name), archived ? " (archived)" : "");
  showValue($("#channel-name"), stream.name, "The name");
  showValue($("#channel-description"), stream.description, "The description");
  showPrivacy(stream);
  const editable = administers && !archived;
  for (const field of $("#channel-form").elements) field.disabled = !editable;
  $("#channel-form-help").textContent = archived
    ? "This channel is archived: its messages can be read; nothing can be sent to it or changed."
    : editable
      ? ""
      : "Only the channel's administrators change its settings.";
  $("#channel-archive").hidden = !administers || archived;
  $("#channel-unarchive").hidden = !administers || !archived;
  $("#channel-subscribers-part").hidden = archived;
  if (!archived) drawSubscribers(stream, subscribers, removesOthers);
}

function drawSubscribers(stream, subscribers, removesOthers) {
  const name = (id) => state.users.get(id)?.full_name ?? "someone unknown";
  const subscribed = new Set(subscribers);
  const people = [...subscribed].sort((a, b) => name(a).localeCompare(name(b)));
  // The focus, if it was on someone's button, goes to the next one drawn (else the list's heading
  // would leave Esc without a panel to close).
  const focused = $("#channel-subscribers").contains(document.activeElement);
  $("#channel-subscribers").replaceChildren(
    ...people.map((userId) => {
      const own = userId === state.ownUserId;
      const remove = () => changeSubscriber(stream, userId, false);
      const label = own ? "Leave" : "Remove";
      const button =
        own || removesOthers
          ? el("button", { type: "button", onclick: remove, "aria-label": `${label} ${name(userId)}` }, label)
          : null;
      return el("li", { dataset: { userId } }, bdi(name(userId)), own ? " (you)" : "", " ", button);
    }),
  );
  $("#channel-subscriber-count").textContent = `${people.length} ${people.length === 1 ? "subscriber" : "subscribers"}`;
  if (focused) ($("#channel-subscribers button") ?? $("#channel-settings .close-panel")).focus();
  // Anyone active not yet in it may be added (guests and the organization's rules: the server says).
  const menu = $("#channel-add-person");
  const chosen = menu.value;
  const candidates = [...state.users.values()]
    .filter((person) => person.is_active !== false && !subscribed.has(person.user_id) && !person.is_system_bot)
    .sort((a, b) => a.full_name.localeCompare(b.full_name));
  menu.replaceChildren(
    el("option", { value: "" }, candidates.length ? "Choose someone" : "Everyone is subscribed"),
    ...candidates.map((person) =>
      el("option", { value: person.user_id }, `${person.full_name} (${person.delivery_email || person.email})`),
    ),
  );
  if (candidates.some((person) => String(person.user_id) === chosen)) menu.value = chosen;
  $("#channel-add-form").hidden = state.isGuest;
}

async function changeSubscriber(stream, userId, add) {
  const own = userId === state.ownUserId;
  const who = state.users.get(userId)?.full_name ?? "someone";
  if (!add && own && stream.invite_only && !window.confirm(`Leave the private channel #${stream.name}? Only its subscribers can add you back.`)) {
    return;
  }
  const params = add
    ? { subscriptions: [{ name: stream.name }], principals: [userId] }
    : { subscriptions: [stream.name], principals: [userId] };
  try {
    await api(add ? "POST" : "DELETE", "/users/me/subscriptions", params);
  } catch (error) {
    say("#channel-subscribers-status", `Not ${add ? "added" : "removed"}: ${error.message}`);
    return;
  }
  say("#channel-subscribers-status", add ? `${who} was added.` : own ? "You left the channel." : `${who} was removed.`);
  if (shownId === stream.stream_id && isOpen()) draw();
}

async function save(event) {
  event.preventDefault();
  const nameField = $("#channel-name");
  const descriptionField = $("#channel-description");
  const menu = $("#channel-privacy");
  const changes = {};
  if (nameField.value.trim() !== nameField.defaultValue) changes.new_name = nameField.value.trim();
  if (descriptionField.value !== descriptionField.defaultValue) changes.description = descriptionField.value;
  if (menu.value !== menu.dataset.saved) Object.assign(changes, PRIVACY[menu.value]);
  if (!Object.keys(changes).length) {
    say("#channel-form-status", "Nothing to save.");
    return;
  }
  const id = shownId;
  try {
    await api("PATCH", `/streams/${id}`, changes);
  } catch (error) {
    say("#channel-form-status", `Not saved: ${error.message}`);
    return;
  }
  // Saved: the fields are the server's now (its events draw the rest).
  nameField.defaultValue = nameField.value = nameField.value.trim();
  descriptionField.defaultValue = descriptionField.value;
  menu.dataset.saved = menu.value;
  say("#channel-form-status", "Saved.");
}

// Archived (asked first), or back from the archive.
async function setArchived(archived) {
  const id = shownId;
  const name = state.streams.get(id)?.name ?? "this channel";
  const question = `Archive #${name}? Nobody can send to it any more; its messages stay readable, and its administrators can unarchive it.`;
  if (archived && !window.confirm(question)) return;
  try {
    if (archived) await api("DELETE", `/streams/${id}`);
    else await api("PATCH", `/streams/${id}`, { is_archived: false });
  } catch (error) {
    say("#channel-settings-status", `Not ${archived ? "archived" : "unarchived"}: ${error.message}`);
    return;
  }
  for (const status of ["#channel-form-status", "#channel-subscribers-status"]) say(status, "");
  say("#channel-settings-status", `#${name} was ${archived ? "archived" : "unarchived"}.`);
  $("#channel-settings .close-panel").focus(); // the button goes away
}

// Opened for a channel: drawn afresh, what it said before cleared, its fields the channel's.
export function openChannelSettings(streamId) {
  const fresh = shownId !== streamId;
  shownId = streamId;
  for (const status of ["#channel-settings-status", "#channel-form-status", "#channel-subscribers-status"]) say(status, "");
  if (fresh) {
    $("#channel-form").reset();
    for (const field of [$("#channel-name"), $("#channel-description")]) field.defaultValue = field.value = "";
    $("#channel-privacy").dataset.saved = $("#channel-privacy").value;
  }
  draw();
}

export function closeChannelSettings() {
  shownId = null;
}

const isOpen = () => shownId !== null && !$("#channel-settings").hidden;

// Whether an event changes what the panel shows: the channel, its subscribers, the groups its
// permissions name, people (their names, roles, arrivals).
function concernsShown(event) {
  if (event.type === "user_group" || event.type === "realm_user") return true;
  if (event.type === "stream") return event.stream_id === shownId || (event.streams || []).some((s) => s.stream_id === shownId);
  if (event.type !== "subscription") return false;
  return (event.stream_ids || []).includes(shownId) || (event.subscriptions || []).some((s) => (s.stream_id ?? s) === shownId);
}

// Drawn again for such changes (here, in another tab or by someone else), once for a burst of them.
let redraw = null;
export function channelSettingsEvents(events) {
  if (!isOpen() || !events.some(concernsShown)) return;
  clearTimeout(redraw);
  redraw = setTimeout(() => isOpen() && draw(), 200);
}

export function setUpChannelSettings() {
  $("#channel-form").addEventListener("submit", save);
  $("#channel-form").addEventListener("input", () => say("#channel-form-status", ""));
  $("#channel-form").addEventListener("change", () => say("#channel-form-status", ""));
  $("#channel-archive").addEventListener("click", () => setArchived(true));
  $("#channel-unarchive").addEventListener("click", () => setArchived(false));
  $("#channel-add-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const userId = Number($("#channel-add-person").value);
    const stream = { stream_id: shownId, name: state.streams.get(shownId)?.name };
    if (userId && stream.name) changeSubscriber(stream, userId, true);
  });
}
