// Sizes a merchant's pay-by-bank iframe to its content. Include it on the
// merchant's page after the iframe:
//
//   <iframe id="paybybank" src="https://pay.example/checkout?..." title="Pay by bank"
//           style="width:100%;border:0" allow="payment"></iframe>
//   <script src="https://pay.example/static/embed.js" data-frame="paybybank" async></script>
//
// The frame takes the height of the picker's content, shrinking and growing
// with each step, and when the shopper moves to another step whose top is
// out of sight (on a phone, after scrolling down a long list), the page
// scrolls to bring the frame's top into view. It accepts messages only from
// the picker's own origin (where this script came from) and only from that
// iframe's window.
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script) return;
  var origin = new URL(script.src).origin;
  var frameId = script.getAttribute("data-frame") || "paybybank";
  var steps = 0;
  window.addEventListener("message", function (event) {
    var frame = document.getElementById(frameId);
    if (!frame || event.origin !== origin || event.source !== frame.contentWindow) return;
    var data = event.data;
    if (!data || (data.type !== "paybybank:height" && data.type !== "paybybank:step") || typeof data.height !== "number") return;
    var height = Math.max(200, Math.min(Math.round(data.height), 10000));
    frame.style.height = height + "px";
    if (data.type === "paybybank:step" && steps++ > 0) {
      var top = frame.getBoundingClientRect().top;
      if (top < 0 || top > window.innerHeight * 0.5) {
        var smooth = !window.matchMedia("(prefers-reduced-motion: reduce)").matches;
        frame.scrollIntoView({ block: "start", behavior: smooth ? "smooth" : "auto" });
      }
    }
  });
})();
