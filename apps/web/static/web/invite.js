// The "Invite people" panel, for those the organization lets invite: invitations by email
// (POST /json/invites) and reusable links (POST /json/invites/multiuse), with the role (the page
// offers those the server lets this person give), the channels and the lifetime chosen, as in
// Zulip's invitation dialog; the open ones listed, each to resend (by email) or revoke. The server
// checks everything again and says what it refuses.

import { api } from "./api.js";
import { activeSubs, $, ROLE_NAMES, state } from "./state.js";
import { bdi, el } from "./render.js";

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
  // Below the fold of the panel on a laptop or a phone (the verify QA pass: nothing seemed to happen).
  if (text) $("#invite-status").scrollIntoView({ block: "nearest" });
}

// Zulip's refusal of some addresses lists each with its reason.
const refusedAddresses = (errors) => errors.map(([email, reason]) => `${email}: ${reason}`).join("; ");

function refusal(error) {
  const errors = error.body?.errors;
  if (!Array.isArray(errors) || !errors.length) return error.message;
  return `${error.message} ${refusedAddresses(errors)}`;
}

// The channels one is in, to choose from (unticked: the default channels are their own box); drawn
// again while the panel is open, those ticked stay so.
export function renderInviteChannels({ keepTicked = false } = {}) {
  const ticked = new Set(keepTicked ? chosen().stream_ids : []);
  const focused = document.activeElement?.closest("#invite-channels") ? document.activeElement : null;
  const boxes = activeSubs().map((sub) =>
    el(
      "label",
      {},
      el("input", { type: "checkbox", checked: ticked.has(sub.stream_id), dataset: { streamId: sub.stream_id } }),
      ` #${sub.name}`,
    ),
  );
  const defaults = $("#invite-default-channels").parentElement;
  $("#invite-channels").replaceChildren($("#invite-channels legend"), defaults, ...boxes);
  // The focus stays on the same channel's box (or the first box, if that channel went): in the panel,
  // so that Esc still closes it (the verify QA pass: it fell to the page).
  const id = focused?.dataset.streamId;
  if (id !== undefined) ($(`#invite-channels input[data-stream-id="${id}"]`) ?? $("#invite-default-channels")).focus();
}

// Joined, left, renamed or archived a channel: an open panel offers the channels as they are now
// (the web admin QA pass: they stayed as the panel opened with).
export function inviteChannelsChanged() {
  if ($("#invite")?.hidden === false) renderInviteChannels({ keepTicked: true });
}

const DATE = { dateStyle: "medium" };
// When an invitation was made, to the second, to tell two alike apart (the web admin QA pass: two
// links as guests until revoked read the same).
const madeAt = (seconds) => new Date(seconds * 1000).toLocaleString(undefined, { ...DATE, timeStyle: "medium" });

// The open invitations this person controls (theirs; an administrator's, everyone's), each with
// what it gives and a button revoking it (DELETE /invites/{id}, /invites/multiuse/{id}).
export async function renderInvitations() {
  let invites;
  try {
    invites = (await api("GET", "/invites")).invites;
  } catch (error) {
    $("#invite-list").replaceChildren(el("li", {}, `The invitations cannot be listed: ${error.message}`));
    return;
  }
  const items = invites.map((invite) => {
    const who = invite.is_multiuse ? "A reusable link" : bdi(invite.email);
    const expires = invite.expiry_date && new Date(invite.expiry_date * 1000).toLocaleDateString(undefined, DATE);
    const until = expires ? `until ${expires}` : "until revoked";
    const inviter = state.users.get(invite.invited_by_user_id)?.full_name ?? "someone";
    const by = invite.invited_by_user_id === state.ownUserId ? "" : ` from ${inviter}`;
    const channels = invite.stream_ids.map((id) => state.streams.get(id)?.name).filter(Boolean);
    const into = channels.length ? `, into ${channels.map((name) => `#${name}`).join(", ")}` : "";
    const path = invite.is_multiuse ? `/invites/multiuse/${invite.id}` : `/invites/${invite.id}`;
    const label = invite.is_multiuse ? "Revoke the link" : `Revoke the invitation of ${invite.email}`;
    // Asked first (the web admin QA pass: the list drawn again put the focus on the next Revoke, and a
    // second Enter revoked another invitation).
    const revoke = async () => {
      const question = invite.is_multiuse
        ? "Revoke this link? Nobody can join with it any more."
        : `Revoke the invitation of ${invite.email}?`;
      if (!window.confirm(question)) return;
      try {
        await api("DELETE", path);
        say("The invitation was revoked.");
      } catch (error) {
        say(`Not revoked: ${error.message}`);
      }
      renderInvitations();
    };
    // An email invitation's link emailed again (it was lost, or went to spam), as Zulip's "Resend".
    const resend = async () => {
      try {
        await api("POST", `/invites/${invite.id}/resend`);
        say(`The invitation was sent to ${invite.email} again.`);
      } catch (error) {
        say(`Not sent again: ${error.message}`);
      }
    };
    return el(
      "li",
      { dataset: { inviteId: invite.id } },
      who,
      ` as ${ROLE_NAMES.get(invite.invited_as) ?? invite.invited_as}${into}, ${until} (made ${madeAt(invite.invited)}${by}) `,
      invite.is_multiuse
        ? null
        : el("button", { type: "button", onclick: resend, "aria-label": `Send the invitation to ${invite.email} again` }, "Resend"),
      " ",
      el("button", { type: "button", onclick: revoke, "aria-label": label }, "Revoke"),
    );
  });
  // The link shown above the list, revoked (here or elsewhere) or expired, is no longer offered to
  // copy (the web admin QA pass: "revoked", and still shown with its Copy button).
  if (!invites.some((invite) => invite.is_multiuse && invite.link_url === $("#invite-link").value)) {
    $("#invite-link-field").hidden = true;
    $("#invite-link").value = "";
  }
  // Drawn again (a revocation here or elsewhere): the focus, if it was in the list, stays in the
  // panel, so that Esc still closes it.
  const focused = $("#invite-list").contains(document.activeElement);
  $("#invite-list").replaceChildren(...(items.length ? items : [el("li", {}, "None.")]));
  if (focused) ($("#invite-list button") || $("#invite-role")).focus();
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
  // As the server reads them: one address a comma or a line, "Name <address>" too.
  const entries = emails.split(/[,\n]/).filter((entry) => entry.trim());
  try {
    await api("POST", "/invites", { invitee_emails: emails, ...chosen() });
  } catch (error) {
    if (!error.body?.sent_invitations) {
      say(`Not sent: ${refusal(error)}`);
      return;
    }
    // Sent to the others (Zulip's answer names those it was not sent to): only those stay in the box
    // (the web admin QA pass: "Not sent", all kept, and sent again).
    $("#invite-emails").value = error.body.errors.map(([email]) => email).join(", ");
    say(`Sent to the others; not to ${refusedAddresses(error.body.errors)}`);
    renderInvitations();
    return;
  }
  say(entries.length === 1 ? "The invitation was sent." : `${entries.length} invitations were sent.`);
  $("#invite-emails").value = "";
  renderInvitations();
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
  renderInvitations();
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
