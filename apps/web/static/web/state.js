// The page's state: what POST /json/register gave, kept current by events, and what is shown.
// The other modules read and change it; only render functions turn it into elements.

import { hashFor, viewFromHash } from "./narrow.js";

export const $ = (selector) => document.querySelector(selector);
export const me = $("#me");

export const state = {
  ownUserId: Number(me.dataset.userId),
  ownEmail: "",
  registered: false, // the page got its state from POST /json/register (once is enough: events keep it)
  isAdmin: false, // an administrator deletes anyone's messages (Zulip's default can_delete_any_message_group)
  isGuest: false, // a guest cannot join a channel again once left
  users: new Map(), // user_id -> person
  subs: new Map(), // stream_id -> subscription (archived channels' too: is_archived)
  streams: new Map(), // stream_id -> {name, invite_only, is_archived}: every channel the page knows of, subscribed or not
  unread: new Map(), // message id -> {streamId, topic} | {dm: true, userId (a one-to-one conversation)}
  userTopics: new Map(), // "stream_id\ntopic (lowercase)" -> Zulip's visibility_policy (1 muted, 2 unmuted, 3 followed)
  mutedUsers: new Set(), // user ids
  groupDms: new Map(), // "id,id" (the others, sorted) -> {userIds, maxId}: the group conversations, newest first in the sidebar
  userGroups: new Map(), // id -> the organization's user groups one may mention by name (not the system ones)
  realmEmoji: {}, // the organization's custom emoji by id (Zulip's realm_emoji): {name, source_url, deactivated}
  presences: {}, // user_id -> {active_timestamp, idle_timestamp}
  emptyTopicName: "general chat", // how the organization names a message's empty topic (realm_empty_topic_display_name)
  presenceDisabled: false, // the organization shows nobody online (Zulip's realm_presence_disabled)
  offlineAfter: 200,
  pingEvery: 60,
  maxUploadMiB: null, // the server's largest upload (Zulip's max_file_upload_size_mib; 0: uploads off)
  maxAvatarMiB: null, // and picture (max_avatar_file_size_mib)
  messages: new Map(), // the shown messages by id
  loading: null, // while a view's messages load: the changes to messages that arrived meanwhile
  foundOldest: false, // the view's oldest message is shown (else scrolling up loads older ones)
  foundNewest: false, // its newest too (else, opened around a message, scrolling down loads newer ones)
  loadingOlder: false,
  loadingNewer: false,
  arrivedMeanwhile: [], // messages that arrived while newer ones loaded
  view: viewFromHash(window.location.hash),
  topics: [],
  editing: null, // the id of the own message being edited in the box
  drafts: new Map(), // id -> the server's drafts of this person's (Zulip's drafts)
  syncDrafts: true, // the server keeps drafts (their enable_drafts_synchronization)
  sending: false, // a message (or an edit) on its way: the box holds still
  openWhenSubscribed: null, // a channel this page created: shown once subscribed
  markingRead: new Set(),
  viewFailed: false, // the view's messages could not load for a reason that passes: loaded again once connected
};

// Zulip's roles, highest first, as the organization's people are told them.
export const ROLE_NAMES = new Map([
  [100, "Organization owner"],
  [200, "Organization administrator"],
  [300, "Moderator"],
  [400, "Member"],
  [600, "Guest"],
]);

// What the page keeps of a channel (from a stream or subscription object).
export const channelOf = ({ name, invite_only, is_archived }) => ({ name, invite_only, is_archived: Boolean(is_archived) });

// An archived channel's messages can be read, not added to (the page registers with Zulip's
// archived_channels capability: it is told of archiving, and keeps the channel).
export const isArchived = (id) => Boolean(state.streams.get(id)?.is_archived);

// The channels that take messages: the subscribed ones not archived, by name.
export const activeSubs = () =>
  [...state.subs.values()].filter((sub) => !isArchived(sub.stream_id)).sort((a, b) => a.name.localeCompare(b.name));

// Zulip's muting: a topic muted, or one of a muted channel not unmuted or followed. Its messages are
// left out of the combined feed and the channel's view, and of their unread counts.
export const topicKey = (streamId, topic) => `${streamId}\n${topic.toLowerCase()}`;
export const topicPolicy = (streamId, topic) => state.userTopics.get(topicKey(streamId, topic)) ?? 0;
export function isMutedTopic(streamId, topic) {
  const policy = topicPolicy(streamId, topic);
  return policy === 1 || (policy === 0 && Boolean(state.subs.get(streamId)?.is_muted));
}

// What the render functions need to know (render.js).
export const ctx = {
  get ownUserId() {
    return state.ownUserId;
  },
  get mixed() {
    return !["topic", "dm"].includes(state.view.kind);
  },
  hashFor,
  streamName: (id) => (state.subs.get(id) ?? state.streams.get(id))?.name,
  userName: (id, fallback = "someone") => state.users.get(id)?.full_name || fallback,
  isMutedUser: (id) => state.mutedUsers.has(id),
  get isAdmin() {
    return state.isAdmin;
  },
  // The page registers with client_gravatar off: every person's avatar_url is a URL.
  avatarUrl: (id) => state.users.get(id)?.avatar_url,
  emojiUrl: (id) => state.realmEmoji[id]?.source_url,
  get editingId() {
    return state.editing;
  },
};
