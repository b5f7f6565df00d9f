/*
 * Graded — wide tables and charts that scroll sideways in their own box.
 *
 * A box that scrolls (wider content than its width, as tables do on a phone) is made
 * reachable by keyboard (tabindex 0, so arrow keys scroll it: WCAG 2.1.1), is named for
 * screen readers after its table's caption or the heading above it, and gets a visible
 * hint above it. Boxes that fit lose all three again (on a wider screen or after a
 * swap). Loaded once with <script defer>; no inline code or styles (the CSP forbids
 * them); re-run after htmx swaps and on resize.
 *
 * A tab bar that scrolls sideways on a phone (.tabs-line) says so: data-more="start",
 * "end" or "start end" names the sides with tabs out of view, and the CSS fades those
 * edges; the current tab is scrolled into view.
 */
(function () {
  "use strict";

  var BOXES = ".table-scroll, .data-table, .chart-scroll, .doc-extra, .prose pre, .prose table";
  var HINT = "scroll-hint";

  function label(box) {
    var caption = box.querySelector("caption");
    if (caption && caption.textContent.trim()) {
      return caption.textContent.trim();
    }
    for (var node = box; node && node !== document.body; node = node.parentElement) {
      for (var prev = node.previousElementSibling; prev; prev = prev.previousElementSibling) {
        if (/^H[1-6]$/.test(prev.tagName) && prev.textContent.trim()) {
          return prev.textContent.trim();
        }
      }
    }
    return "Table";
  }

  function mark(box) {
    if (box.parentElement && box.parentElement.closest(".is-scrollable")) {
      return; // the box around it scrolls already
    }
    var scrolls = box.scrollWidth > box.clientWidth + 1;
    var hint = box.previousElementSibling;
    var hinted = hint && hint.classList.contains(HINT);
    // A box the template made reachable itself (a list box that scrolls up and down:
    // tabindex, role and name in the HTML) keeps them; only what is added here is removed.
    var own = box.hasAttribute("tabindex") && !box.hasAttribute("data-scroll-marked");
    if (scrolls && !box.classList.contains("is-scrollable")) {
      box.classList.add("is-scrollable");
      if (!own) {
        box.setAttribute("data-scroll-marked", "");
        box.setAttribute("tabindex", "0");
        if (box.tagName !== "TABLE") {
          box.setAttribute("role", "region");
          box.setAttribute("aria-label", label(box) + " (scrolls sideways)");
        }
      }
      if (!hinted) {
        var p = document.createElement("p");
        p.className = HINT;
        p.setAttribute("aria-hidden", "true");
        p.textContent = "Scroll sideways for more \u2192";
        box.parentElement.insertBefore(p, box);
      }
    } else if (!scrolls && box.classList.contains("is-scrollable")) {
      box.classList.remove("is-scrollable");
      if (!own) {
        box.removeAttribute("data-scroll-marked");
        box.removeAttribute("tabindex");
        if (box.tagName !== "TABLE") {
          box.removeAttribute("role");
          box.removeAttribute("aria-label");
        }
      }
      if (hinted) {
        hint.remove();
      }
    }
  }

  function edges(bar) {
    var more = [];
    if (bar.scrollLeft > 1) {
      more.push("start");
    }
    if (bar.scrollLeft + bar.clientWidth < bar.scrollWidth - 1) {
      more.push("end");
    }
    if (more.length) {
      bar.setAttribute("data-more", more.join(" "));
    } else {
      bar.removeAttribute("data-more");
    }
  }

  function markBar(bar) {
    if (!bar.hasAttribute("data-edges")) {
      bar.setAttribute("data-edges", "");
      bar.addEventListener("scroll", function () {
        edges(bar);
      }, {passive: true});
      var current = bar.querySelector("[aria-current=page]");
      if (current && bar.scrollWidth > bar.clientWidth + 1) {
        var right = current.getBoundingClientRect().right - bar.getBoundingClientRect().left +
          bar.scrollLeft;
        if (right > bar.clientWidth) {
          bar.scrollLeft = right - bar.clientWidth + 24;
        }
      }
    }
    edges(bar);
  }

  function markAll() {
    document.querySelectorAll(BOXES).forEach(mark);
    document.querySelectorAll(".tabs-line").forEach(markBar);
  }

  var pending = null;
  function later() {
    if (pending === null) {
      pending = window.requestAnimationFrame(function () {
        pending = null;
        markAll();
      });
    }
  }

  document.addEventListener("DOMContentLoaded", markAll);
  document.addEventListener("htmx:afterSettle", later);
  window.addEventListener("resize", later);
  window.addEventListener("load", later);
})();
