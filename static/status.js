// Checks a pending payment again at the interval the server gives, and
// updates the status in place (a polite live region announces it), so the
// page never reloads under the shopper. Without script, a meta refresh in
// <noscript> does the checking. Once paid, it counts down a few seconds
// and takes the shopper back to the shop, unless they choose to stay.
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
          var countdown = next.querySelector("[data-testid=countdown]");
          if (countdown && !document.querySelector("[data-testid=countdown]")) {
            document.querySelector("[data-testid=status]").after(document.importNode(countdown, true));
          }
          var again = next.querySelector("[data-testid=try-again]");
          if (again && !document.querySelector("[data-testid=try-again]") && link) {
            link.parentNode.before(document.importNode(again.parentNode, true));
          }
          document.title = next.title;
          countDown();
          schedule();
        })
        .catch(function () { setTimeout(schedule, seconds * 1000); });
    }, seconds * 1000);
  }

  function countDown() {
    var box = document.querySelector("[data-testid=countdown]");
    var link = document.querySelector("[data-testid=way-back]");
    // In a merchant's frame the page may not move the whole window without
    // the shopper's own click: the button stays, the countdown does not start.
    if (!box || !link || !box.hidden || window.top !== window.self) return;
    var left = parseInt(box.getAttribute("data-seconds"), 10) || 10;
    var shown = box.querySelector("[data-testid=countdown-seconds]");
    box.hidden = false;
    var timer = setInterval(function () {
      left--;
      shown.textContent = String(left);
      if (left > 0) return;
      clearInterval(timer);
      link.click();
    }, 1000);
    box.querySelector("[data-testid=stay]").addEventListener("click", function () {
      clearInterval(timer);
      box.hidden = true;
      link.focus();
    });
  }

  countDown();
  schedule();
})();
