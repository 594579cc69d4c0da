// The "Organization" panel, for administrators (as Zulip's organization settings and its users
// list): the organization's name and description (PATCH /json/realm), and its people: their roles
// (PATCH /json/users/{id}), deactivating someone who left (DELETE /json/users/{id}) and reactivating
// them (POST /json/users/{id}/reactivate). The server checks everything again (an owner's role is
// given and taken by owners only, an organization keeps an owner) and says what it refuses.

import { api } from "./api.js";
import { $, ROLE_NAMES, state } from "./state.js";
import { bdi, el } from "./render.js";

const OWNER = 100;

async function saveOrganization(event) {
  event.preventDefault();
  const status = $("#organization-status");
  const nameField = $("#organization-name");
  const descriptionField = $("#organization-description");
  const changes = {};
  if (nameField.value.trim() !== nameField.defaultValue) changes.name = nameField.value.trim();
  if (descriptionField.value !== descriptionField.defaultValue) changes.description = descriptionField.value;
  if (!Object.keys(changes).length) {
    status.textContent = "Nothing to save.";
    return;
  }
  try {
    await api("PATCH", "/realm", changes);
  } catch (error) {
    status.textContent = `Not saved: ${error.message}`;
    return;
  }
  nameField.defaultValue = nameField.value = nameField.value.trim();
  descriptionField.defaultValue = descriptionField.value;
  status.textContent = "Saved.";
}

function say(text) {
  $("#people-admin-status").textContent = text;
  if (text) $("#people-admin-status").scrollIntoView({ block: "nearest" });
}

// A change to someone, then the list drawn again as the server has it.
async function change(method, path, params, done) {
  try {
    await api(method, path, params);
    say(done);
  } catch (error) {
    say(`Not changed: ${error.message}`);
  }
  renderPeopleAdmin();
}

function roleChoice(person, iAmOwner) {
  const changed = `${person.full_name}'s role was changed.`;
  const setRole = (event) => change("PATCH", `/users/${person.user_id}`, { role: Number(event.target.value) }, changed);
  const options = [...ROLE_NAMES].map(([role, name]) =>
    el("option", { value: role, selected: role === person.role, disabled: role === OWNER && !iAmOwner }, name),
  );
  // An owner's role is an owner's to change.
  const locked = person.role === OWNER && !iAmOwner;
  return el("select", { "aria-label": `Role of ${person.full_name}`, disabled: locked, onchange: setRole }, options);
}

function activation(person) {
  if (person.user_id === state.ownUserId) return null;
  const name = person.full_name;
  if (!person.is_active) {
    const reactivate = () => change("POST", `/users/${person.user_id}/reactivate`, {}, `${name} can log in again.`);
    return el("button", { type: "button", onclick: reactivate, "aria-label": `Reactivate ${name}` }, "Reactivate");
  }
  const deactivate = () => {
    const question = `Deactivate ${name}? They are logged out and can no longer log in; their messages stay.`;
    if (window.confirm(question)) change("DELETE", `/users/${person.user_id}`, {}, `${name} was deactivated.`);
  };
  return el("button", { type: "button", onclick: deactivate, "aria-label": `Deactivate ${name}` }, "Deactivate");
}

// The organization's people (not bots), by name, the deactivated ones too.
export async function renderPeopleAdmin() {
  let members;
  try {
    members = (await api("GET", "/users", { client_gravatar: false })).members;
  } catch (error) {
    say(`The people cannot be listed: ${error.message}`);
    return;
  }
  const iAmOwner = members.some((person) => person.user_id === state.ownUserId && person.role === OWNER);
  const people = members.filter((person) => !person.is_bot).sort((a, b) => a.full_name.localeCompare(b.full_name));
  // Drawn again: the focus, if it was in the list, stays in the panel (Esc still closes it).
  const focused = $("#people-admin").contains(document.activeElement);
  $("#people-admin").replaceChildren(
    ...people.map((person) =>
      el(
        "li",
        { dataset: { userId: person.user_id }, class: person.is_active ? null : "deactivated" },
        bdi(person.full_name),
        " ",
        el("span", { class: "help" }, person.delivery_email || person.email, person.is_active ? "" : " (deactivated)"),
        " ",
        roleChoice(person, iAmOwner),
        " ",
        activation(person),
      ),
    ),
  );
  if (focused) ($("#people-admin select:not([disabled])") || $("#organization-name")).focus();
}

export function setUpOrganization() {
  $("#organization-form").addEventListener("submit", saveOrganization);
}
