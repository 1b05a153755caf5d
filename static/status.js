// Checks a pending payment again at the interval the server gives, and
// updates the status in place (a polite live region announces it), so the
// page never reloads under the shopper. Without script, a meta refresh in
// <noscript> does the checking.
(function () {
  "use strict";
  function schedule() {
    var status = document.querySelector("[data-testid=status][data-next]");
    if (!status || !window.fetch || !window.DOMParser) return;
    var seconds = parseInt(status.getAttribute("data-refresh"), 10) || 5;
    setTimeout(function () {
      fetch(status.getAttribute("data-next"), { credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
        .then(function (html) {
          var next = new DOMParser().parseFromString(html, "text/html");
          var fresh = next.querySelector("[data-testid=status]");
          var back = next.querySelector("[data-testid=way-back]");
          if (!fresh) return Promise.reject("no status");
          status.replaceWith(document.importNode(fresh, true));
          var link = document.querySelector("[data-testid=way-back]");
          if (back && link) link.setAttribute("href", back.getAttribute("href"));
          document.title = next.title;
          schedule();
        })
        .catch(function () { setTimeout(schedule, seconds * 1000); });
    }, seconds * 1000);
  }
  schedule();
})();
