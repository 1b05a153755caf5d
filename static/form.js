// The error summary's links move the focus to their field (browsers only
// scroll there), so a keyboard or screen reader user lands where they type.
(function () {
  "use strict";
  var summary = document.getElementById("error-summary");
  if (!summary) return;
  summary.addEventListener("click", function (event) {
    var link = event.target.closest("a[href^='#']");
    if (!link) return;
    var field = document.getElementById(link.getAttribute("href").slice(1));
    if (!field) return;
    event.preventDefault();
    var label = document.querySelector("label[for='" + field.id + "']") || field;
    label.scrollIntoView();
    field.focus();
  });
})();
