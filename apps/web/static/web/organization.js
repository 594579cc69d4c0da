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

// A change to someone, then the list drawn again as the server has it; says how it went (and that
// the list could not be drawn again, if so: the menus may then show what was not saved).
async function change(method, path, params, done) {
  let said = done;
  let ok = true;
  try {
    await api(method, path, params);
  } catch (error) {
    said = `Not changed: ${error.message}`;
    ok = false;
  }
  const problem = await drawPeople();
  say(problem ? `${said} ${problem}` : said);
  return ok;
}

// A role is chosen in the menu, then given with the row's button (the web admin QA pass: an arrow
// key on the menu gave the role at once, and the list drawn again put the focus on someone else's
// menu: two presses made an administrator an owner).
function roleChoice(person, name, iAmOwner) {
  // An owner's role is an owner's to change.
  const locked = person.role === OWNER && !iAmOwner;
  const options = [...ROLE_NAMES].map(([role, label]) =>
    el("option", { value: role, selected: role === person.role, disabled: role === OWNER && !iAmOwner }, label),
  );
  const menu = el(
    "select",
    { "aria-label": `Role of ${name}`, disabled: locked, dataset: { control: "role", role: person.role } },
    options,
  );
  if (locked) return [menu];
  const give = el(
    "button",
    { type: "button", disabled: true, "aria-label": `Change the role of ${name}`, dataset: { control: "give-role" } },
    "Change",
  );
  menu.addEventListener("change", () => {
    give.disabled = Number(menu.value) === person.role;
  });
  give.addEventListener("click", async () => {
    const role = { role: Number(menu.value) };
    // One's own role lowered is not given back by oneself: asked first, as Zulip does (the web admin
    // QA pass: an administrator made themselves a member with one click).
    const demoting = person.user_id === state.ownUserId && role.role > person.role;
    const question = `Change your own role to ${ROLE_NAMES.get(role.role)}? You cannot give yourself back what you lose.`;
    if (demoting && !window.confirm(question)) {
      [menu.value, give.disabled] = [person.role, true];
      menu.focus();
      return;
    }
    const given = await change("PATCH", `/users/${person.user_id}`, role, `${name}'s role was changed.`);
    if (given || !menu.isConnected) return;
    // As it is, the list not drawn again: the focus goes to the menu before its button is disabled
    // (the verify QA pass: it fell to the page, and Esc no longer closed the panel).
    if (give === document.activeElement) menu.focus();
    [menu.value, give.disabled] = [person.role, true];
  });
  return [menu, " ", give];
}

function activation(person, name, iAmOwner) {
  // Not oneself; an owner only by owners (the server says so too).
  if (person.user_id === state.ownUserId || (person.role === OWNER && !iAmOwner)) return null;
  const control = { type: "button", dataset: { control: "activation" } };
  if (!person.is_active) {
    const reactivate = () => change("POST", `/users/${person.user_id}/reactivate`, {}, `${name} can log in again.`);
    return el("button", { ...control, onclick: reactivate, "aria-label": `Reactivate ${name}` }, "Reactivate");
  }
  const deactivate = () => {
    const question = `Deactivate ${name}? They are logged out and can no longer log in; their messages stay.`;
    if (window.confirm(question)) change("DELETE", `/users/${person.user_id}`, {}, `${name} was deactivated.`);
  };
  return el("button", { ...control, onclick: deactivate, "aria-label": `Deactivate ${name}` }, "Deactivate");
}

// The organization's people (not bots), by name, the deactivated ones too; answers what kept it from
// drawing them, if anything.
async function drawPeople() {
  let members;
  try {
    members = (await api("GET", "/users", { client_gravatar: false })).members;
  } catch (error) {
    return `The people cannot be listed: ${error.message}`;
  }
  const iAmOwner = members.some((person) => person.user_id === state.ownUserId && person.role === OWNER);
  const people = members.filter((person) => !person.is_bot).sort((a, b) => a.full_name.localeCompare(b.full_name));
  // Two people of one name are told apart by their addresses (a screen reader reads the labels).
  const seen = new Map();
  for (const person of people) seen.set(person.full_name, (seen.get(person.full_name) ?? 0) + 1);
  const rows = people.map((person) => {
    const address = person.delivery_email || person.email;
    const name = seen.get(person.full_name) > 1 ? `${person.full_name} (${address})` : person.full_name;
    return el(
      "li",
      { dataset: { userId: person.user_id }, class: person.is_active ? null : "deactivated" },
      el(
        "span",
        { class: "who" },
        bdi(person.full_name),
        " ",
        el("span", { class: "help" }, address, person.is_active ? "" : " (deactivated)"),
      ),
      el("span", { class: "controls" }, ...roleChoice(person, name, iAmOwner), " ", activation(person, name, iAmOwner)),
    );
  });
  // Drawn again (a change here or elsewhere): the focus, if it was in the list, stays on the same
  // person's control (else their menu), so that Esc still closes the panel and Enter does not act on
  // someone else.
  const focused = document.activeElement;
  const row = $("#people-admin").contains(focused) ? focused.closest("li")?.dataset.userId : null;
  // A role chosen but not yet given stays chosen (the verify QA pass: another's change drawn meanwhile
  // put it back).
  const chosen = [...document.querySelectorAll("#people-admin select[data-control=role]")]
    .filter((menu) => menu.value !== menu.dataset.role)
    .map((menu) => [menu.closest("li").dataset.userId, menu.value]);
  $("#people-admin").replaceChildren(...rows);
  for (const [userId, role] of chosen) {
    const menu = $(`#people-admin li[data-user-id="${userId}"] select[data-control=role]:not([disabled])`);
    const option = menu && [...menu.options].find((o) => o.value === role && !o.disabled);
    if (!option) continue;
    menu.value = role;
    menu.dispatchEvent(new Event("change"));
  }
  if (!row) return null;
  const same = (control) => $(`#people-admin li[data-user-id="${row}"] [data-control="${control}"]:not([disabled])`);
  (same(focused.dataset.control) || same("role") || $("#organization-name")).focus();
  return null;
}

export async function renderPeopleAdmin() {
  const problem = await drawPeople();
  if (problem) say(problem);
}

// Someone's role, name or activity changed (here, in another tab or by another administrator): an
// open panel shows it (the web admin QA pass: another administrator's change stayed unseen), once
// for a burst of such changes.
let redraw = null;
export function peopleChanged() {
  if ($("#organization")?.hidden !== false) return;
  clearTimeout(redraw);
  redraw = setTimeout(renderPeopleAdmin, 200);
}

// The organization renamed or described anew (here, in another tab or by another administrator):
// the form shows it, unless the field holds a change of one's own not yet saved (the web admin QA
// pass: the panel showed the old name until reloaded).
export function organizationChanged(property, value) {
  const field = { name: $("#organization-name"), description: $("#organization-description") }[property];
  if (!field) return;
  if (field.value === field.defaultValue) field.value = value;
  field.defaultValue = value;
}

export function setUpOrganization() {
  $("#organization-form").addEventListener("submit", saveOrganization);
  // Changed since: "Saved." is no longer true (the web admin QA pass: it stayed while the browser
  // refused an empty name).
  $("#organization-form").addEventListener("input", () => {
    $("#organization-status").textContent = "";
  });
}
