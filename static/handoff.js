// While the shopper pays on their phone, checks the order every few seconds
// and, once a payment has begun there, shows its status on this computer.
(function () {
  "use strict";
  var follow = document.querySelector("[data-testid=follow]");
  if (!follow || !window.fetch || !window.DOMParser) return;
  var result = follow.getAttribute("data-result");
  function check() {
    fetch(result, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var status = new DOMParser().parseFromString(html, "text/html").querySelector("[data-testid=status]");
        if (status && status.getAttribute("data-begun") === "true") {
          window.location.assign(result);
          return;
        }
        setTimeout(check, 3000);
      })
      .catch(function () { setTimeout(check, 5000); });
  }
  setTimeout(check, 3000);
})();
