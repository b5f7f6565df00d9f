/*
 * Graded — keyboard layer and timer of the judging card.
 *
 * Loaded once with <script defer>; every listener is delegated to `document`, so it keeps
 * working after htmx swaps the page body (hx-boost). No eval, no inline handlers, no inline
 * styles: the page's Content-Security-Policy forbids them.
 *
 * Keys (ignored while typing in a field, or with Ctrl/Alt/Meta held):
 *   0–4            grade and go on to the next pair
 *   Backspace, B   go back to the previous pair (it can be re-graded there)
 *   C              can't judge: asks for an optional reason (Enter confirms, Escape cancels)
 *   L              judge later
 *   N              focus the note (Escape leaves it)
 *   Ctrl+Z         undo your last change (history keeps both the change and the undo)
 * When a card is shown, its summary is announced in the live region #judge-live (kept
 * across swaps with hx-preserve) and focus moves to the document's heading. On narrow
 * screens the description/narrative/guidelines fold away and the page scrolls to the bar
 * above the card (saved line, Undo, Back, progress) and the card below it,
 * so the query line and the document's start are in view above the fixed grade bar.
 * The time spent on a card (visible time only) goes into the hidden `seconds` field.
 */
(function () {
  "use strict";

  var CARD = "[data-judging-card]";
  var DIALOG = "[data-cannot-judge-dialog]";

  var shownAt = performance.now();
  var hiddenSince = null;
  var hiddenTotal = 0;
  var submitting = false;

  function now() {
    return performance.now();
  }

  function card() {
    return document.querySelector(CARD);
  }

  function resetTimer() {
    shownAt = now();
    hiddenTotal = 0;
    hiddenSince = document.hidden ? now() : null;
    submitting = false;
  }

  function visibleSeconds() {
    var hidden = hiddenTotal + (hiddenSince === null ? 0 : now() - hiddenSince);
    return Math.max(0, (now() - shownAt - hidden) / 1000);
  }

  function isTyping(element) {
    return (
      element instanceof Element &&
      (element.isContentEditable || element.closest("input, textarea, select") !== null)
    );
  }

  function press(button) {
    if (button && !button.disabled) {
      button.click();
    }
  }

  function cannotJudgeButton(root) {
    return root.querySelector("button[data-cannot-judge]");
  }

  function openCannotJudge(root) {
    var dialog = root.querySelector(DIALOG);
    var button = cannotJudgeButton(root);
    if (!dialog || typeof dialog.showModal !== "function") {
      confirmCannotJudge(root, null); // no <dialog> support: the note field holds the reason
      return;
    }
    var input = dialog.querySelector("[data-cannot-judge-reason]");
    var note = root.querySelector("[data-note]");
    input.value = note ? note.value : "";
    if (button) {
      button.setAttribute("aria-expanded", "true");
    }
    dialog.showModal();
    input.focus();
    input.select();
  }

  function confirmCannotJudge(root, reason) {
    var dialog = root.querySelector(DIALOG);
    var note = root.querySelector("[data-note]");
    var button = cannotJudgeButton(root);
    if (reason !== null && note) {
      note.value = reason.trim();
    }
    if (dialog && dialog.open) {
      dialog.close("confirm");
    }
    if (button) {
      button.dataset.confirmed = "true";
      press(button);
    }
  }

  var NARROW = "(max-width: 56rem)";

  function narrow() {
    return typeof window.matchMedia === "function" && window.matchMedia(NARROW).matches;
  }

  // A new card (or the "all done" panel) is on screen: announce it, fold, scroll, focus.
  function cardShown(swapped) {
    var source = document.querySelector("[data-announce]");
    var live = document.getElementById("judge-live");
    if (!source) {
      return;
    }
    var more = document.querySelector("[data-query-more]");
    if (more && narrow()) {
      more.open = false;
    }
    if (live) {
      live.textContent = "";
      window.setTimeout(function () {
        live.textContent = source.getAttribute("data-announce");
      }, 30);
    }
    var root = card();
    if (swapped && root && narrow()) {
      // After htmx's own "scroll to the top of the page" for boosted requests. The bar
      // above the card comes into view with it: the "Saved" line, Undo, Back and the
      // progress are what a touch judge must see after a tap.
      var top = document.querySelector("[data-judge-bar]") || root;
      window.requestAnimationFrame(function () {
        top.scrollIntoView({ block: "start", behavior: "instant" });
      });
    }
    var heading = document.getElementById("doc-title") || document.getElementById("all-done-title");
    // A judge typing in a field (the note) keeps it: a swap that settles late, or one
    // elsewhere on the page, must never take keystrokes away.
    if (isTyping(document.activeElement)) {
      return;
    }
    if (heading && (swapped || document.activeElement === document.body)) {
      heading.focus({ preventScroll: true });
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    cardShown(false);
  });
  document.addEventListener("htmx:afterSettle", function () {
    cardShown(true);
  });
  if (typeof window.matchMedia === "function") {
    window.matchMedia(NARROW).addEventListener("change", function (event) {
      var more = document.querySelector("[data-query-more]");
      if (more) {
        more.open = !event.matches;
      }
    });
  }

  // Ctrl+Z (Cmd+Z): undo the last change, outside text fields, also on the "all done" page.
  document.addEventListener("keydown", function (event) {
    if (
      !(event.ctrlKey || event.metaKey) ||
      event.altKey ||
      event.shiftKey ||
      event.key.toLowerCase() !== "z" ||
      event.defaultPrevented ||
      isTyping(event.target)
    ) {
      return;
    }
    var form = document.querySelector("form[data-undo-form]");
    if (form && !submitting) {
      event.preventDefault();
      submitting = true;
      form.requestSubmit();
    }
  });

  // Time on the card: restart whenever a card is shown (first load, htmx swap, bfcache).
  document.addEventListener("DOMContentLoaded", resetTimer);
  document.addEventListener("htmx:afterSwap", resetTimer);
  document.addEventListener("htmx:afterSettle", resetTimer);
  window.addEventListener("pageshow", resetTimer);
  document.addEventListener("htmx:afterRequest", function (event) {
    if (event.detail && event.detail.successful === false) {
      submitting = false; // nothing was swapped in: let the judge try again
    }
  });
  document.addEventListener("visibilitychange", function () {
    if (document.hidden) {
      hiddenSince = now();
    } else if (hiddenSince !== null) {
      hiddenTotal += now() - hiddenSince;
      hiddenSince = null;
    }
  });

  // Fill in the seconds just before the card's form is sent; capture runs before htmx's
  // own submit listener. A second submit of the same card (a double key press) is dropped.
  document.addEventListener(
    "submit",
    function (event) {
      var form = event.target;
      if (!(form instanceof HTMLFormElement) || !form.matches("[data-judging-form]")) {
        return;
      }
      if (submitting) {
        event.preventDefault();
        event.stopImmediatePropagation();
        return;
      }
      var field = form.querySelector("[data-seconds]");
      if (field) {
        field.value = visibleSeconds().toFixed(3);
      }
      submitting = true;
    },
    true
  );

  // A click on "Can't judge" asks for the reason first (the key C does the same).
  document.addEventListener("click", function (event) {
    var target = event.target instanceof Element ? event.target : null;
    var root = card();
    if (!target || !root) {
      return;
    }
    var button = target.closest("button[data-cannot-judge]");
    if (button && root.contains(button)) {
      if (button.dataset.confirmed === "true") {
        delete button.dataset.confirmed;
        return; // confirmed: let the form submit
      }
      var dialog = root.querySelector(DIALOG);
      if (dialog && typeof dialog.showModal === "function") {
        event.preventDefault();
        openCannotJudge(root);
      }
      return;
    }
    if (target.closest("[data-dialog-confirm]")) {
      var input = root.querySelector("[data-cannot-judge-reason]");
      confirmCannotJudge(root, input ? input.value : "");
    } else if (target.closest("[data-dialog-cancel]")) {
      var open = root.querySelector(DIALOG);
      if (open && open.open) {
        open.close("cancel");
      }
    }
  });

  document.addEventListener("close", function (event) {
    var target = event.target;
    if (target instanceof Element && target.matches(DIALOG)) {
      var root = card();
      var button = root && cannotJudgeButton(root);
      if (button) {
        button.setAttribute("aria-expanded", "false");
      }
    }
  }, true);

  document.addEventListener("keydown", function (event) {
    var root = card();
    if (!root || event.defaultPrevented || event.isComposing) {
      return;
    }
    var target = event.target;

    // Inside the "can't judge" dialog: Enter confirms (Escape closes it natively).
    if (target instanceof Element && target.matches("[data-cannot-judge-reason]")) {
      if (event.key === "Enter" && !event.ctrlKey && !event.altKey && !event.metaKey) {
        event.preventDefault();
        confirmCannotJudge(root, target.value);
      }
      return;
    }
    var dialog = root.querySelector(DIALOG);
    if ((dialog && dialog.open) || event.ctrlKey || event.altKey || event.metaKey) {
      return;
    }
    if (isTyping(target)) {
      if (event.key === "Escape" && target instanceof HTMLElement) {
        target.blur(); // leave the note; keys work again
      }
      return;
    }
    if (event.repeat) {
      return;
    }

    var key = event.key;
    if (/^[0-4]$/.test(key)) {
      press(root.querySelector('button[name="grade"][value="' + key + '"]'));
    } else {
      switch (key.toLowerCase()) {
        case "backspace":
        case "b":
          var back = document.querySelector("a[data-key-back]");
          if (back) {
            back.click();
          }
          break;
        case "c":
          openCannotJudge(root);
          break;
        case "l":
          press(root.querySelector("button[data-later]"));
          break;
        case "n":
          var note = root.querySelector("[data-note]");
          if (note) {
            note.focus();
          }
          break;
        default:
          return;
      }
    }
    event.preventDefault();
  });
})();
