// Inside a merchant's iframe: tells the page around it how tall this page's
// content is, so that static/embed.js sizes the frame to fit (shrinking as
// well as growing) and brings a new step's top into view; and keeps the
// details form inside the frame, so that a typo is answered there, leaving
// it only for the bank. Only heights and steps are sent, nothing about the
// shopper, so any parent may read them.
(function () {
  "use strict";
  if (window.parent === window) return;
  var root = document.documentElement;
  // The page fills the frame's height no longer: its own height is what
  // the frame should be.
  root.classList.add("in-frame");
  var last = 0;
  function height() {
    return Math.ceil(document.body ? document.body.getBoundingClientRect().height : root.scrollHeight);
  }
  function send() {
    var h = height();
    if (h === last) return;
    last = h;
    window.parent.postMessage({ type: "paybybank:height", height: h }, "*");
  }
  function start() {
    // A new page is a new step: the parent brings the frame's top into view.
    window.parent.postMessage({ type: "paybybank:step", height: height() }, "*");
    send();
    if (window.ResizeObserver) new ResizeObserver(send).observe(document.body);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();

  // The details form is sent from here. The answer replaces this page in
  // the frame (the form with its errors, say); when it is the way to the
  // bank, the top window goes there at once, while the click still counts
  // as the shopper's (browsers let a frame move the top window only then).
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.matches || !form.matches("[data-testid=pay-form]") || !window.fetch) return;
    event.preventDefault();
    var button = form.querySelector("[type=submit]");
    if (button) button.disabled = true;
    fetch(form.action, {
      method: "POST",
      body: new URLSearchParams(new FormData(form)),
      headers: { "X-Checkout-Frame": "1" },
      credentials: "same-origin",
    }).then(function (res) {
      return res.text();
    }).then(function (html) {
      var page = new DOMParser().parseFromString(html, "text/html");
      var bank = page.querySelector("[data-testid=to-bank]");
      if (bank) window.top.location.href = bank.href;
      document.open();
      document.write(html);
      document.close();
    }).catch(function () {
      // The request did not get through: send the form the plain way.
      form.submit();
    });
  });
})();
