// Narrows: what the page shows, as the location's hash (so that links, Back and reloading work) and
// as Zulip's narrow operators for GET /json/messages. Search boxes use Zulip's syntax:
// `channel:general topic:"lunch plans" sender:me is:starred has:link some words`.

// Zulip's operators the server takes (apps/messages/narrow.py); anything else is words.
const OPERATORS = new Set([
  "channel", "stream", "topic", "subject", "sender", "dm", "pm-with", "dm-including", "group-pm-with", "is", "has",
  "id", "near", "with", "search", "channels", "streams", "in",
]);
// What Zulip's search box also takes for them (the web app QA pass: `from:me` was searched as words).
const ALIASES = { from: "sender" };

// The operators naming people, by email or id (a dm's comma-separated).
const PERSON_OPERATORS = new Set(["sender", "dm", "pm-with", "dm-including", "group-pm-with"]);

// The active people a name stands for: those whose whole name it is, else those with a word of
// their name starting with it ("mick" for Mick Member).
function named(people, name) {
  const text = name.toLowerCase();
  const active = [...(people?.values() ?? [])].filter((person) => person.is_active !== false);
  const whole = active.filter((person) => person.full_name.toLowerCase() === text);
  return whole.length ? whole : active.filter((person) => person.full_name.toLowerCase().split(/\s+/).some((word) => word.startsWith(text)));
}

// People named as the server takes them: "me" is oneself (the verify QA pass: `dm-including:me` was
// taken for a Mel), a name that stands for one person their email (`sender:"Mick Member"`,
// `sender:mick`; the web app QA pass: the server's "unknown user" was all one got).
function personOperand(operand, people, ownEmail) {
  return operand
    .split(",")
    .map((part) => {
      if (part.trim().toLowerCase() === "me") return ownEmail || part;
      const same = part.includes("@") || /^\d+$/.test(part.trim()) ? [] : named(people, part.trim());
      return same.length === 1 ? same[0].email : part;
    })
    .join(",");
}

// Why the server refused a search, said plainly where the page can tell: a person or channel it
// names that nobody or no channel is called, an email or id that is nobody's here; else null.
export function searchProblem(narrow, { people, channels }) {
  const everyone = [...(people?.values() ?? [])];
  for (const { operator, operand } of narrow) {
    if (PERSON_OPERATORS.has(operator)) {
      for (const part of String(operand).split(",").map((text) => text.trim())) {
        if (part.toLowerCase() === "me") continue;
        if (part.includes("@") || /^\d+$/.test(part)) {
          // (the QA pass: the server's "Invalid narrow operator: unknown user" was all one got)
          const known = everyone.some((person) => person.email.toLowerCase() === part.toLowerCase() || String(person.user_id) === part);
          if (!known) return `No one here has the ${part.includes("@") ? "address" : "id"} “${part}”.`;
          continue;
        }
        const same = named(people, part);
        if (same.length > 1) return `“${part}” could be more than one person: choose one from the suggestions.`;
        if (!same.length) return `No one here is called “${part}”.`;
      }
    } else if (["channel", "stream"].includes(operator) && !/^\d+$/.test(String(operand))) {
      const known = [...channels.values()].some((channel) => channel.name.toLowerCase() === operand.toLowerCase());
      if (!known) return `You know of no channel called “${operand}”.`;
    }
  }
  return null;
}

// Tokens of a search: `op:operand` (quoted operands may hold spaces; a leading "-" negates), else
// words and "phrases" (a leading "-" leaves them out). `people` (user_id -> person) turns names into emails.
export function parseSearch(query, { ownEmail, people } = {}) {
  const narrow = [];
  const words = [];
  const pattern = /(-?)([a-z-]+):("([^"]*)"|\S+)|(-?"[^"]*"|\S+)/gi;
  for (const match of query.matchAll(pattern)) {
    const [, negated, operator, rawOperand, quoted, word] = match;
    const op = operator && (ALIASES[operator.toLowerCase()] ?? operator.toLowerCase());
    if (op && OPERATORS.has(op)) {
      let operand = quoted !== undefined ? quoted : rawOperand;
      if (PERSON_OPERATORS.has(op)) operand = personOperand(operand, people, ownEmail);
      narrow.push({ operator: op, operand, negated: negated === "-" });
    } else if (word?.length > 1 && word.startsWith("-")) {
      // A word or "phrase" after "-" is left out (the web app QA pass: `-"red apple"` found only it).
      narrow.push({ operator: "search", operand: word.slice(1), negated: true });
    } else {
      // A "quoted phrase" keeps its quotes: the server finds it only as written (the web app QA
      // pass: its words were found anywhere, in any order).
      words.push(word !== undefined ? word : match[0]);
    }
  }
  if (words.length) narrow.push({ operator: "search", operand: words.join(" ") });
  return narrow;
}

// Zulip's links (`#narrow/channel/12-design/topic/plans.20ahead`, `#narrow/dm/5-dm`), which the
// server writes into messages and emails: operator/operand pairs, operands encoded as Zulip's
// hash_util_encode does (percent-encoding with "." for "%"). A link to a message (`/near/123` or
// `/with/123`) opens its conversation at that message (`anchor`).
function viewFromZulipNarrow(path, ownUserId) {
  const raw = path.split("/");
  const operands = {};
  for (let i = 0; i + 1 < raw.length; i += 2) operands[raw[i]] = raw[i + 1];
  const view = conversationOf(operands, ownUserId);
  const anchor = Number(operands.near ?? operands.with);
  return Number.isInteger(anchor) && anchor > 0 && view.kind !== "feed" ? { ...view, anchor } : view;
}

function conversationOf(operands, ownUserId) {
  const decode = (text) => decodeURIComponent(text.replace(/\./g, "%"));
  const channel = operands.channel ?? operands.stream;
  if (channel !== undefined) {
    // "12-design" names channel 12; Zulip's older links name it alone ("design", "2024-plans",
    // "42"), found by name when no channel has the leading number (as Zulip's slug_to_stream_id).
    const leading = channel.split("-")[0];
    const place = { streamId: /^\d+$/.test(leading) ? Number(leading) : null, streamName: decode(channel) };
    const topic = operands.topic ?? operands.subject;
    return topic !== undefined ? { kind: "topic", ...place, topic: decode(topic) } : { kind: "channel", ...place };
  }
  const people = operands.dm ?? operands["pm-with"];
  if (people !== undefined) return dmView(people.split("-")[0], ownUserId);
  return operands.is === "starred" ? { kind: "starred" } : { kind: "feed" };
}

// The view a hash names: {kind, ...} (unknown or malformed hashes are the combined feed). A
// conversation's people are those other than `ownUserId` (Zulip's links name everyone in it).
export function viewFromHash(hash, ownUserId = null) {
  try {
    return viewNamed(hash, ownUserId);
  } catch (error) {
    if (error instanceof URIError) return { kind: "feed" }; // a bad percent-encoding
    throw error;
  }
}

function viewNamed(hash, ownUserId) {
  if (hash.startsWith("#narrow/")) return viewFromZulipNarrow(hash.slice("#narrow/".length), ownUserId);
  const parts = hash.replace(/^#/, "").split("/").map(decodeURIComponent);
  switch (parts[0]) {
    case "channel":
      if (parts[2] === "topic" && parts.length >= 4) {
        return { kind: "topic", streamId: Number(parts[1]), topic: parts.slice(3).join("/") };
      }
      return { kind: "channel", streamId: Number(parts[1]) };
    case "dms":
      return { kind: "dms" };
    case "dm":
      return dmView(parts[1] ?? "", ownUserId);
    case "starred":
      return { kind: "starred" };
    case "search":
      return { kind: "search", query: parts.slice(1).join("/") };
    default:
      return { kind: "feed" };
  }
}

// A conversation's view, from its people's ids ("5" or "5,7,9"): one person, or a group (sorted).
function dmView(ids, ownUserId) {
  const userIds = [...new Set(ids.split(",").map(Number))].sort((a, b) => a - b);
  if (!userIds.length || !userIds.every((id) => Number.isInteger(id) && id > 0)) return { kind: "dms" };
  return { kind: "dm", userIds: ownUserId === null ? userIds : conversationWith(userIds, ownUserId) };
}

// The people of a direct message other than oneself (oneself, for a message to oneself).
export function conversationWith(ids, ownUserId) {
  const others = [...new Set(ids)].filter((id) => id !== ownUserId).sort((a, b) => a - b);
  return others.length ? others : [ownUserId];
}

export function hashFor(view) {
  const enc = encodeURIComponent;
  switch (view.kind) {
    case "channel":
      return `#channel/${view.streamId}`;
    case "topic":
      return `#channel/${view.streamId}/topic/${enc(view.topic)}`;
    case "dms":
      return "#dms";
    case "dm":
      return `#dm/${view.userIds.join(",")}`;
    case "starred":
      return "#starred";
    case "search":
      return `#search/${enc(view.query)}`;
    default:
      return "#feed";
  }
}

// Zulip's link to a message (as its web app writes them into quotes, and every Zulip client opens):
// `#narrow/channel/12-design/topic/plans.20ahead/near/345`, `#narrow/dm/5,7-dm/near/345`: everyone
// in a conversation, the writer too ("-group" for three or more, as Zulip's pm_perma_link; the web
// app QA pass: a link naming only the other person opened, for them, their messages to themselves).
const encodeHashComponent = (text) =>
  encodeURIComponent(text).replace(/[%().]/g, (c) => ({ "%": ".", "(": ".28", ")": ".29", ".": ".2E" })[c]);

export function zulipLinkTo(message) {
  if (message.type === "stream") {
    const channel = `${message.stream_id}-${encodeHashComponent(message.display_recipient.replaceAll(" ", "-"))}`;
    return `#narrow/channel/${channel}/topic/${encodeHashComponent(message.subject)}/near/${message.id}`;
  }
  const people = [...new Set(message.display_recipient.map((person) => person.id))].sort((a, b) => a - b);
  return `#narrow/dm/${people.join(",")}-${people.length >= 3 ? "group" : "dm"}/near/${message.id}`;
}

// The operators of a view, for GET /json/messages.
export function narrowFor(view, { ownEmail, people }) {
  switch (view.kind) {
    case "channel":
      return [{ operator: "channel", operand: view.streamId }];
    case "topic":
      return [
        { operator: "channel", operand: view.streamId },
        { operator: "topic", operand: view.topic },
      ];
    case "dms":
      return [{ operator: "is", operand: "dm" }];
    case "dm":
      return [{ operator: "dm", operand: view.userIds }];
    case "starred":
      return [{ operator: "is", operand: "starred" }];
    case "search":
      return parseSearch(view.query, { ownEmail, people });
    default:
      return [{ operator: "in", operand: "home" }]; // the combined feed: muted topics and channels left out, as Zulip's
  }
}

// Whether a message that just arrived belongs in the view (searches are fetched again instead).
export function viewShows(view, message, ownUserId) {
  switch (view.kind) {
    case "feed":
      return true;
    case "channel":
      return message.type === "stream" && message.stream_id === view.streamId;
    case "topic":
      return (
        message.type === "stream" &&
        message.stream_id === view.streamId &&
        message.subject.toLowerCase() === view.topic.toLowerCase()
      );
    case "dms":
      return message.type === "private";
    case "dm": {
      if (message.type !== "private") return false;
      const ids = conversationWith(message.display_recipient.map((person) => person.id), ownUserId);
      return ids.join(",") === conversationWith(view.userIds, ownUserId).join(",");
    }
    case "starred":
      return (message.flags || []).includes("starred");
    default:
      return false;
  }
}
