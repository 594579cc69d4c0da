// The account page: rotating the API key is asked first (the web admin QA pass: one click replaced
// it, and every app and script using the old one stopped working).

const rotate = document.querySelector("#rotate");
rotate?.form.addEventListener("submit", (event) => {
  const question = "Rotate your API key? Every app, bot script and zuliprc using the current one stops working.";
  if (!window.confirm(question)) event.preventDefault();
});

// Making a bot: an outgoing webhook bot's endpoint and payload format shown for that kind only.
const kind = document.querySelector("#id_bot_type");
const showService = () => {
  const outgoing = kind.value === "3";
  for (const name of ["payload_url", "interface_type"]) document.querySelector(`#field-${name}`).hidden = !outgoing;
};
if (kind) {
  kind.addEventListener("change", showService);
  showService();
}

// A form refused: the focus on what to correct (the verify QA pass: it was on the page's start).
const refused = document.querySelector("#make-bot [aria-invalid=true]") ?? document.querySelector("#make-bot .errorlist");
if (refused) {
  refused.scrollIntoView({ block: "center" });
  (refused.matches("input, select") ? refused : document.querySelector("#make-bot input:not([type=hidden])")).focus();
}
