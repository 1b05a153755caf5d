// Makes the Branding page's previews follow the designer's typing. The
// server computes everything (/console/branding/check: the look's custom
// properties, contrast checks and refusals), so the maths lives in one
// place. Colours and shapes are set on the previews' pages at once; a new
// title or logo reloads them with the look typed. Without this script the
// previews show the saved draft, and Save draft shows them anew.
(function () {
  "use strict";
  var form = document.getElementById("branding-form");
  var box = document.getElementById("branding-previews");
  if (!form || !box || !window.fetch || !window.URLSearchParams) return;
  var frames = box.querySelectorAll("iframe.brand-frame");
  var fields = ["title", "logoUrl", "logoHeight", "primaryColor", "bgColor", "spacing", "radius", "modalShadow"];
  var reloading = ["title", "logoUrl", "logoHeight"];
  var pending = null;
  var last = {};
  var vars = {};

  function look() {
    var q = new URLSearchParams();
    fields.forEach(function (name) {
      var input = form.elements[name];
      if (input) q.set(name, input.value);
    });
    return q;
  }

  function paint(frame) {
    var doc = frame.contentDocument;
    if (!doc || !doc.documentElement) return;
    Object.keys(vars).forEach(function (name) {
      doc.documentElement.style.setProperty(name, vars[name]);
    });
  }

  function reload(q) {
    var query = new URLSearchParams(box.getAttribute("data-query") || "");
    q.forEach(function (value, name) { query.set(name, value); });
    query.set("typed", "1");
    var page = document.getElementById("page");
    var src = "/console/branding/preview/" + encodeURIComponent(page ? page.value : box.getAttribute("data-page")) + "?" + query.toString();
    frames.forEach(function (frame) { frame.src = src; });
    var full = document.querySelector("[data-testid=preview-full]");
    if (full) full.href = src;
  }

  function apply(data, q) {
    vars = data.vars;
    frames.forEach(paint);
    Object.keys(data.checks).forEach(function (id) {
      var li = document.getElementById("check-" + id);
      if (!li) return;
      var c = data.checks[id];
      li.querySelector("[data-role=ratio]").textContent = c.ratio;
      li.querySelector("[data-role=warning]").hidden = !c.warn;
      li.querySelector("[data-role=advice]").textContent = c.advice;
      li.toggleAttribute("data-warn", c.warn);
      var use = li.querySelector("[data-role=use]");
      if (use) {
        use.hidden = !c.suggestion;
        use.value = c.field + ":" + c.suggestion;
        use.textContent = use.textContent.replace(/#[0-9A-Fa-f]{6}/, c.suggestion);
      }
    });
    fields.forEach(function (name) {
      var input = form.elements[name];
      var holder = input && input.closest("[data-testid^=field-]");
      if (!holder) return;
      var shown = holder.querySelector("[data-testid=field-error]");
      var message = data.errors[name];
      if (message) {
        if (!shown) {
          shown = document.createElement("p");
          shown.className = "field-error mb-1";
          shown.id = name + "-error";
          shown.setAttribute("data-testid", "field-error");
          input.insertAdjacentElement("beforebegin", shown);
        }
        shown.textContent = message;
        input.setAttribute("aria-invalid", "true");
        input.setAttribute("aria-describedby", name + "-error");
      } else if (shown) {
        shown.remove();
        input.removeAttribute("aria-invalid");
        input.setAttribute("aria-describedby", name + "-hint");
      }
    });
    if (reloading.some(function (name) { return last[name] !== undefined && last[name] !== q.get(name); })) reload(q);
    reloading.forEach(function (name) { last[name] = q.get(name); });
  }

  function check() {
    var q = look();
    fetch("/console/branding/check?" + q.toString(), { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) { if (data) apply(data, q); })
      .catch(function () {});
  }

  // A use-this-colour button fills its field here, without a submit.
  form.addEventListener("click", function (event) {
    var use = event.target.closest("[data-role=use]");
    if (!use) return;
    event.preventDefault();
    var parts = use.value.split(":");
    var input = form.elements[parts[0]];
    if (!input) return;
    input.value = parts[1];
    input.focus();
    check();
  });

  form.addEventListener("input", function () {
    clearTimeout(pending);
    pending = setTimeout(check, 150);
  });
  form.addEventListener("change", function () {
    clearTimeout(pending);
    pending = setTimeout(check, 0);
  });
  // A page reloaded into a frame takes the look typed so far.
  frames.forEach(function (frame) { frame.addEventListener("load", function () { paint(frame); }); });
  var page = document.getElementById("page");
  if (page) page.addEventListener("change", function () { reload(look()); });
  reloading.forEach(function (name) { last[name] = look().get(name); });
})();
