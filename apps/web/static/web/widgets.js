// Polls and to-do lists, as Zulip's apps show them (the web app QA pass: they were their text, a
// poll made on a phone could not be voted on here). A message starting with /poll or /todo has its
// sender's first submessage: {"widget_type", "extra_data"}; every later submessage is one change
// (a vote, an option, a task, a task done), replayed in order as Zulip's poll_data and task_data
// replay them. A change is sent as a submessage (POST /json/submessage, msg_type "widget").

import { el } from "./render.js";

function parsed(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

// The widget's state from the message's submessages, or null when the message is no widget.
function widgetOf(message) {
  const [first, ...changes] = [...(message.submessages || [])].sort((a, b) => a.id - b.id);
  const widget = first && first.sender_id === message.sender_id ? parsed(first.content) : null;
  const extra = widget?.extra_data;
  if (widget?.widget_type === "poll" && extra) return pollOf(message, extra, changes);
  if (widget?.widget_type === "todo" && extra) return todoOf(message, extra, changes);
  return null;
}

function pollOf(message, { question, options }, changes) {
  const poll = { type: "poll", title: question || "", items: new Map() };
  (options || []).forEach((text, index) => poll.items.set(`canned,${index}`, { text, voters: new Set() }));
  for (const change of changes) {
    const data = parsed(change.content);
    if (data?.type === "new_option") {
      const key = `${change.sender_id},${data.idx}`;
      if (!poll.items.has(key)) poll.items.set(key, { text: data.option, voters: new Set() });
    } else if (data?.type === "question" && change.sender_id === message.sender_id) {
      poll.title = data.question;
    } else if (data?.type === "vote") {
      const option = poll.items.get(data.key);
      if (data.vote === 1) option?.voters.add(change.sender_id);
      else if (data.vote === -1) option?.voters.delete(change.sender_id);
    }
  }
  return poll;
}

function todoOf(message, { task_list_title: title, tasks }, changes) {
  const todo = { type: "todo", title: title || "", items: new Map() };
  (tasks || []).forEach(({ task, desc }, index) => todo.items.set(`${index},canned`, { text: task, desc, done: false }));
  for (const change of changes) {
    const data = parsed(change.content);
    if (data?.type === "new_task") {
      const key = `${data.key},${change.sender_id}`;
      if (!todo.items.has(key) && data.task) todo.items.set(key, { text: data.task, desc: data.desc, done: Boolean(data.completed) });
    } else if (data?.type === "strike") {
      const task = todo.items.get(data.key);
      if (task) task.done = !task.done;
    } else if (data?.type === "new_task_list_title" && change.sender_id === message.sender_id) {
      todo.title = data.title;
    }
  }
  return todo;
}

// The number the reader's next option or task is sent with: after their own ones, those still on
// their way included (Zulip's my_idx; the web app QA pass: two added at once got the same number,
// and the second was dropped everywhere).
const taken = new Map(); // message id -> the next number not yet given out by this page

function ownNext(message, ownUserId, type) {
  let next = taken.get(message.id) ?? 1;
  for (const change of message.submessages || []) {
    const data = change.sender_id === ownUserId ? parsed(change.content) : null;
    const index = data?.type === type ? Number(type === "new_option" ? data.idx : data.key) : NaN;
    if (index >= next) next = index + 1;
  }
  taken.set(message.id, next + 1);
  return next;
}

// The widget drawn in place of the message's text, or null.
export function widgetElement(message, ctx) {
  const widget = widgetOf(message);
  if (!widget) return null;
  const poll = widget.type === "poll";
  const items = [...widget.items].map(([key, item]) => {
    if (poll) {
      const mine = item.voters.has(ctx.ownUserId);
      const names = [...item.voters].map((id) => ctx.userName(id)).join(", ");
      return el(
        "li",
        {},
        el(
          "button",
          { type: "button", class: "vote", "aria-pressed": String(mine), "aria-label": `Vote for ${item.text}: ${item.voters.size}`, dataset: { action: "widget-vote", key } },
          String(item.voters.size),
        ),
        " ",
        el("span", {}, item.text),
        names ? el("span", { class: "voters" }, ` (${names})`) : null,
      );
    }
    return el(
      "li",
      { class: item.done ? "done" : null },
      el(
        "button",
        { type: "button", class: "strike", role: "checkbox", "aria-checked": String(item.done), "aria-label": item.text, dataset: { action: "widget-strike", key } },
        item.done ? "☑" : "☐",
      ),
      " ",
      // One box: the list's gap would stand between the task and its ": description" (the web app
      // QA pass: "Reserve table : for 4").
      el("span", {}, el("strong", {}, item.text), item.desc ? `: ${item.desc}` : null),
    );
  });
  const placeholder = poll ? "New option" : "New task";
  const label = poll ? placeholder : "New task (a description after “: ”)";
  const input = el("input", { type: "text", "aria-label": label, placeholder, maxlength: 500 });
  const add = el("button", { type: "button", dataset: { action: "widget-add" } }, poll ? "Add option" : "Add task");
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.isComposing) {
      event.preventDefault();
      add.click();
    }
  });
  return el(
    "div",
    { class: `widget ${widget.type}` },
    el("p", { class: "widget-title" }, el("strong", {}, widget.title || (poll ? "Poll" : "To-do list"))),
    el("ul", {}, items),
    el("div", { class: "widget-add" }, input, " ", add),
  );
}

// The change a widget's button asks for (what to send as the submessage's content), or null.
export function widgetChange(message, button, ownUserId) {
  const widget = widgetOf(message);
  if (!widget) return null;
  const { action, key } = button.dataset;
  if (action === "widget-vote") {
    const option = widget.items.get(key);
    return option && { type: "vote", key, vote: option.voters.has(ownUserId) ? -1 : 1 };
  }
  if (action === "widget-strike") return widget.items.has(key) ? { type: "strike", key } : null;
  const input = button.closest(".widget-add").querySelector("input");
  const text = input.value.trim();
  if (!text) return null;
  const poll = widget.type === "poll";
  // As Zulip's apps refuse them (the web app QA pass: cleared without a word).
  if ([...widget.items.values()].some((item) => item.text === text)) {
    throw new Error(poll ? "This option is already in the poll." : "This task is already on the list.");
  }
  input.value = "";
  if (poll) return { type: "new_option", idx: ownNext(message, ownUserId, "new_option"), option: text };
  // "Task: description", as a /todo message's lines are read.
  const colon = text.indexOf(": ");
  const [task, desc] = colon < 0 ? [text, ""] : [text.slice(0, colon), text.slice(colon + 2)];
  return { type: "new_task", key: ownNext(message, ownUserId, "new_task"), task: task.trim(), desc: desc.trim(), completed: false };
}
