/*
 * Graded — leaderboard and run pages that follow the judgment list as it changes.
 *
 * The live part of those pages (#live-part, [data-live]) asks the server every few
 * seconds, with htmx, whether anything it shows has changed; the server answers 204
 * ("no change") or the page again, whose live part htmx swaps in. This script only
 * keeps that polite: no polling while the tab is hidden (the next tick after it shows
 * again catches up) or while the reader's own click is loading, and a short
 * announcement in #live-status for screen readers when the scores changed. Loaded once with <script defer>; no inline code (the CSP forbids it).
 */
(function () {
  "use strict";

  function isLive(elt) {
    return elt && elt.hasAttribute && elt.hasAttribute("data-live");
  }

  // A poll never races the reader: it waits while the page is hidden or another request
  // (a click on a link or a form in the page) is on its way, and a click aborts a poll in
  // flight — else the swap could remove the link whose answer htmx is waiting for.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail.elt;
    var live = document.querySelector("[data-live]");
    if (isLive(elt)) {
      if (document.hidden || document.querySelector(".htmx-request:not([data-live])")) {
        event.preventDefault();
      }
    } else if (live && window.htmx) {
      window.htmx.trigger(live, "htmx:abort");
    }
  });

  document.addEventListener("htmx:afterSettle", function (event) {
    var live = document.querySelector("[data-live]");
    var status = document.getElementById("live-status");
    if (!live || !status || !isLive(event.detail.elt)) {
      return;
    }
    status.textContent =
      "Scores updated: judgment list version " + live.getAttribute("data-live-version") + ".";
  });
})();
