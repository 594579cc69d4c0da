// Parley's web app: one page, its state from POST /json/register, kept live by the event queue
// (events.js); each view (a narrow) is fetched from GET /json/messages. What is on screen is built
// from that state by the render functions below; nothing is written as HTML but message content.

import { api, UNREACHABLE, uploadAvatar } from "./api.js";
import {
  clearStatusOfOtherView,
  enterSends,
  forgetDraft,
  keepDraft,
  onAttach,
  onAddressKey,
  onComposeKey,
  onSend,
  presetCompose,
  quoteInCompose,
  renderComposeChannels,
  restoreDraft,
  serverBack,
  setComposeStatus,
  syncDraft,
  startEditing,
  stopEditing,
  toggleComposeFields,
} from "./compose.js";
import { channelSettingsEvents, closeChannelSettings, openChannelSettings, setUpChannelSettings } from "./channel_settings.js";
import { draftsChanged, loadDrafts, renderDrafts, setUpDrafts } from "./drafts.js";
import { closeEmojiPicker, emojiPickerOpenedBy, openEmojiPicker, setUpEmojiPicker } from "./emoji_picker.js";
import { EventQueue } from "./events.js";
import {
  hideMentions,
  hideOperands,
  hidePeople,
  onMentionKey,
  onOperandKey,
  onPeopleKey,
  suggestMentions,
  suggestOperands,
  suggestPeople,
} from "./mentions.js";
import { inviteChannelsChanged, renderInvitations, renderInviteChannels, setUpInvitations } from "./invite.js";
import { organizationChanged, peopleChanged, renderPeopleAdmin, setUpOrganization } from "./organization.js";
import { loadNotificationSettings, notificationSettingChanged, setUpNotificationSettings } from "./notification_settings.js";
import { hashFor, narrowFor, searchProblem, viewFromHash, viewShows, zulipLinkTo } from "./narrow.js";
import {
  bdi,
  el,
  listed,
  messageItem,
  readToggleLabel,
  reveal,
  showDefaultPictureOnError,
  showEmoji,
  showLinks,
} from "./render.js";
import { onSearchKey, onShortcutKey } from "./shortcuts.js";
import { widgetChange } from "./widgets.js";
import { allowed, messageArrived, noteWriting, onTypingEvent, periods, renderWriting, stopWriting } from "./typing.js";
import {
  addTopic,
  groupKey,
  noteGroupDm,
  renderCounts,
  renderPeople,
  renderSidebar,
  renderTopics,
  showMarkRead,
  titleWithCount,
} from "./sidebar.js";
import { $, channelOf, ctx, isArchived, isMutedTopic, me, ROLE_NAMES, state, topicKey, topicPolicy } from "./state.js";

// --- connection status ---------------------------------------------------------------------------

let countdown = null;
let queue = null; // the page's event queue (start)

function showStatus(status, seconds, error) {
  // The page never got its state (opened while the server could not register it): why, where the
  // messages would be (the resilience QA pass: an empty page, "Reconnecting…" all it said).
  if (status === "reconnecting" && !state.registered && error) {
    showEmpty(`Your conversations cannot be loaded yet (${error.message}). They load by themselves once the server answers.`);
  }
  // Back: a message that the server could not be reached is no longer true.
  if (status === "connected" && $("#compose-status").textContent.endsWith(UNREACHABLE)) setComposeStatus("");
  // Back: a view that could not load (the server unreachable or failing) loads now.
  if (status === "connected" && state.viewFailed) showView();
  if (status === "connected") serverBack();
  const node = $("#connection");
  node.dataset.state = status;
  node.textContent = { connecting: "Connecting…", connected: "Connected", reconnecting: "Reconnecting…" }[status];
  clearInterval(countdown);
  if (status !== "reconnecting" || !seconds) return;
  // The time to the next try counts down (the web app QA pass: it stood still), seen but not read
  // out each second by a screen reader (the status is a live region).
  const left = el("span", { "aria-hidden": "true" });
  node.append(left);
  const until = Date.now() + seconds * 1000;
  const tick = () => {
    left.textContent = ` (next try in ${Math.max(0, Math.ceil((until - Date.now()) / 1000))} s)`;
  };
  tick();
  countdown = setInterval(tick, 1000);
  // Not waiting out the delay (the web app QA pass: up to half a minute after the server was back).
  node.append(" ", el("button", { type: "button", class: "retry-now", onclick: () => queue?.retryNow() }, "Try now"));
}

// --- state from /register and from events ------------------------------------------------------

function loadState(registered) {
  state.registered = true;
  state.ownEmail = registered.email;
  state.isAdmin = Boolean(registered.is_admin);
  state.isGuest = Boolean(registered.is_guest);
  // Those deactivated too (named, not offered: is_active false), as in a conversation or a draft with
  // them (the drafts QA pass: "To someone unknown").
  const everyone = [...registered.realm_users, ...(registered.realm_non_active_users || []), ...(registered.cross_realm_bots || [])];
  state.users = new Map(everyone.map((u) => [u.user_id, u]));
  state.subs = new Map(registered.subscriptions.map((sub) => [sub.stream_id, sub]));
  const known = [...registered.subscriptions, ...(registered.unsubscribed || []), ...(registered.never_subscribed || [])];
  state.streams = new Map(known.map((channel) => [channel.stream_id, channelOf(channel)]));
  state.unread = new Map();
  for (const entry of registered.unread_msgs.streams) {
    for (const id of entry.unread_message_ids) state.unread.set(id, { streamId: entry.stream_id, topic: entry.topic });
  }
  for (const entry of registered.unread_msgs.pms) {
    for (const id of entry.unread_message_ids) state.unread.set(id, { dm: true, userId: entry.other_user_id });
  }
  for (const entry of registered.unread_msgs.huddles) {
    const place = dmPlace(entry.user_ids_string.split(",").map(Number).filter((id) => id !== state.ownUserId));
    for (const id of entry.unread_message_ids) state.unread.set(id, place);
  }
  state.groupDms = new Map();
  for (const conversation of registered.recent_private_conversations || []) {
    if (conversation.user_ids.length > 1) noteGroupDm(conversation.user_ids, conversation.max_message_id);
  }
  state.userTopics = new Map((registered.user_topics || []).map((t) => [topicKey(t.stream_id, t.topic_name), t.visibility_policy]));
  state.mutedUsers = new Set((registered.muted_users || []).map((muted) => muted.id));
  const namedGroups = (registered.realm_user_groups || []).filter((group) => !group.is_system_group && !group.deactivated);
  state.userGroups = new Map(namedGroups.map((group) => [group.id, group]));
  state.realmEmoji = registered.realm_emoji || {};
  state.presences = registered.presences || {};
  state.presenceDisabled = Boolean(registered.realm_presence_disabled);
  // Channels are offered to be created as the organization lets this person create them (the web
  // admin QA pass: the form was there, and its channel refused, for whom it does not).
  const createForm = $("#create-channel");
  if (createForm) {
    createForm.hidden = !registered.can_create_public_streams && !registered.can_create_private_streams;
    const privateBox = $("#new-channel-private"); // its default too, which the form's reset restores
    privateBox.defaultChecked = privateBox.checked = !registered.can_create_public_streams;
    privateBox.disabled = !registered.can_create_public_streams || !registered.can_create_private_streams;
  }
  state.emptyTopicName = registered.realm_empty_topic_display_name || state.emptyTopicName;
  state.offlineAfter = registered.server_presence_offline_threshold_seconds || 200;
  state.pingEvery = registered.server_presence_ping_interval_seconds || 60;
  state.maxUploadMiB = registered.max_file_upload_size_mib ?? null;
  state.maxAvatarMiB = registered.max_avatar_file_size_mib ?? null;
  periods.startedWait = registered.server_typing_started_wait_period_milliseconds ?? periods.startedWait;
  periods.stoppedWait = registered.server_typing_stopped_wait_period_milliseconds ?? periods.stoppedWait;
  periods.startedExpiry = registered.server_typing_started_expiry_period_milliseconds ?? periods.startedExpiry;
  allowed.direct = registered.user_settings?.send_private_typing_notifications !== false;
  allowed.stream = registered.user_settings?.send_stream_typing_notifications !== false;
  loadNotificationSettings(registered.user_settings);
  renderSidebar();
  loadDrafts(registered);
  renderComposeChannels();
  restoreDraft();
  showView(); // the view may have changed while the page was away
}

// Where an unread message counts: its channel and topic, or the direct messages (with one person:
// theirs too).
function unreadPlace(message) {
  if (message.type === "stream") return { streamId: message.stream_id, topic: message.subject };
  const others = message.display_recipient.filter((person) => person.id !== state.ownUserId);
  return dmPlace(others.map((person) => person.id));
}

// A direct message's place: with one person (theirs), or a group conversation (its key).
function dmPlace(others) {
  if (others.length === 1) return { dm: true, userId: others[0] };
  return others.length ? { dm: true, group: groupKey(others) } : { dm: true };
}

// A message marked unread again (from another client): it counts where its details say (Zulip's
// message_details), or where the shown message is.
function markedUnread(id, details) {
  const message = state.messages.get(id);
  if (message) {
    state.unread.set(id, unreadPlace(message));
  } else if (details?.type === "stream") {
    state.unread.set(id, { streamId: details.stream_id, topic: details.topic });
  } else if (details) {
    state.unread.set(id, dmPlace((details.user_ids || []).filter((userId) => userId !== state.ownUserId)));
  }
}

const handlers = {
  message(event) {
    const message = { ...event.message, flags: event.flags || [] };
    if (!message.flags.includes("read")) {
      state.unread.set(message.id, unreadPlace(message));
    }
    if (message.type === "stream" && state.view.streamId === message.stream_id) addTopic(message.subject, message.id);
    if (message.type === "private" && message.display_recipient.length > 2) {
      noteGroupDm(message.display_recipient.map((person) => person.id), message.id);
    }
    messageArrived(message);
    if (state.view.kind === "search") appendIfMatching(message);
    else if (viewShows(state.view, message, state.ownUserId)) appendMessage(message);
    renderCounts();
  },
  update_message(event) {
    const ids = event.message_ids || [event.message_id];
    if (isMove(event)) {
      followMove(event);
      // Unread messages moved count where they are now.
      for (const id of ids) {
        const place = state.unread.get(id);
        if (!place || place.dm) continue;
        state.unread.set(id, { streamId: event.new_stream_id ?? place.streamId, topic: event.subject ?? place.topic });
      }
      renderCounts();
      showView(); // moved: the view's content changes
      return;
    }
    for (const id of ids) {
      const message = state.messages.get(id);
      if (!message || event.rendered_content === undefined) continue;
      message.content = event.rendered_content;
      message.last_edit_timestamp = event.edit_timestamp;
      rerender(message);
    }
  },
  delete_message(event) {
    for (const id of event.message_ids || [event.message_id]) {
      if (state.editing === id) {
        stopEditing();
        setComposeStatus("The message you were editing was deleted.");
      }
      state.unread.delete(id);
      state.messages.delete(id);
      document.getElementById(`message-${id}`)?.remove();
    }
    // The channel's topics again from the server: a topic whose last message went is no longer
    // listed (the web app QA pass: it stayed until a reload).
    if (event.message_type === "stream" && event.stream_id === state.view.streamId && !isArchived(event.stream_id)) {
      loadTopics(event.stream_id).catch(() => {});
    }
    renderCounts();
  },
  reaction(event) {
    const message = state.messages.get(event.message_id);
    if (!message) return;
    const same = (r) => r.user_id === event.user_id && r.emoji_code === event.emoji_code && r.reaction_type === event.reaction_type;
    message.reactions = (message.reactions || []).filter((r) => !same(r));
    if (event.op === "add") {
      const { emoji_name, emoji_code, reaction_type, user_id } = event;
      message.reactions.push({ emoji_name, emoji_code, reaction_type, user_id });
    }
    rerender(message);
  },
  update_message_flags(event) {
    const ids = event.all ? [...state.messages.keys()] : event.messages;
    if (event.flag === "read" && event.all && event.op === "add") state.unread.clear();
    if (event.flag === "starred" && state.view.kind === "starred" && !state.loading) {
      showView(); // the starred messages changed
      return;
    }
    for (const id of ids) {
      if (event.flag === "read") {
        if (event.op === "add") state.unread.delete(id);
        else markedUnread(id, event.message_details?.[id] ?? event.message_details?.[String(id)]);
      }
      const message = state.messages.get(id);
      if (!message) continue;
      const flags = new Set(message.flags);
      if (event.op === "add") flags.add(event.flag);
      else flags.delete(event.flag);
      message.flags = [...flags];
      if (event.flag === "read") markShown(message);
      else rerender(message);
    }
    renderCounts();
  },
  subscription(event) {
    if (event.op === "add") {
      for (const sub of event.subscriptions) {
        state.subs.set(sub.stream_id, sub);
        state.streams.set(sub.stream_id, channelOf(sub));
      }
    } else if (event.op === "remove") for (const sub of event.subscriptions) state.subs.delete(sub.stream_id);
    else if (event.op === "update" && state.subs.has(event.stream_id)) {
      const sub = state.subs.get(event.stream_id);
      sub[event.property] = event.value;
      if (event.property === "in_home_view") sub.is_muted = !event.value; // Zulip's older name, inverted
      if (["is_muted", "in_home_view"].includes(event.property) && state.view.kind === "feed") showView();
    }
    renderSidebar();
    renderComposeChannels();
    showTitle(state.view);
    if (!$("#channel-browser").hidden) renderChannelBrowser();
    if (event.op === "add" && event.subscriptions.some((sub) => sub.stream_id === state.openWhenSubscribed)) {
      window.location.hash = hashFor({ kind: "channel", streamId: state.openWhenSubscribed });
      state.openWhenSubscribed = null;
    }
    const shownLeft = event.op === "remove" && event.subscriptions.some((sub) => sub.stream_id === state.view.streamId);
    if (shownLeft && state.streams.get(state.view.streamId)?.invite_only) {
      // No longer subscribed to the private channel shown: nothing more can be read or written there.
      window.location.hash = hashFor({ kind: "feed" });
      setComposeStatus("You are no longer subscribed to that channel.");
    } else if (shownLeft) presetCompose(state.view); // a public one stays shown, as one visits it (Subscribe)
  },
  stream(event) {
    if (event.op === "create") {
      for (const channel of event.streams) state.streams.set(channel.stream_id, channelOf(channel));
    } else if (event.op === "delete") {
      // A private channel the user was removed from (the page has the archived_channels capability:
      // archiving is an update): gone from the sidebar and from the box's channels; the view of one
      // goes back to the feed.
      for (const { stream_id: id } of event.streams) {
        const name = ctx.streamName(id);
        state.subs.delete(id);
        state.streams.delete(id);
        if (state.view.streamId === id) {
          window.location.hash = hashFor({ kind: "feed" });
          setComposeStatus(`#${name} is no longer available: nothing more can be sent to it.`);
        }
      }
      renderSidebar();
      renderComposeChannels();
    } else if (event.op === "update") {
      const known = state.streams.get(event.stream_id);
      if (known && event.property in known) known[event.property] = event.value;
      const sub = state.subs.get(event.stream_id);
      if (sub && event.property in sub) sub[event.property] = event.value;
      if (event.property === "name") {
        renderSidebar();
        renderComposeChannels();
        presetCompose(state.view);
        showTitle(state.view);
        // The "#channel › topic" lines of a mixed view name it anew.
        for (const message of state.messages.values()) if (message.stream_id === event.stream_id) rerender(message);
      } else if (event.property === "is_archived") {
        // Archived (or back): out of the sidebar and the box's channels; its view stays, to read.
        renderSidebar();
        renderComposeChannels();
        showTitle(state.view);
        if (state.view.streamId === event.stream_id) presetCompose(state.view);
        // Back while a draft waited unaddressed in its view: addressed to it again (the web app QA
        // pass: the box stayed on "Choose where it goes").
        const select = $("#compose-channel");
        if (!event.value && state.view.streamId === event.stream_id && select.value === "") {
          select.value = String(event.stream_id);
          toggleComposeFields();
          keepDraft();
        }
      }
    }
    if (!$("#channel-browser").hidden) renderChannelBrowser();
  },
  // Muting and unmuting (from here or elsewhere): the counts, and the view if it shows the topic or person.
  user_topic(event) {
    state.userTopics.set(topicKey(event.stream_id, event.topic_name), event.visibility_policy);
    renderTopics(); // and the counts
    showTitle(state.view);
    if (["feed", "channel"].includes(state.view.kind)) showView();
  },
  typing: onTypingEvent,
  // The writer's own settings: whether others are told that they are typing.
  user_settings(event) {
    notificationSettingChanged(event.property, event.value);
    if (event.property === "send_private_typing_notifications") allowed.direct = event.value;
    if (event.property === "send_stream_typing_notifications") allowed.stream = event.value;
    // Turned off, the server deleted the drafts it kept; on, it keeps what the box holds from now.
    if (event.property === "enable_drafts_synchronization") {
      state.syncDrafts = event.value;
      if (!event.value) {
        for (const id of state.drafts.keys()) draftsChanged({ op: "remove", draft_id: id });
      } else {
        syncDraft();
      }
      renderDrafts();
    }
  },
  drafts: draftsChanged,
  muted_users(event) {
    state.mutedUsers = new Set(event.muted_users.map((muted) => muted.id));
    if (!$("#settings").hidden) renderMutedPeople();
    renderWriting();
    showTitle(state.view);
    for (const message of state.messages.values()) rerender(message);
  },
  // A poll's vote or option, a to-do list's task: the widget drawn again.
  submessage(event) {
    const message = state.messages.get(event.message_id);
    if (!message) return;
    const { msg_type, content, message_id, sender_id, submessage_id: id } = event;
    message.submessages = [...(message.submessages || []), { msg_type, content, message_id, sender_id, id }];
    rerender(message);
  },
  // The organization's presence turned off or on: the people list shows who is online, or not.
  realm(event) {
    if (event.op === "update" && event.property === "presence_disabled") {
      state.presenceDisabled = event.value;
      renderPeople();
    }
    // Renamed: the header and the tab's title at once, as Zulip's (the web admin QA pass: at the next
    // reload only).
    if (event.op === "update" && event.property === "name") {
      $(".realm-name").textContent = event.value;
      document.title = titleWithCount(`${viewTitle(state.view)} · ${event.value}`);
    }
    if (event.op === "update" && $("#organization")) organizationChanged(event.property, event.value);
  },
  // Someone's invitations changed (made, revoked, accepted): the panel listing them shows them anew.
  invites_changed() {
    if ($("#invite") && !$("#invite").hidden) renderInvitations();
  },
  // A custom emoji added, or its picture changed: reactions with it show it.
  realm_emoji(event) {
    state.realmEmoji = event.realm_emoji;
    for (const message of state.messages.values()) if (message.reactions?.length) rerender(message);
  },
  presence(event) {
    Object.assign(state.presences, event.presences || {});
    renderPeople();
  },
  // The groups mention suggestions offer (apps.groups: without include_deactivated_groups, a
  // deactivated group is removed).
  user_group(event) {
    if (event.op === "add" && !event.group.is_system_group) state.userGroups.set(event.group.id, event.group);
    else if (event.op === "remove") state.userGroups.delete(event.group_id);
    else if (event.op === "update" && state.userGroups.has(event.group_id)) Object.assign(state.userGroups.get(event.group_id), event.data);
  },
  realm_user(event) {
    const person = event.person;
    if (event.op === "add") state.users.set(person.user_id, person);
    else if (event.op === "remove") state.users.delete(person.user_id);
    else if (event.op === "update" && state.users.has(person.user_id)) {
      if (person.user_id === state.ownUserId && person.role !== undefined) ownRoleChanged(person.role);
      Object.assign(state.users.get(person.user_id), person);
      if (person.user_id === state.ownUserId && person.full_name) {
        me.textContent = person.full_name;
        $("#settings-name").value = person.full_name;
      }
      if (person.full_name) {
        // Everywhere the name shows: as sender, in recipient lines, among voters and reactions (the
        // web app QA pass: only their own messages changed), and in the view's title.
        for (const message of state.messages.values()) {
          if (message.sender_id === person.user_id) message.sender_full_name = person.full_name;
          rerender(message);
        }
        showTitle(state.view);
      }
      if (person.avatar_url) {
        for (const img of document.querySelectorAll(`img.avatar[data-user-id="${person.user_id}"]`)) img.src = person.avatar_url;
      }
    }
    renderCounts(); // the people, and the group conversations they are named in
    peopleChanged(); // the organization's panel, if open
  },
};

// Someone made this person's role another (the web admin QA pass: what an administrator is offered
// came only with a reload): what the page was drawn with for the old role (the organization's
// settings, the roles one may invite as, creating channels) is the new role's once the page is
// reloaded, which the notice offers (it is not done unasked: a message being edited would be lost).
// Administration no longer allowed closes at once.
function ownRoleChanged(role) {
  state.isAdmin = role <= 200; // owner, administrator
  state.isGuest = role === 600;
  if (!state.isAdmin && $("#organization")) {
    if (!$("#organization").hidden) closePanel($("#organization"));
    $("#open-organization").hidden = true;
  }
  const name = ROLE_NAMES.get(role) ?? role;
  $("#notice-text").textContent = `Your role is now ${name}: reload the page to see what it lets you do.`;
  $("#notice").hidden = false;
}

// A whole topic moved (or renamed) elsewhere, as Zulip's web app follows it: the view of it goes
// where it went, and so does the message box addressed to it.
function followMove(event) {
  if (event.propagate_mode !== "change_all" || event.orig_subject === undefined) return;
  const to = { streamId: event.new_stream_id ?? event.stream_id, topic: event.subject ?? event.orig_subject };
  const same = (streamId, topic) => streamId === event.stream_id && topic.toLowerCase() === event.orig_subject.toLowerCase();
  if (Number($("#compose-channel").value) === event.stream_id && same(event.stream_id, $("#compose-topic").value)) {
    renderComposeChannels();
    $("#compose-channel").value = String(to.streamId);
    $("#compose-topic").value = to.topic;
    keepDraft();
  }
  if (state.view.kind === "topic" && same(state.view.streamId, state.view.topic)) {
    window.location.hash = hashFor({ kind: "topic", ...to });
  }
}

// Messages arriving while a search is shown: shown if the server says the search matches them.
// Those that arrive while the server is asked, or within a second of the last question, wait and
// are asked about together: at most one request a second (the web app QA pass: a request a
// message, a busy channel used up the rate limit, and the page could load nothing more for
// seconds). Refused for a while (429), they are asked again.
const matchQueue = { waiting: [], asking: false }; // waiting: [message, the view's token]

async function appendIfMatching(message) {
  matchQueue.waiting.push([message, viewToken]);
  if (matchQueue.asking) return;
  matchQueue.asking = true;
  for (;;) {
    const token = viewToken;
    const batch = matchQueue.waiting.splice(0).flatMap(([m, itsView]) => (itsView === token ? [m] : []));
    if (!batch.length) break;
    const narrow = narrowOf(state.view);
    let wait = new Promise((resolve) => setTimeout(resolve, 1000));
    try {
      const body = await api("GET", "/messages/matches_narrow", { msg_ids: batch.map((m) => m.id), narrow });
      if (token === viewToken) for (const m of batch) if (String(m.id) in body.messages) appendMessage(m);
    } catch (error) {
      console.warn("search:", error);
      if (error.status === 429 && error.retryAfter) {
        matchQueue.waiting.unshift(...batch.map((m) => [m, token]));
        wait = new Promise((resolve) => setTimeout(resolve, error.retryAfter * 1000));
      }
    }
    await wait;
  }
  matchQueue.asking = false;
}

// Changes to messages that arrive while a view's messages load are applied again once they are
// drawn: the answer may predate them (the handlers apply a change twice harmlessly).
// (A move draws the view again by itself.)
const REPLAYED_WHILE_LOADING = new Set(["update_message", "delete_message", "reaction", "update_message_flags"]);
const isMove = (event) => event.type === "update_message" && (event.new_stream_id !== undefined || event.subject !== undefined);

function onEvents(events) {
  for (const event of events) {
    if (state.loading && REPLAYED_WHILE_LOADING.has(event.type) && !isMove(event)) state.loading.push(event);
    handlers[event.type]?.(event);
  }
  // One's own channels changed (not others' memberships: peer_add, peer_remove).
  const ownChannels = (event) => event.type === "stream" || (event.type === "subscription" && !event.op.startsWith("peer_"));
  if (events.some(ownChannels)) inviteChannelsChanged();
  channelSettingsEvents(events);
}

// --- the view: a narrow's messages -------------------------------------------------------------

// The view's title, its names isolated from the text around them: nodes (`asNodes`, for the page's
// heading), or text between Unicode's isolates (for the tab's title; the verify QA pass).
const isolated = (text) => `\u2068${text}\u2069`;
function viewTitle(view, { asNodes = false } = {}) {
  const name = asNodes ? bdi : isolated;
  const parts = (() => {
    switch (view.kind) {
      case "channel":
        return channelTitle(view.streamId, name);
      case "topic":
        return [...channelTitle(view.streamId, name), " › ", name(view.topic)];
      case "dms":
        return ["Direct messages"];
      case "dm": {
        const names = view.userIds.map((id) => ctx.userName(id));
        return ["Direct messages with ", ...(asNodes ? listed(names) : [names.map(isolated).join(", ")])];
      }
      case "starred":
        return ["Starred messages"];
      case "search":
        return ["Search: ", name(view.query)];
      default:
        return ["Combined feed"];
    }
  })();
  return asNodes ? parts : parts.join("");
}

function channelTitle(id, name) {
  return ["#", name(ctx.streamName(id) || "unknown channel"), isArchived(id) ? " (archived)" : ""];
}

function showTitle(view) {
  $("#narrow-title").replaceChildren(...viewTitle(view, { asNodes: true }));
  // A channel shown: one button to subscribe to it or to leave it (not an archived one: as Zulip's,
  // it takes no subscribers, and its subscriptions are kept).
  const button = $("#unsubscribe");
  button.hidden = !(view.streamId && ctx.streamName(view.streamId)) || isArchived(view.streamId);
  button.textContent = state.subs.has(view.streamId) ? "Unsubscribe" : "Subscribe";
  $("#open-channel-settings").hidden = !(view.streamId && ctx.streamName(view.streamId));
  // A channel subscribed to shown: muting it; a topic shown: muting it; a conversation with one
  // other person: muting them.
  const sub = view.kind === "channel" && !isArchived(view.streamId) ? state.subs.get(view.streamId) : null;
  const muteChannel = $("#mute-channel");
  muteChannel.hidden = !sub;
  if (sub) muteChannel.textContent = sub.is_muted ? "Unmute channel" : "Mute channel";
  const muteTopic = $("#mute-topic");
  muteTopic.hidden = view.kind !== "topic" || !ctx.streamName(view.streamId);
  if (view.kind === "topic") muteTopic.textContent = topicPolicy(view.streamId, view.topic) === 1 ? "Unmute topic" : "Mute topic";
  // Renaming the whole topic: offered to those the channel lets post; the server says who may.
  $("#rename-topic").hidden = view.kind !== "topic" || !state.subs.has(view.streamId) || isArchived(view.streamId);
  const other = view.kind === "dm" && view.userIds.length === 1 && view.userIds[0] !== state.ownUserId ? view.userIds[0] : null;
  const mutePerson = $("#mute-person");
  mutePerson.hidden = other === null;
  if (other !== null) mutePerson.textContent = `${state.mutedUsers.has(other) ? "Unmute" : "Mute"} ${ctx.userName(other)}`;
  document.title = titleWithCount(`${viewTitle(view)} · ${$(".realm-name").textContent}`);
}

let viewToken = 0;

// The operators of a view for the server (a search's names of people as their emails).
const narrowOf = (view) => narrowFor(view, { ownEmail: state.ownEmail, people: state.users });

async function showView() {
  // A link to the settings (#settings, #settings/notifications) opens them over the combined feed.
  const settingsLink = window.location.hash.match(/^#settings(?:\/([\w-]+))?/);
  if (settingsLink) window.history.replaceState(null, "", "#feed");
  const view = (state.view = viewFromHash(window.location.hash, state.ownUserId));
  if (view.streamName !== undefined && !state.streams.has(view.streamId)) {
    // A link naming its channel by name alone (Zulip's older links; the web app QA pass): the channel
    // of that name this page knows of, as Zulip's own app finds it.
    const wanted = view.streamName.toLowerCase();
    const found = [...state.streams].find(([, channel]) => channel.name.toLowerCase() === wanted);
    if (found) view.streamId = found[0];
  }
  const token = ++viewToken;
  state.viewFailed = false;
  showTitle(view);
  renderWriting();
  $("#search").value = view.kind === "search" ? view.query : "";
  for (const panel of panels()) panel.hidden = true; // the invitations' and the organization's too
  if (settingsLink) openSettings(settingsLink[1]);

  renderSidebar();
  clearStatusOfOtherView();
  presetCompose(view);
  state.messages = new Map(); // the view starts empty: events fill it while its messages load
  state.loading = [];
  state.foundOldest = false;
  state.foundNewest = false;
  state.loadingOlder = false;
  state.loadingNewer = false;
  readObserver.disconnect();
  watched.clear();
  unreadAgain.clear();
  keptUnread.clear();
  onScreen.clear();
  seenMeanwhile.clear();
  $("#messages").replaceChildren();
  showEmpty(null);
  showToNewest();
  showLoadOlder();
  const narrow = narrowOf(view);
  // A link to a message opens around it; any other view at its newest messages.
  const around = view.anchor ? { anchor: view.anchor, num_before: 50, num_after: 50 } : null;
  const params = { ...(around ?? { anchor: "newest", num_before: 100, num_after: 0 }), narrow, apply_markdown: true };
  let body;
  try {
    // An archived channel's topics are not listed by the server (as Zulip's): those of its messages
    // shown are (addTopic below).
    const topics = view.streamId && !isArchived(view.streamId) ? loadTopics(view.streamId) : clearTopics();
    [body] = await Promise.all([api("GET", "/messages", params), topics]);
  } catch (error) {
    if (token !== viewToken) return;
    state.loading = null;
    state.messages = new Map();
    $("#messages").replaceChildren();
    // A search the server refuses: why, said plainly where the page can tell.
    const problem = view.kind === "search" && error.status === 400 && searchProblem(narrow, { people: state.users, channels: state.streams });
    showEmpty(problem || `These messages cannot be shown: ${error.message}`);
    // What passes is tried again: a rate limit when it says, the server unreachable or failing once
    // the connection is back (the web app QA pass: the error stayed until the page was reloaded).
    if (error.status === 429 && error.retryAfter) {
      setTimeout(() => token === viewToken && showView(), error.retryAfter * 1000);
    } else state.viewFailed = error.status === 0 || error.status >= 500;
    return;
  }
  if (token !== viewToken) return; // another view was chosen meanwhile
  // Messages that arrived by event while the view loaded are kept (the answer may predate them),
  // as are the items already drawn for them (a spoiler opened meanwhile stays open); unless newer
  // ones are still to load (a view opened around a message): they come in their turn.
  const shown = new Map(body.messages.map((m) => [m.id, m]));
  const lastLoaded = Math.max(0, ...shown.keys());
  for (const [id, m] of state.messages) if (body.found_newest || id < lastLoaded) shown.set(id, m);
  const ordered = [...shown.values()].sort((a, b) => a.id - b.id);
  state.messages = new Map(ordered.map((m) => [m.id, m]));
  $("#messages").replaceChildren(...ordered.map((m) => document.getElementById(`message-${m.id}`) ?? shownItem(m)));
  if (view.streamId && isArchived(view.streamId)) for (const m of ordered) addTopic(m.subject, m.id);
  const changes = state.loading;
  state.loading = null;
  state.foundOldest = body.found_oldest;
  state.foundNewest = body.found_newest;
  for (const event of changes) handlers[event.type](event);
  showEmpty(ordered.length ? null : view.kind === "search" ? "No messages match this search." : "No messages here yet.");
  scrollToStart(view);
  showToNewest();
  showLoadOlder();
  showMarkRead();
  loadNewer(); // what is shown may not fill the screen
}

// Scrolled to the top: the view's older messages, a page at a time, drawn above the reader's place.
// In one column (a phone) the page scrolls on past them to the sidebar, search and settings: there
// they load with a button (the web app QA pass: each time the top was reached, 100 more loaded
// and kept the reader's place, and the sidebar was out of reach).
async function loadOlder({ asked = false } = {}) {
  const list = $("#messages");
  if (!asked && (oneColumn() || aboveFirstMessage() < -200)) return;
  if (state.loading || state.loadingOlder || state.foundOldest || !state.messages.size) return;
  const body = await fetchPage("loadingOlder", Math.min(...state.messages.keys()), 100, 0);
  if (!body) return;
  state.foundOldest = body.found_oldest;
  showLoadOlder();
  const older = body.messages.filter((m) => !state.messages.has(m.id));
  if (!older.length) return;
  const box = scroller();
  const fromBottom = box.scrollHeight - box.scrollTop;
  state.messages = new Map([...older.map((m) => [m.id, m]), ...state.messages]);
  list.prepend(...older.map(shownItem));
  box.scrollTop = box.scrollHeight - fromBottom; // the reader keeps their place
}

const MAX_TOPIC_LENGTH = 60; // Zulip's max_topic_length, as the message box's topic field takes

// The topic shown, renamed with all its messages (Zulip's "change_all" move, the new topic told of
// it by the Notification Bot, as Zulip's default); the view follows it (followMove).
async function renameTopic() {
  const { streamId, topic } = state.view;
  const name = window.prompt(`Rename the topic "${topic}" (all its messages) to:`, topic)?.trim();
  if (!name || name === topic) return; // cancelled, or nothing to rename to
  if (name.length > MAX_TOPIC_LENGTH) {
    setComposeStatus(`Not renamed: a topic name has at most ${MAX_TOPIC_LENGTH} characters.`);
    return;
  }
  const known = state.topics.find((t) => t.name.toLowerCase() === topic.toLowerCase());
  const inTopic = (m) => m.stream_id === streamId && m.subject.toLowerCase() === topic.toLowerCase();
  const anyId = known?.max_id ?? [...state.messages.values()].find(inTopic)?.id;
  if (anyId === undefined) return;
  const move = { topic: name, propagate_mode: "change_all", send_notification_to_old_thread: false };
  try {
    await api("PATCH", `/messages/${anyId}`, move);
  } catch (error) {
    // The server speaks of the one message it was asked to move (the topic's others with it).
    const refused = error.message === "You don't have permission to edit this message";
    setComposeStatus(`Not renamed: ${refused ? "you may not move this topic's messages." : error.message}`);
  }
}

async function loadTopics(streamId) {
  const body = await api("GET", `/users/me/${streamId}/topics`);
  state.topics = body.topics;
  renderTopics();
}

function clearTopics() {
  state.topics = [];
  renderTopics();
}

function showEmpty(text) {
  $("#empty").hidden = !text;
  $("#empty").textContent = text || "";
}

// What scrolls the messages: their list, or (one column, on a phone or at 200% zoom) the page.
function scroller() {
  const list = $("#messages");
  return getComputedStyle(list).overflowY === "visible" ? document.scrollingElement : list;
}

const oneColumn = () => scroller() === document.scrollingElement;

function showLoadOlder() {
  $("#load-older").hidden = !oneColumn() || state.foundOldest || !state.messages.size || Boolean(state.loading);
}

// At the bottom, give or take 80 pixels (and `grown`: what was just added below).
function nearBottom(grown = 0) {
  const box = scroller();
  return box.scrollHeight - box.scrollTop - box.clientHeight < 80 + grown;
}

function scrollToBottom() {
  const box = scroller();
  box.scrollTop = box.scrollHeight;
}

// New messages, the reader at the bottom: down to them, but no further than keeps the first unread
// one not yet seen in sight, at the top, as Zulip's autoscroll (the web app QA pass: a burst taller
// than the screen scrolled its first messages away before they showed, and they stayed unread).
function followNewest() {
  const box = scroller();
  const top = box === document.scrollingElement ? 0 : box.getBoundingClientRect().top;
  let stop = box.scrollHeight;
  // On screen while the page was hidden is not seen (the web app QA pass: those passed unread).
  const visible = document.visibilityState === "visible";
  for (const item of watched) {
    const id = Number(item.dataset.messageId);
    if (!item.isConnected || (visible && onScreen.has(id)) || seenMeanwhile.has(id) || state.markingRead.has(id)) continue;
    const offset = item.getBoundingClientRect().top - top;
    if (offset >= -1) stop = Math.min(stop, box.scrollTop + offset); // above the screen: passed by its reader
  }
  box.scrollTop = stop;
}

// A view opens at the message its link names (marked), else where its reader left off, as in
// Zulip: at its first unread message shown (at the top), else at its newest.
function scrollToStart(view) {
  const target = view.anchor && [...state.messages.values()].find((m) => m.id >= view.anchor);
  if (target) {
    const item = document.getElementById(`message-${target.id}`);
    item?.classList.add("target");
    item?.scrollIntoView({ block: "center" });
    return;
  }
  // The first unread message shown (one of a muted topic is hidden here: the web app QA pass, the
  // view stayed at its top).
  const first = [...state.messages.values()].find((m) => !m.flags.includes("read") && !mutedHere(m));
  if (first) document.getElementById(`message-${first.id}`)?.scrollIntoView({ block: "start" });
  else scrollToBottom();
}

// Scrolled to the bottom of a view opened around a message: its newer messages, a page at a time.
// Messages arriving meanwhile wait for their turn (they may be newer than what comes).
async function loadNewer() {
  if (state.foundNewest || state.loading || state.loadingNewer || !state.messages.size || !nearBottom()) return;
  state.arrivedMeanwhile = [];
  const body = await fetchPage("loadingNewer", Math.max(...state.messages.keys()), 0, 100);
  if (!body) return;
  state.foundNewest = body.found_newest;
  // A message that arrived meanwhile may be in the answer too: drawn once (the PostgreSQL e2e run).
  const byId = new Map([...body.messages, ...(state.foundNewest ? state.arrivedMeanwhile : [])].map((m) => [m.id, m]));
  const newer = [...byId.values()].filter((m) => !state.messages.has(m.id)).sort((a, b) => a.id - b.id);
  for (const m of newer) state.messages.set(m.id, m);
  $("#messages").append(...newer.map(shownItem));
  loadNewer();
}

// A page of the view's messages before or after `anchor` (the state's `flag` is true meanwhile);
// null when it failed or another view was chosen meanwhile.
async function fetchPage(flag, anchor, numBefore, numAfter) {
  const token = viewToken;
  const narrow = narrowOf(state.view);
  const params = { anchor, num_before: numBefore, num_after: numAfter, include_anchor: false, narrow, apply_markdown: true };
  state[flag] = true;
  try {
    const body = await api("GET", "/messages", params);
    return token === viewToken ? body : null;
  } catch (error) {
    console.warn(`${flag}:`, error);
    return null;
  } finally {
    if (token === viewToken) state[flag] = false;
  }
}

function onScroll() {
  watchUnreadAgain();
  if (nearBottom() && $("#compose-status").textContent === SENT_BELOW) setComposeStatus("");
  showToNewest();
  showLoadOlder();
  loadOlder();
  loadNewer();
}

// Messages below the screen (the view stopped at the first unseen one, or the reader scrolled up):
// one button down to the newest, as Zulip's.
function showToNewest() {
  $("#to-newest").hidden = nearBottom() || !state.messages.size;
}

// How far the reader is above the first shown message (negative: below it).
function aboveFirstMessage() {
  const list = $("#messages");
  const box = scroller();
  return box === list ? -list.scrollTop : list.getBoundingClientRect().top;
}

function appendMessage(message) {
  if (state.messages.has(message.id)) return;
  if (!state.loading && !state.foundNewest) {
    if (state.loadingNewer) state.arrivedMeanwhile.push(message);
    return; // not shown yet: newer messages are still to load, it comes with them
  }
  const stick = nearBottom();
  state.messages.set(message.id, message);
  const item = shownItem(message);
  // In the order of ids, as Zulip's: messages sent at once by several people can arrive out of it
  // (the web app QA pass: two people saw one conversation in two orders, until a reload).
  let before = $("#messages").lastElementChild;
  while (before && Number(before.dataset.messageId) > message.id) before = before.previousElementSibling;
  if (before) before.after(item);
  else $("#messages").prepend(item);
  showEmpty(null);
  // Someone reading older messages keeps their place.
  if (stick) {
    followNewest();
    // Its pictures take their height once loaded: still at the bottom, it stays in full sight (the
    // web app QA pass: a picture sent was cut off).
    for (const img of item.querySelectorAll("img")) {
      if (!img.complete) img.addEventListener("load", () => nearBottom(img.height) && followNewest(), { once: true });
    }
  }
  // One's own message out of sight below (scrolled up, or unread ones first): said so, as in Zulip.
  if (message.sender_id === state.ownUserId && belowTheScreen(item)) setComposeStatus(SENT_BELOW);
  showToNewest();
}

const SENT_BELOW = "Sent! Scroll down to see your message.";

function belowTheScreen(item) {
  const box = scroller();
  const end = box === document.scrollingElement ? $("#compose").getBoundingClientRect().top : box.getBoundingClientRect().bottom;
  return item.getBoundingClientRect().top >= end - 8;
}

// A message drawn again (a reaction, a flag, an edit, a vote) keeps the spoilers its reader opened,
// what they were typing in a poll's or a to-do list's field (and its mark, the message a link named).
function rerender(message) {
  const shown = document.getElementById(`message-${message.id}`);
  if (!shown) return;
  const opened = [...shown.querySelectorAll("details.spoiler")].map((details) => details.open);
  const again = unreadAgain.delete(shown);
  const item = again ? messageItem(message, ctx) : shownItem(message);
  if (again) unreadAgain.add(item);
  item.querySelectorAll("details.spoiler").forEach((details, index) => {
    details.open = opened[index] ?? false;
  });
  for (const mark of ["target", "editing"]) if (shown.classList.contains(mark)) item.classList.add(mark);
  const typing = shown.querySelector(".widget-add input");
  const typed = item.querySelector(".widget-add input");
  if (typing && typed) typed.value = typing.value;
  // A keyboard user keeps their place: the button focused in the old item is focused in the new. The
  // message is focused first: on a touch screen its buttons are there only while it has the focus
  // (the web app QA pass: they went away at each press, the focus lost to the page).
  const active = shown.contains(document.activeElement) ? document.activeElement : null;
  const focused = active?.closest("button[data-action]");
  stopWatching(shown);
  shown.replaceWith(item);
  if (active === typing) typed?.focus();
  else if (active) {
    item.focus({ preventScroll: true });
    if (focused) {
      const { action, emojiName, key } = focused.dataset;
      // The same kind of button too: a quick reaction is not its reaction under the message (the
      // web app QA pass: Enter on the quick 👍 moved the focus to the new "+1" reaction).
      const same = [...item.querySelectorAll(`button[data-action="${action}"]`)].find(
        (b) => b.className === focused.className && b.dataset.emojiName === emojiName && b.dataset.key === key,
      );
      same?.focus({ preventScroll: true });
    }
  }
}

// A message is read once it is on screen while the page is visible, as in Zulip (not when its view
// loads: a view holds up to 100 messages, most of them maybe never scrolled to). The server tells
// every tab, by event. On screen: half of it at least, or any of one taller than half the screen.
// In the one-column layout the message box stays at the bottom of the screen, over the messages:
// the screen ends where it begins (the web app QA pass: messages behind it were marked read).
const onScreen = new Set();
const seenMeanwhile = new Set(); // on screen since the last request (while visible), maybe gone by now
const watched = new Set(); // the unread items drawn, watched until they are read or gone
let covered = coveredByTheBox();
let readObserver = newReadObserver();

// How much of the bottom of the screen the message box covers (one column: it stays over the
// messages), which is not seen.
function coveredByTheBox() {
  const box = $("#compose");
  return getComputedStyle(box).position === "sticky" ? box.offsetHeight : 0;
}

function onIntersections(entries) {
  for (const entry of entries) {
    const id = Number(entry.target.dataset.messageId);
    const screen = entry.rootBounds?.height ?? window.innerHeight;
    const seen = entry.intersectionRatio >= 0.5 || (entry.isIntersecting && entry.boundingClientRect.height > screen / 2);
    if (seen && entry.target.isConnected) {
      onScreen.add(id);
      if (document.visibilityState === "visible") seenMeanwhile.add(id);
    } else onScreen.delete(id);
  }
  markShownAsRead();
}

function newReadObserver() {
  return new IntersectionObserver(onIntersections, { threshold: [0, 0.5], rootMargin: `0px 0px -${covered}px 0px` });
}

// The box grew (a longer message) or the layout changed: the screen's end is measured again, if it
// moved; what the observer saw meanwhile counts (dropped with it, messages scrolled past stayed
// unread: a CI run, as the "Newest" button came and went).
function watchReadingAgain() {
  const now = coveredByTheBox();
  if (now === covered) return;
  covered = now;
  onIntersections(readObserver.takeRecords());
  readObserver.disconnect();
  readObserver = newReadObserver();
  for (const item of watched) {
    if (item.isConnected) readObserver.observe(item);
    else watched.delete(item);
  }
}
new ResizeObserver(() => {
  watchReadingAgain();
  // What the page scrolls to (a focused field) stays above the box (app.css, one column).
  document.documentElement.style.setProperty("--compose-height", `${$("#compose").offsetHeight}px`);
}).observe($("#compose"));
window.addEventListener("resize", watchReadingAgain);

function stopWatching(item) {
  readObserver.unobserve(item);
  watched.delete(item);
}

function shownItem(message) {
  const item = messageItem(message, ctx);
  if (!mutedHere(message)) return watchUnread(item, message);
  item.hidden = true; // not seen, not read
  return item;
}

// Muted, as in Zulip: hidden in the combined feed (a muted topic, or one of a muted channel) and in a
// channel's view (a muted topic); shown in the topic's own view (the web app QA pass: muting changed
// nothing here, and there was no way to mute).
function mutedHere(message) {
  if (message.type !== "stream") return false;
  if (state.view.kind === "feed") return isMutedTopic(message.stream_id, message.subject);
  return state.view.kind === "channel" && topicPolicy(message.stream_id, message.subject) === 1;
}

function watchUnread(item, message) {
  if (!message.flags.includes("read")) {
    watched.add(item);
    readObserver.observe(item);
  }
  return item;
}

// Read, or unread again: its mark changes in place. Drawn again, a message being read (the moment
// one looks at it) would lose the click on its links and buttons that was under way (a CI run: a
// recipient line clicked as its message was read led nowhere).
function markShown(message) {
  const shown = document.getElementById(`message-${message.id}`);
  if (!shown) return;
  const unread = !message.flags.includes("read");
  shown.classList.toggle("unread", unread);
  shown.querySelector("button.read-toggle").textContent = readToggleLabel(message);
  if (unread) unreadAgain.add(shown);
  else {
    stopWatching(shown);
    unreadAgain.delete(shown);
  }
}

// Marked unread again (from another client: its reader means to come back to it), a message on
// screen is not read again at once, as in Zulip: only once its reader scrolls or comes back to the
// window (the web app QA pass: a desktop tab undid at once what the phone marked unread).
const unreadAgain = new Set();

// Marked unread by its reader here: it stays unread while the view is shown, as Zulip's "Mark as
// unread" stops reading it until another view.
const keptUnread = new Set();

// "Mark as read": every unread message of the view, loaded or not, a thousand at a time (Zulip's
// POST /messages/flags/narrow); the counts follow by event (the web app QA pass: there was no way
// but scrolling past each one).
async function markViewAsRead() {
  const button = $("#mark-read");
  const token = viewToken;
  const narrow = [...narrowOf(state.view), { operator: "is", operand: "unread" }];
  keptUnread.clear();
  button.disabled = true;
  try {
    let anchor = "oldest";
    while (token === viewToken) {
      const page = { anchor, include_anchor: anchor === "oldest", num_before: 0, num_after: 1000 };
      const body = await api("POST", "/messages/flags/narrow", { ...page, narrow, op: "add", flag: "read" });
      if (body.found_newest || body.last_processed_id === null) break;
      anchor = body.last_processed_id;
    }
  } catch (error) {
    setComposeStatus(`Not marked as read: ${error.message}`);
  } finally {
    button.disabled = false;
  }
}

function watchUnreadAgain() {
  for (const item of unreadAgain) {
    const message = state.messages.get(Number(item.dataset.messageId));
    if (item.isConnected && message) watchUnread(item, message);
  }
  unreadAgain.clear();
}

// At most one request a second, for what came on screen meanwhile, as Zulip's app (the web app QA
// pass: a busy channel sent one per message, and spent the rate limit of the page's own requests).
const READ_EVERY_MS = 1000;
let lastReadAt = 0;
let readTimer = null;

function markShownAsReadIn(ms) {
  if (readTimer === null) {
    readTimer = setTimeout(() => {
      readTimer = null;
      markShownAsRead();
    }, ms);
  }
}

async function markShownAsRead() {
  // As in Zulip, a search shows messages without reading them.
  if (document.visibilityState !== "visible" || state.view.kind === "search") return;
  const early = lastReadAt + READ_EVERY_MS - Date.now();
  if (early > 0) return markShownAsReadIn(early);
  const ids = [...new Set([...onScreen, ...seenMeanwhile])].filter((id) => {
    const message = state.messages.get(id);
    return message && !message.flags.includes("read") && !state.markingRead.has(id) && !keptUnread.has(id);
  });
  seenMeanwhile.clear();
  if (!ids.length) return;
  lastReadAt = Date.now();
  ids.forEach((id) => state.markingRead.add(id));
  try {
    await api("POST", "/messages/flags", { messages: ids, op: "add", flag: "read" });
  } catch (error) {
    // Not marked (the server unreachable, a rate limit): tried again, when the refusal says, those
    // gone from the screen meanwhile included.
    ids.forEach((id) => seenMeanwhile.add(id));
    markShownAsReadIn(Math.max(READ_EVERY_MS, (error.retryAfter ?? 0) * 1000));
  } finally {
    ids.forEach((id) => state.markingRead.delete(id));
  }
}

// --- message actions ---------------------------------------------------------------------------

// The user's reaction with this emoji added, or taken back if there. An emoji is its code and type,
// as Zulip tells reactions apart and its web app sends them (the picker QA pass: by name alone, a
// custom emoji named as a Unicode one was taken for it, and a deactivated custom emoji could not
// be voted for).
// A second click while the first is on its way does nothing (the web app QA pass: a double click
// sent both, and the second was refused, "Reaction already exists.").
const reactionsOnTheirWay = new Set();
async function toggleReaction(message, { name, code, type }) {
  const key = `${message.id} ${type} ${code}`;
  if (reactionsOnTheirWay.has(key)) return;
  const mine = (message.reactions || []).find(
    (r) => r.user_id === state.ownUserId && r.emoji_code === code && r.reaction_type === type,
  );
  const emoji = { emoji_name: mine?.emoji_name ?? name, emoji_code: code, reaction_type: type };
  reactionsOnTheirWay.add(key);
  try {
    await api(mine ? "DELETE" : "POST", `/messages/${message.id}/reactions`, emoji);
  } finally {
    reactionsOnTheirWay.delete(key);
  }
}

// What a message action that failed said, cleared by the next one (the picker QA pass: it stayed).
let actionError = "";
function showActionError(error) {
  actionError = error.message;
  setComposeStatus(actionError);
}

async function onMessageAction(event) {
  const button = event.target.closest("button[data-action]");
  if (!button) return;
  if (actionError && $("#compose-status").textContent === actionError) setComposeStatus("");
  const item = button.closest("li.message");
  const message = state.messages.get(Number(item.dataset.messageId));
  const action = button.dataset.action;
  try {
    if (action === "reveal") {
      reveal(message.id);
      rerender(message);
    } else if (action.startsWith("widget-")) {
      const change = widgetChange(message, button, state.ownUserId);
      if (change) {
        await api("POST", "/submessage", { message_id: message.id, msg_type: "widget", content: JSON.stringify(change) });
      }
    } else if (action === "toggle-star") {
      const starred = message.flags.includes("starred");
      await api("POST", "/messages/flags", { messages: [message.id], op: starred ? "remove" : "add", flag: "starred" });
    } else if (action === "toggle-reaction") {
      const { emojiName: name, emojiCode: code, reactionType: type } = button.dataset;
      await toggleReaction(message, { name, code, type });
    } else if (action === "pick-reaction") {
      if (emojiPickerOpenedBy(button)) closeEmojiPicker();
      else openEmojiPicker(button, (emoji) => toggleReaction(message, emoji).catch(showActionError));
    } else if (action === "toggle-read") {
      const read = message.flags.includes("read");
      if (read) keptUnread.add(message.id);
      else keptUnread.delete(message.id);
      await api("POST", "/messages/flags", { messages: [message.id], op: read ? "remove" : "add", flag: "read" });
    } else if (action === "quote") {
      const body = await api("GET", `/messages/${message.id}`, { apply_markdown: false });
      quoteInCompose(message, body.raw_content, `${window.location.origin}/${zulipLinkTo(message)}`);
    } else if (action === "edit") {
      await startEditing(message);
    } else if (action === "delete" && window.confirm("Delete this message?")) {
      await api("DELETE", `/messages/${message.id}`);
    }
  } catch (error) {
    showActionError(error);
  }
}

// --- channels, settings, search ----------------------------------------------------------------

// A panel opened (the channels' list, settings) is scrolled into sight: in one column (a phone) it is
// far below the top of the page, where its opener is.
// The panels: one at a time (the invitations' only for those who may invite, the organization's for
// administrators).
const panels = () =>
  ["#channel-browser", "#channel-settings", "#settings", "#invite", "#organization", "#drafts"].map($).filter(Boolean);

// Closed, the focus goes back to what opened it, as a dialog's does (the verify QA pass: to the
// message box, away from where the keyboard was).
const panelOpeners = new Map();

function openPanel(panel, focused, opener = document.activeElement) {
  for (const other of panels()) other.hidden = other !== panel;
  if (!panel.contains(opener)) panelOpeners.set(panel, opener);
  panel.scrollIntoView({ block: "start" });
  focused.focus({ preventScroll: true });
}

// `part`: "notifications" opens at those (Zulip's #settings/notifications, which every notification
// email links to).
function openSettings(part = null) {
  $("#settings-avatar").src = state.users.get(state.ownUserId)?.avatar_url || "";
  $("#muted-people-status").textContent = "";
  $("#notification-settings-status").textContent = "";
  renderMutedPeople();
  const notifications = part === "notifications";
  openPanel($("#settings"), notifications ? $("#notification-settings input") : $("#settings-name"));
  if (notifications) $("#notification-settings").scrollIntoView({ block: "start" });
}

function closePanel(panel) {
  panel.hidden = true;
  if (panel.id === "channel-settings") closeChannelSettings();
  const opener = panelOpeners.get(panel);
  (opener?.isConnected && opener !== document.body ? opener : $("#compose-content")).focus();
}

function showChannelBrowser() {
  openPanel($("#channel-browser"), $("#channel-browser .close-panel")); // one at a time; Esc closes it at once
  renderChannelBrowser();
}

// The channels' list, drawn again as they change while it is open (an answer that comes once it
// was closed draws nothing and opens nothing).
async function renderChannelBrowser() {
  let body;
  try {
    // Every channel one may know of: an administrator's, the private ones too (the verify QA pass:
    // those they were not in could not be found, nor their settings opened).
    body = await api("GET", "/streams", { include_all: true });
  } catch (error) {
    $("#create-channel-status").textContent = `The channels cannot be listed: ${error.message}`;
    return;
  }
  if ($("#channel-browser").hidden) return;
  for (const channel of body.streams) state.streams.set(channel.stream_id, channelOf(channel));
  // The channel whose button had the focus keeps it, drawn again (the web app QA pass: it fell to
  // the page, and Esc no longer closed the list).
  const focusedId = document.activeElement?.closest("#all-channels li")?.dataset.streamId;
  $("#all-channels").replaceChildren(
    ...body.streams
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((stream) => {
        const subscribed = state.subs.has(stream.stream_id);
        return el(
          "li",
          { dataset: { streamId: stream.stream_id } },
          el("a", { href: hashFor({ kind: "channel", streamId: stream.stream_id }), class: "channel-name" }, "#", bdi(stream.name)),
          stream.invite_only ? " (private)" : "",
          stream.description ? [" — ", channelDescription(stream), " "] : " ",
          el(
            "button",
            { type: "button", onclick: () => setSubscribed(stream.name, !subscribed, stream.invite_only), "aria-label": `${subscribed ? "Unsubscribe from" : "Subscribe to"} #${stream.name}` },
            subscribed ? "Unsubscribe" : "Subscribe",
          ),
        );
      }),
  );
  if (focusedId) $(`#all-channels li[data-stream-id="${focusedId}"] button`)?.focus();
}

// A channel's description as the server renders it (its Markdown, mentions and links), as Zulip
// shows it (the hostile web app QA pass: its Markdown showed as written).
function channelDescription(stream) {
  const description = el("bdi", { class: "description" });
  description.innerHTML = stream.rendered_description; // sanitized by the server, as messages are
  showLinks(description);
  showEmoji(description); // (the verify QA pass: #sandbox's :test_tube: as its name)
  return description;
}

// A new channel (POST /channels/create), its creator its first subscriber; it is shown once the
// subscription's event has told the page of it.
async function createChannel(event) {
  event.preventDefault();
  const form = event.target;
  const status = $("#create-channel-status");
  try {
    const body = await api("POST", "/channels/create", {
      name: $("#new-channel-name").value,
      description: $("#new-channel-description").value,
      invite_only: $("#new-channel-private").checked,
      subscribers: [state.ownUserId],
    });
    form.reset();
    status.textContent = "";
    // The subscription's event may come before this answer, or after it.
    if (state.subs.has(body.id)) window.location.hash = hashFor({ kind: "channel", streamId: body.id });
    else state.openWhenSubscribed = body.id;
  } catch (error) {
    status.textContent = `Not created: ${error.message}`;
  }
}

// Leaving a private channel may be for good (only its subscribers can add someone back), and so is a
// guest's leaving any channel (guests join none by themselves: the web app QA pass; Zulip asks them
// too): asked first.
async function setSubscribed(name, subscribe, isPrivate = false) {
  const question = isPrivate
    ? `Leave the private channel #${name}? Only its subscribers can add you back.`
    : `Leave #${name}? As a guest you cannot join it again yourself: someone has to add you back.`;
  if (!subscribe && (isPrivate || state.isGuest) && !window.confirm(question)) return;
  try {
    if (subscribe) await api("POST", "/users/me/subscriptions", { subscriptions: [{ name }] });
    else await api("DELETE", "/users/me/subscriptions", { subscriptions: [name] });
  } catch (error) {
    setComposeStatus(`Not ${subscribe ? "subscribed" : "unsubscribed"}: ${error.message}`);
  }
}

async function setAvatar(event) {
  const status = $("#settings-status");
  const [file] = event.target.files;
  if (!file) return;
  // Too large: said at once, before it is sent whole only to be refused (as an attachment is).
  const limit = state.maxAvatarMiB;
  if (limit !== null && file.size > limit * 1024 * 1024) {
    status.textContent = `Not saved: ${file.name} is larger than this server's maximum picture size (${limit} MiB).`;
    event.target.value = "";
    return;
  }
  try {
    const body = await uploadAvatar(file);
    $("#settings-avatar").src = body.avatar_url;
    status.textContent = "Your picture is saved.";
  } catch (error) {
    status.textContent = `Not saved: ${error.message}`;
  }
  event.target.value = "";
}

async function removeAvatar() {
  const status = $("#settings-status");
  try {
    const body = await api("DELETE", "/users/me/avatar");
    $("#settings-avatar").src = body.avatar_url; // the default one, before the realm_user event comes
    status.textContent = "Your picture is removed.";
  } catch (error) {
    status.textContent = `Not changed: ${error.message}`;
  }
}

// The people one muted, each to unmute (as Zulip's settings list them; the web admin QA pass: only
// from one's conversation with them, found by name).
function renderMutedPeople() {
  const unmute = async (id) => {
    try {
      await api("DELETE", `/users/me/muted_users/${id}`);
      $("#muted-people-status").textContent = `${ctx.userName(id)} is no longer muted.`;
    } catch (error) {
      $("#muted-people-status").textContent = `Not unmuted: ${error.message}`;
    }
  };
  const ids = [...state.mutedUsers].sort((a, b) => ctx.userName(a).localeCompare(ctx.userName(b)));
  const items = ids.map((id) =>
    el(
      "li",
      {},
      bdi(ctx.userName(id)),
      " ",
      el("button", { type: "button", onclick: () => unmute(id), "aria-label": `Unmute ${ctx.userName(id)}` }, "Unmute"),
    ),
  );
  // Drawn again (one unmuted here or elsewhere): the focus, if it was in the list, stays in the panel.
  const focused = $("#muted-people").contains(document.activeElement);
  $("#muted-people").replaceChildren(...(items.length ? items : [el("li", {}, "Nobody.")]));
  if (focused) ($("#muted-people button") || $("#settings-name")).focus();
}

async function saveSettings(event) {
  event.preventDefault();
  const status = $("#settings-status");
  try {
    await api("PATCH", "/settings", { full_name: $("#settings-name").value });
    status.textContent = "Saved.";
  } catch (error) {
    status.textContent = `Not saved: ${error.message}`;
  }
}

// A new password keeps this browser logged in (the server renews its session) and ends the others.
async function changePassword(event) {
  event.preventDefault();
  const status = $("#password-status");
  try {
    await api("PATCH", "/settings", { old_password: $("#password-old").value, new_password: $("#password-new").value });
    event.target.reset();
    status.textContent = "Your password was changed.";
  } catch (error) {
    status.textContent = `Not changed: ${error.message}`;
  }
}

// --- presence ------------------------------------------------------------------------------------

async function ping() {
  try {
    const body = await api("POST", "/users/me/presence", {
      status: document.visibilityState === "visible" ? "active" : "idle",
      new_user_input: document.visibilityState === "visible",
      slim_presence: true,
    });
    state.presences = body.presences;
    renderPeople();
  } catch {
    // the event queue shows the connection's state; the next ping tries again
  }
  setTimeout(ping, state.pingEvery * 1000);
}

// --- start ---------------------------------------------------------------------------------------

function start() {
  $("#messages").addEventListener("click", onMessageAction);
  setUpEmojiPicker();
  $("#messages").addEventListener("scroll", onScroll, { passive: true });
  window.addEventListener("scroll", onScroll, { passive: true }); // one column: the page scrolls
  $("#compose").addEventListener("submit", stopWriting); // sent: the people told are told it is done
  $("#compose").addEventListener("submit", onSend);
  $("#compose-content").addEventListener("keydown", onMentionKey); // first: Enter writes a suggestion
  $("#compose-content").addEventListener("keydown", onComposeKey);
  if (!enterSends()) $("#compose-content").placeholder = "Message";
  $("#compose-people").addEventListener("keydown", onPeopleKey); // first: Enter writes a suggestion
  for (const field of ["#compose-topic", "#compose-people"]) $(field).addEventListener("keydown", onAddressKey);
  $("#compose-content").addEventListener("input", suggestMentions);
  $("#compose-content").addEventListener("blur", hideMentions);
  $("#compose-people").addEventListener("input", suggestPeople);
  $("#compose-people").addEventListener("blur", hidePeople);
  $("#compose-channel").addEventListener("change", () => {
    toggleComposeFields();
    keepDraft();
    noteWriting();
  });
  for (const field of ["#compose-content", "#compose-topic", "#compose-people"]) {
    $(field).addEventListener("input", keepDraft);
    $(field).addEventListener("input", noteWriting);
  }
  $("#to-newest").addEventListener("click", scrollToBottom);
  $("#to-sidebar").addEventListener("click", () => {
    $("#sidebar").scrollIntoView({ block: "start" });
    $("#nav-feed").focus({ preventScroll: true });
  });
  $("#load-older").addEventListener("click", () => loadOlder({ asked: true }));
  $("#mark-read").addEventListener("click", markViewAsRead);
  $("#mute-channel").addEventListener("click", () => {
    const sub = state.subs.get(state.view.streamId);
    const change = { stream_id: sub.stream_id, property: "is_muted", value: !sub.is_muted };
    api("POST", "/users/me/subscriptions/properties", { subscription_data: [change] }).catch((error) =>
      setComposeStatus(error.message),
    );
  });
  $("#mute-topic").addEventListener("click", () => {
    const { streamId, topic } = state.view;
    const muted = topicPolicy(streamId, topic) === 1;
    api("POST", "/user_topics", { stream_id: streamId, topic, visibility_policy: muted ? 0 : 1 }).catch((error) =>
      setComposeStatus(error.message),
    );
  });
  $("#rename-topic").addEventListener("click", renameTopic);
  $("#mute-person").addEventListener("click", () => {
    const other = state.view.userIds[0];
    const muted = state.mutedUsers.has(other);
    api(muted ? "DELETE" : "POST", `/users/me/muted_users/${other}`).catch((error) => setComposeStatus(error.message));
  });
  $("#cancel-edit").addEventListener("click", () => {
    stopEditing();
    setComposeStatus("");
  });
  $("#browse-channels").addEventListener("click", showChannelBrowser);
  $("#open-channel-settings").addEventListener("click", () => {
    openPanel($("#channel-settings"), $("#channel-settings .close-panel"));
    openChannelSettings(state.view.streamId);
  });
  setUpChannelSettings();
  // The channels and the settings close with their button or Esc (the web app QA pass: only
  // another view closed them).
  for (const panel of panels()) {
    panel.querySelector(".close-panel").addEventListener("click", () => closePanel(panel));
    panel.addEventListener("keydown", (event) => event.key === "Escape" && closePanel(panel));
  }
  // ...and wherever the focus went from them, but for a field's own Esc (the web app QA pass: with
  // the focus on the page, Esc did nothing).
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || event.defaultPrevented || event.target.closest?.("input, textarea, select")) return;
    const open = panels().find((panel) => !panel.hidden && !panel.contains(event.target));
    if (open) closePanel(open);
  });
  $("#create-channel")?.addEventListener("submit", createChannel); // not for guests
  $("#compose-file").addEventListener("change", onAttach);
  $("#unsubscribe").addEventListener("click", () => {
    const id = state.view.streamId;
    setSubscribed(ctx.streamName(id), !state.subs.has(id), state.streams.get(id)?.invite_only);
  });
  $("#open-settings").addEventListener("click", () => openSettings());
  setUpNotificationSettings();
  $("#open-drafts").addEventListener("click", () => {
    $("#drafts-status").textContent = "";
    // What was typed just now is in the list too: the box's draft kept now, not after the writer's
    // pause (it may have been missing, the list drawn again as its event comes).
    syncDraft();
    $("#drafts").hidden = false; // drawn open
    renderDrafts();
    openPanel($("#drafts"), $("#draft-list button") ?? $("#drafts .close-panel"));
  });
  setUpDrafts(() => closePanel($("#drafts")));
  $("#open-invite")?.addEventListener("click", () => {
    renderInviteChannels();
    renderInvitations();
    $("#invite-status").textContent = "";
    openPanel($("#invite"), $("#invite-emails") || $("#invite-role"));
  });
  if ($("#invite")) setUpInvitations();
  $("#open-organization")?.addEventListener("click", () => {
    renderPeopleAdmin();
    $("#organization-status").textContent = $("#people-admin-status").textContent = "";
    // Opened from the settings (an administrator's part of them, as Zulip's): back to them is back
    // to what opened those.
    openPanel($("#organization"), $("#organization-name"), $("#open-settings"));
  });
  if ($("#organization")) setUpOrganization();
  $("#notice-reload").addEventListener("click", () => window.location.reload());
  $("#notice-later").addEventListener("click", () => {
    $("#notice").hidden = true;
  });
  $("#logout").form.addEventListener("submit", forgetDraft);
  $("#settings-form").addEventListener("submit", saveSettings);
  $("#password-form").addEventListener("submit", changePassword);
  $("#settings-avatar-file").addEventListener("change", setAvatar);
  $("#settings-avatar").addEventListener("error", showDefaultPictureOnError);
  $("#settings-avatar-remove").addEventListener("click", removeAvatar);
  document.addEventListener("keydown", onShortcutKey);
  $("#search").addEventListener("keydown", onOperandKey); // first: Enter writes a suggestion
  $("#search").addEventListener("keydown", onSearchKey);
  $("#search").addEventListener("input", suggestOperands);
  $("#search").addEventListener("blur", hideOperands);
  $("#search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const query = $("#search").value.trim();
    window.location.hash = query ? hashFor({ kind: "search", query }) : "#feed";
  });
  // The skip link moves the focus, not the view (views are the location's hash).
  $(".skip-link").addEventListener("click", (event) => {
    event.preventDefault();
    $("#compose-content").focus();
  });
  window.addEventListener("hashchange", showView);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") watchUnreadAgain();
    markShownAsRead();
  });
  window.addEventListener("focus", watchUnreadAgain);
  // Back online (the long-poll may have lived through it, connected all along).
  window.addEventListener("online", serverBack);

  queue = new EventQueue(
    {
      apply_markdown: true,
      client_gravatar: false,
      slim_presence: true,
      client_capabilities: {
        simplified_presence_events: true,
        notification_settings_null: true,
        archived_channels: true,
        stream_typing_notifications: true,
        user_settings_object: true,
        // A guest the organization limits to some people gets only those (no "Unknown user" list).
        user_list_incomplete: true,
      },
      event_types: [
        "message", "update_message", "delete_message", "reaction", "update_message_flags",
        "subscription", "stream", "presence", "realm_user", "user_topic", "muted_users", "realm_emoji",
        "realm", "submessage", "typing", "user_settings", "user_group", "invites_changed", "drafts",
      ],
      fetch_event_types: [
        "message", "update_message_flags", "subscription", "presence", "realm_user", "realm", "user_topic", "muted_users",
        "realm_emoji", "user_settings", "realm_user_groups", "recent_private_conversations", "drafts",
      ],
    },
    { onState: loadState, onEvents, onStatus: showStatus },
  );
  queue.start();
  setTimeout(ping, 1000);
}

start();
