// The "Notifications" part of the settings panel: the writer's own notification settings the server
// acts on (PATCH /json/settings; the emails sent while offline, the phones' notifications), kept
// current by `user_settings` events (another tab, another device). Every notification email links
// here (`#settings/notifications`, Zulip's address; the link led nowhere before).

import { api } from "./api.js";
import { $ } from "./state.js";

const boxes = () => [...document.querySelectorAll("#notification-settings input[data-setting]")];

// `settings`: register's user_settings.
export function loadNotificationSettings(settings = {}) {
  for (const box of boxes()) box.checked = settings[box.dataset.setting] === true;
}

// A `user_settings` event: its box, if it has one, shows the value.
export function notificationSettingChanged(property, value) {
  const box = boxes().find((each) => each.dataset.setting === property);
  if (box) box.checked = value === true;
}

async function save(event) {
  const box = event.target;
  const wanted = box.checked;
  const status = $("#notification-settings-status");
  status.textContent = "";
  try {
    await api("PATCH", "/settings", { [box.dataset.setting]: wanted });
    status.textContent = "Saved.";
  } catch (error) {
    box.checked = !wanted;
    status.textContent = `Not saved: ${error.message}`;
  }
}

export function setUpNotificationSettings() {
  for (const box of boxes()) box.addEventListener("change", save);
}
