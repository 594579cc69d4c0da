// The message box: to a channel's topic or to people, or editing an own message. Enter sends,
// Shift+Enter is a new line, Esc cancels.

import { api, upload } from "./api.js";
import { el } from "./render.js";
import { $, state } from "./state.js";

export function renderComposeChannels() {
  const select = $("#compose-channel");
  const chosen = select.value;
  const channels = [...state.subs.values()].sort((a, b) => a.name.localeCompare(b.name));
  select.replaceChildren(
    ...channels.map((sub) => el("option", { value: sub.stream_id }, `#${sub.name}`)),
    el("option", { value: "dm" }, "Direct message"),
  );
  if ([...select.options].some((o) => o.value === chosen)) select.value = chosen;
  toggleComposeFields();
}

export function toggleComposeFields() {
  const dm = $("#compose-channel").value === "dm";
  $("#compose-topic-field").hidden = dm;
  $("#compose-people-field").hidden = !dm;
}

export function presetCompose(view) {
  const select = $("#compose-channel");
  if (view.streamId && state.subs.has(view.streamId)) {
    select.value = String(view.streamId);
    $("#compose-topic").value = view.kind === "topic" ? view.topic : "";
  } else if (view.kind === "dm" || view.kind === "dms") {
    select.value = "dm";
    const people = (view.userIds ?? []).map((id) => state.users.get(id)).filter(Boolean);
    if (people.length) $("#compose-people").value = people.map((person) => person.email).join(", ");
  }
  toggleComposeFields();
}

export function setComposeStatus(text) {
  $("#compose-status").textContent = text;
}

export function startEditing(messageId, raw) {
  state.editing = messageId;
  $("#compose-content").value = raw;
  $("#send").textContent = "Save edit";
  $("#cancel-edit").hidden = false;
  $("#compose-content").focus();
}

export function stopEditing() {
  state.editing = null;
  $("#compose-content").value = "";
  $("#send").textContent = "Send";
  $("#cancel-edit").hidden = true;
}

export async function onSend(event) {
  event.preventDefault();
  const content = $("#compose-content").value;
  if (!content.trim()) return;
  const target = $("#compose-channel").value;
  setComposeStatus("Sending…");
  try {
    if (state.editing !== null) {
      await api("PATCH", `/messages/${state.editing}`, { content });
      stopEditing();
    } else if (target === "dm") {
      const to = $("#compose-people").value.split(",").map((s) => s.trim()).filter(Boolean);
      await api("POST", "/messages", { type: "direct", to, content });
    } else {
      await api("POST", "/messages", { type: "stream", to: Number(target), topic: $("#compose-topic").value, content });
    }
    $("#compose-content").value = "";
    setComposeStatus("");
  } catch (error) {
    setComposeStatus(`Not sent: ${error.message}`);
  }
}

export function onComposeKey(event) {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    $("#compose").requestSubmit();
  } else if (event.key === "Escape") {
    event.preventDefault();
    if (state.editing !== null) stopEditing();
    else $("#compose-content").value = "";
    setComposeStatus("");
  }
}

// A file chosen: uploaded, then linked where the cursor is, as Zulip's web app does ([name](url)).
export async function onAttach(event) {
  const input = event.target;
  const file = input.files[0];
  if (!file) return;
  setComposeStatus(`Uploading ${file.name}…`);
  try {
    const body = await upload(file);
    const name = file.name.replace(/[[\]]/g, "");
    const box = $("#compose-content");
    const at = box.selectionStart ?? box.value.length;
    box.value = `${box.value.slice(0, at)}[${name}](${body.url})${box.value.slice(box.selectionEnd ?? at)}`;
    box.focus();
    setComposeStatus("");
  } catch (error) {
    setComposeStatus(`Not uploaded: ${error.message}`);
  } finally {
    input.value = "";
  }
}
