/*
 * Graded — the leaderboard's column chooser applies itself.
 *
 * The chooser is a plain GET form (sort, and one "show" per measure) with a Show button,
 * so it works without JavaScript. With it, the button is hidden and any change submits
 * the form at once (htmx boosts the request like a link). Loaded once with <script
 * defer>; no inline code or styles (the CSP forbids them); re-run after htmx swaps.
 */
(function () {
  "use strict";

  function hideButtons(root) {
    var buttons = (root || document).querySelectorAll("form[data-submit-on-change] [data-without-js]");
    for (var i = 0; i < buttons.length; i++) {
      buttons[i].hidden = true;
    }
  }

  document.addEventListener("change", function (event) {
    var form = event.target.closest && event.target.closest("form[data-submit-on-change]");
    if (!form) {
      return;
    }
    if (form.requestSubmit) {
      form.requestSubmit();
    } else {
      form.submit();
    }
  });
  document.addEventListener("DOMContentLoaded", function () {
    hideButtons(document);
  });
  document.addEventListener("htmx:load", function (event) {
    hideButtons(event.target);
  });
})();
