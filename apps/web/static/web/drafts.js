// The "Drafts" panel: what was written and not sent, in this tab or on another device (Zulip's
// drafts, which the server keeps: GET /json/register's `drafts`, kept current by `drafts` events),
// newest first, each taken up into the message box or deleted (DELETE /json/drafts/{id}).

import { api } from "./api.js";
import { boxDraftId, draftDeleted, setComposeStatus, takeUpDraft } from "./compose.js";
import { bdi, el } from "./render.js";
import { $, ctx, state } from "./state.js";

const PREVIEW_LENGTH = 300;

export function loadDrafts(registered) {
  state.syncDrafts = registered.user_settings?.enable_drafts_synchronization !== false;
  state.drafts = new Map((registered.drafts || []).map((draft) => [draft.id, draft]));
  renderDrafts();
}

// The setting (in the panel): saved as it is ticked (its event, to every tab of this person's, does
// the rest). Taken at once: drawn again meanwhile (a draft's event), the box stays as ticked (the
// drafts QA pass: it was ticked again, and the answer said the opposite).
async function saveSyncSetting(event) {
  const box = event.target;
  const wanted = box.checked;
  const status = $("#drafts-status");
  state.syncDrafts = wanted;
  try {
    await api("PATCH", "/settings", { enable_drafts_synchronization: wanted });
    status.textContent = wanted ? "Your drafts are kept on the server." : "Your drafts are kept on this device only.";
  } catch (error) {
    state.syncDrafts = !wanted;
    status.textContent = `Not saved: ${error.message}`;
  }
  renderDrafts();
}

// A `drafts` event: one added, changed or deleted (here, or on another device).
export function draftsChanged(event) {
  if (event.op === "add") for (const draft of event.drafts) state.drafts.set(draft.id, draft);
  else if (event.op === "update") state.drafts.set(event.draft.id, event.draft);
  else if (event.op === "remove") {
    state.drafts.delete(event.draft_id);
    draftDeleted(event.draft_id);
  }
  renderDrafts();
}

// The count beside the panel's button, and the panel if it is open (the focus stays on the draft
// it was on, or goes to the next one).
export function renderDrafts() {
  $("#count-drafts").textContent = state.drafts.size ? String(state.drafts.size) : "";
  $("#sync-drafts").checked = state.syncDrafts;
  const panel = $("#drafts");
  if (panel.hidden) return;
  const focused = document.activeElement?.closest("#draft-list li");
  const at = focused ? [...focused.parentElement.children].indexOf(focused) : -1;
  const action = document.activeElement?.dataset.action;
  const drafts = [...state.drafts.values()].sort((a, b) => b.timestamp - a.timestamp || b.id - a.id);
  $("#draft-list").replaceChildren(...drafts.map(draftItem));
  $("#drafts-empty").hidden = drafts.length > 0;
  $("#drafts-empty").textContent = state.syncDrafts
    ? "No drafts: what you write and do not send is kept here."
    : "Your settings keep drafts on this device only (in the message box, until sent).";
  if (at >= 0) {
    const items = $("#draft-list").children;
    const item = items[Math.min(at, items.length - 1)];
    (item?.querySelector(`button[data-action="${action}"]`) ?? item?.querySelector("button") ?? panel.querySelector(".close-panel")).focus();
  }
}

function address(draft) {
  if (draft.type === "stream") {
    return `#${ctx.streamName(draft.to[0]) ?? "a channel you cannot see"} › ${draft.topic || state.emptyTopicName}`;
  }
  if (draft.type === "private" && draft.to.length) return `To ${draft.to.map((id) => ctx.userName(id, "someone unknown")).join(", ")}`;
  return "Not addressed yet";
}

function draftItem(draft) {
  const when = new Date(draft.timestamp * 1000);
  const [place, time] = [address(draft), when.toLocaleString()];
  const text = draft.content.length > PREVIEW_LENGTH ? `${draft.content.slice(0, PREVIEW_LENGTH)}…` : draft.content;
  // Its time too: drafts to one place are told apart (the drafts QA pass: three alike).
  const where = `${place}, ${time}`;
  const inBox = draft.id === boxDraftId();
  return el(
    "li",
    { dataset: { draftId: draft.id } },
    el("p", { class: "draft-address" }, bdi(place), " ", el("time", { datetime: when.toISOString() }, time)),
    el("p", { class: "draft-content", dir: "auto" }, text),
    inBox
      ? el("span", { class: "help" }, "In the message box")
      : el("button", { type: "button", dataset: { action: "restore" }, "aria-label": `Restore the draft: ${where}` }, "Restore"),
    el("button", { type: "button", dataset: { action: "delete" }, "aria-label": `Delete the draft: ${where}` }, "Delete"),
  );
}

// `close`: closes the panel (app.js's closePanel, the focus back to its opener).
export function setUpDrafts(close) {
  $("#sync-drafts").addEventListener("change", saveSyncSetting);
  // Deleted by this tab (a message sent): gone from the list before its event comes.
  window.addEventListener("parley:draft-deleted", (event) => draftsChanged({ op: "remove", draft_id: event.detail }));
  $("#draft-list").addEventListener("click", async (event) => {
    const button = event.target.closest("button[data-action]");
    const draft = button && state.drafts.get(Number(button.closest("li").dataset.draftId));
    if (!draft) return;
    $("#drafts-status").textContent = "";
    if (button.dataset.action === "restore") {
      close();
      const why = await takeUpDraft(draft);
      if (why) setComposeStatus(`Not restored: ${why}`);
      return;
    }
    try {
      await api("DELETE", `/drafts/${draft.id}`);
    } catch (error) {
      if (error.status !== 404) {
        $("#drafts-status").textContent = `Not deleted: ${error.message}`;
        return;
      }
    }
    draftsChanged({ op: "remove", draft_id: draft.id }); // its event may come later
  });
}
