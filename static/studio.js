// Updates the studio's preview, contrast checks and JSON as the designer
// types. The server computes everything (/studio/check), so the maths lives in
// one place; without this script the Preview button does the same by a submit.
(function () {
  "use strict";
  var form = document.getElementById("studio-form");
  var preview = document.getElementById("studio-preview");
  if (!form || !preview || !window.fetch) return;
  var pending = null;

  function apply(data) {
    Object.keys(data.vars).forEach(function (name) {
      preview.style.setProperty(name, data.vars[name]);
    });
    Object.keys(data.ratios).forEach(function (id) {
      var li = document.getElementById("ratio-" + id);
      if (!li) return;
      li.querySelector("[data-role=value]").textContent = data.ratios[id].text;
      li.querySelector("[data-role=warning]").hidden = !data.ratios[id].warn;
      li.toggleAttribute("data-warn", data.ratios[id].warn);
    });
    document.getElementById("studio-json").textContent = data.json;
    var link = document.getElementById("preview-link");
    if (link && data.previewLink) link.href = data.previewLink;
    form.querySelectorAll("input, select").forEach(function (input) {
      var message = data.errors[input.name];
      var box = input.closest("[data-testid^=field-]");
      if (!box) return;
      var shown = box.querySelector("[data-testid=field-error]");
      if (message) {
        if (!shown) {
          shown = document.createElement("p");
          shown.className = "field-error";
          shown.id = input.id + "-error";
          shown.setAttribute("data-testid", "field-error");
          input.insertAdjacentElement("beforebegin", shown);
        }
        shown.textContent = message;
        input.setAttribute("aria-invalid", "true");
      } else {
        if (shown) shown.remove();
        input.removeAttribute("aria-invalid");
      }
    });
  }

  function check() {
    var query = new URLSearchParams(new FormData(form)).toString();
    fetch("/studio/check?" + query, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) { if (data) apply(data); })
      .catch(function () {});
  }

  form.addEventListener("input", function () {
    clearTimeout(pending);
    pending = setTimeout(check, 150);
  });
})();
