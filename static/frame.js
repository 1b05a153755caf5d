// Inside a merchant's iframe, tells the page around it how tall this page
// is, so that static/embed.js can size the frame to fit. Only a height is
// sent, nothing about the shopper, so any parent may read it.
(function () {
  "use strict";
  if (window.parent === window || !window.ResizeObserver) return;
  var last = 0;
  function send() {
    var height = Math.ceil(document.documentElement.scrollHeight);
    if (height === last) return;
    last = height;
    window.parent.postMessage({ type: "paybybank:height", height: height }, "*");
  }
  new ResizeObserver(send).observe(document.documentElement);
  send();
})();
