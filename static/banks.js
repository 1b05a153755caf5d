// Filters the bank list as the shopper types, without a Search button.
// A list held whole on the page is filtered in place; a long list shown in
// ranges, or a search that finds nothing here, asks the server, whose answer
// (the matches, other countries that have them, a way forward) takes the
// results' place. Without this script the search box is a plain GET form and
// works the same, one submit at a time.
(function () {
  "use strict";
  var input = document.getElementById("q");
  var form = document.querySelector("[data-testid=search]");
  var results = document.querySelector("[data-testid=results]");
  if (!input || !form || !results) return;
  var button = form.querySelector("button[type=submit]");
  if (button) button.hidden = true; // Enter still sends the form
  var whole = results; // the page's own results, all banks or one range
  var partial = whole.hasAttribute("data-partial");
  var country = form.querySelector("input[name=country]").value;
  var asked = 0;

  // fold matches the server's banks.Fold: lower case, accents and
  // punctuation gone, ß and final ς as Unicode case folding has them.
  function fold(s) {
    return s.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase()
      .replace(/ß/g, "ss").replace(/ς/g, "σ")
      .replace(/[^\p{L}\p{N}]+/gu, " ").trim();
  }

  function show(node) {
    var current = document.querySelector("[data-testid=results]");
    if (current !== node) current.replaceWith(node);
  }

  // filterHere filters the page's own list and returns how many banks match.
  function filterHere(query) {
    show(whole);
    var items = Array.prototype.slice.call(whole.querySelectorAll("[data-testid=banks] li[data-search]"));
    var count = whole.querySelector("[data-testid=count]");
    var words = fold(query).split(" ").filter(Boolean);
    var bic = query.replace(/\s+/g, "").toLowerCase();
    var shown = 0;
    items.forEach(function (li) {
      var text = li.getAttribute("data-search");
      var match = words.every(function (w) { return text.indexOf(w) !== -1; }) ||
        (bic.length >= 4 && (" " + text).indexOf(" " + bic) !== -1);
      li.hidden = !match;
      if (match) shown++;
    });
    whole.querySelectorAll("[data-testid=popular], [data-testid=last-used]").forEach(function (ul) {
      ul.hidden = words.length > 0;
      if (ul.previousElementSibling && ul.previousElementSibling.tagName === "H2") ul.previousElementSibling.hidden = words.length > 0;
    });
    // The sentences come translated from the page, with 999001 standing for
    // the number shown and 999002 for the total.
    var total = items.length;
    var text = shown === total ? count.getAttribute("data-all") :
      shown === 0 ? count.getAttribute("data-none") : count.getAttribute("data-some");
    count.textContent = text.replace("999001", shown === total ? total : shown).replace("999002", total);
    return shown;
  }

  // askServer shows the server's results for query.
  function askServer(query) {
    var mine = ++asked;
    var params = new URLSearchParams({ country: country });
    if (query) params.set("q", query);
    fetch(form.getAttribute("action") + "?" + params.toString(), { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        if (mine !== asked) return; // the shopper typed on
        var fresh = new DOMParser().parseFromString(html, "text/html").querySelector("[data-testid=results]");
        if (fresh) show(document.importNode(fresh, true));
      })
      .catch(function () { /* the list stays as it was; Enter still searches */ });
  }

  var timer;
  function filter() {
    clearTimeout(timer);
    var query = input.value.trim();
    if (!partial) {
      asked++; // an answer on its way is no longer wanted
      if (filterHere(query) > 0 || query.length < 2) return;
    }
    timer = setTimeout(function () {
      if (partial && !query) { asked++; show(whole); return; }
      askServer(query);
    }, 250);
  }

  input.addEventListener("input", filter);
  if (input.value && !partial) filterHere(input.value.trim());
})();
