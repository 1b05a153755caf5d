// Filters the bank list as the shopper types. Without this script the search
// box is a plain GET form and works the same, one submit at a time.
(function () {
  "use strict";
  var input = document.getElementById("q");
  var list = document.querySelector("[data-testid=banks]");
  var count = document.querySelector("[data-testid=count]");
  if (!input || !list || !count) return;
  var items = Array.prototype.slice.call(list.querySelectorAll("li[data-search]"));
  var total = items.length;

  // fold matches the server's banks.Fold: lower case, accents and
  // punctuation gone.
  function fold(s) {
    return s.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, " ").trim();
  }

  function filter() {
    var words = fold(input.value).split(" ").filter(Boolean);
    var bic = input.value.replace(/\s+/g, "").toLowerCase();
    var shown = 0;
    items.forEach(function (li) {
      var text = li.getAttribute("data-search");
      var match = words.every(function (w) { return text.indexOf(w) !== -1; }) ||
        (bic.length >= 4 && (" " + text).indexOf(" " + bic) !== -1);
      li.hidden = !match;
      if (match) shown++;
    });
    // The sentences come translated from the page, with 999001 standing for
    // the number shown and 999002 for the total.
    var text = shown === total ? count.getAttribute("data-all") :
      shown === 0 ? count.getAttribute("data-none") : count.getAttribute("data-some");
    count.textContent = text.replace("999001", shown === total ? total : shown).replace("999002", total);
  }

  input.addEventListener("input", filter);
  if (input.value) filter();
})();
