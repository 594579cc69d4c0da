// The "Invite people" panel, for those the organization lets invite: invitations by email
// (POST /json/invites) and reusable links (POST /json/invites/multiuse), with the role (the page
// offers those the server lets this person give), the channels and the lifetime chosen, as in
// Zulip's invitation dialog. The server checks everything again and says what it refuses.

import { api } from "./api.js";
import { activeSubs, $ } from "./state.js";
import { el } from "./render.js";

// What both kinds of invitation send.
function chosen() {
  const expires = $("#invite-expires").value;
  return {
    invite_as: Number($("#invite-role").value),
    stream_ids: [...document.querySelectorAll("#invite-channels input[data-stream-id]:checked")].map((box) =>
      Number(box.dataset.streamId),
    ),
    include_realm_default_subscriptions: $("#invite-default-channels").checked,
    invite_expires_in_minutes: expires === "null" ? "null" : Number(expires), // "null": no time limit
  };
}

function say(text) {
  $("#invite-status").textContent = text;
}

// Zulip's refusal of some addresses lists each with its reason.
function refusal(error) {
  const errors = error.body?.errors;
  if (!Array.isArray(errors) || !errors.length) return error.message;
  return `${error.message} ${errors.map(([email, reason]) => `${email}: ${reason}`).join("; ")}`;
}

// The channels one is in, to choose from (unticked: the default channels are their own box).
export function renderInviteChannels() {
  const boxes = activeSubs().map((sub) =>
    el(
      "label",
      {},
      el("input", { type: "checkbox", dataset: { streamId: sub.stream_id } }),
      ` #${sub.name}`,
    ),
  );
  $("#invite-channels").replaceChildren($("#invite-channels legend"), $("#invite-default-channels").parentElement, ...boxes);
}

async function sendInvitations(event) {
  event.preventDefault();
  const emails = $("#invite-emails").value.trim();
  if (!emails) {
    say("Write at least one email address.");
    $("#invite-emails").focus();
    return;
  }
  say("Sending…");
  try {
    await api("POST", "/invites", { invitee_emails: emails, ...chosen() });
  } catch (error) {
    say(`Not sent: ${refusal(error)}`);
    return;
  }
  const count = emails.split(/[\s,]+/).filter(Boolean).length;
  say(count === 1 ? "The invitation was sent." : `${count} invitations were sent.`);
  $("#invite-emails").value = "";
}

async function makeLink() {
  say("Creating a link…");
  let body;
  try {
    body = await api("POST", "/invites/multiuse", chosen());
  } catch (error) {
    say(`No link: ${error.message}`);
    return;
  }
  say("");
  $("#invite-link").value = body.invite_link;
  $("#invite-link-field").hidden = false;
  $("#invite-link-field").scrollIntoView({ block: "nearest" }); // the panel scrolls on a small screen
  $("#invite-link").select();
}

async function copyLink() {
  try {
    await navigator.clipboard.writeText($("#invite-link").value);
    say("The link was copied.");
  } catch {
    // No clipboard on a page served over plain HTTP to another machine: the link is selected.
    $("#invite-link").select();
    say("Press Ctrl+C (⌘C) to copy the selected link.");
  }
}

export function setUpInvitations() {
  // Without invitations by email (links only), the form sends nothing.
  $("#invite-form").addEventListener("submit", (event) =>
    $("#invite-emails") ? sendInvitations(event) : event.preventDefault(),
  );
  $("#invite-make-link")?.addEventListener("click", makeLink);
  $("#invite-copy-link").addEventListener("click", copyLink);
}
