// The account page: rotating the API key is asked first (the web admin QA pass: one click replaced
// it, and every app and script using the old one stopped working).

const rotate = document.querySelector("#rotate");
rotate?.form.addEventListener("submit", (event) => {
  const question = "Rotate your API key? Every app, bot script and zuliprc using the current one stops working.";
  if (!window.confirm(question)) event.preventDefault();
});
