/*
 * Graded — the column chooser of wide tables, and forms that apply on change (docs/ui.md).
 *
 * A chooser is the include templates/_column_chooser.html: a <details class="col-chooser"
 * data-columns-for="<table id>"> with one checkbox per column that may be hidden. The
 * table's header cells name their columns (<th data-col="key">); a column without one
 * (the row header) always shows.
 *
 * - A table's own chooser (no data-columns-param): the checkboxes are built here from the
 *   headers, unticking one sets the hidden attribute on that column's cells (no style
 *   attribute: the CSP forbids them), and the hidden columns are kept in localStorage
 *   ("graded:columns:<key>") and applied again on every visit. Without JavaScript the
 *   chooser stays hidden and every column shows.
 * - A chooser the server renders (data-columns-param="show", the leaderboard): the columns
 *   are chosen on the server, by a GET form that works without JavaScript. Here a change
 *   remembers the shown columns in a cookie ("graded_columns_<key>", read by the view
 *   when the address does not choose) and submits the form at once.
 *
 * Any form[data-submit-on-change] submits when one of its fields changes (its
 * [data-without-js] buttons are hidden). Loaded once with <script defer>; no inline code;
 * runs again on the parts htmx swaps in.
 */
(function () {
  "use strict";

  var PREFIX = "graded:columns:";

  function storageKey(chooser) {
    return PREFIX + (chooser.getAttribute("data-columns-key") || chooser.getAttribute("data-columns-for"));
  }

  function readHidden(chooser) {
    try {
      var value = JSON.parse(window.localStorage.getItem(storageKey(chooser)) || "null");
      return Array.isArray(value) ? value : null;
    } catch (error) {
      return null;
    }
  }

  function writeHidden(chooser, hidden) {
    try {
      window.localStorage.setItem(storageKey(chooser), JSON.stringify(hidden));
    } catch (error) {
      /* storage full or refused: the choice lasts until the page is left */
    }
  }

  function headerCells(table) {
    return table.tHead && table.tHead.rows.length ? table.tHead.rows[0].cells : [];
  }

  function labelOf(th) {
    if (th.getAttribute("data-col-label")) {
      return th.getAttribute("data-col-label");
    }
    var copy = th.cloneNode(true);
    var extras = copy.querySelectorAll("[aria-hidden], .visually-hidden");
    for (var i = 0; i < extras.length; i++) {
      extras[i].remove();
    }
    return copy.textContent.replace(/\s+/g, " ").trim();
  }

  /* Hide (or show) every cell of the columns whose key is in `hidden`. */
  function applyHidden(table, hidden) {
    var heads = headerCells(table);
    for (var c = 0; c < heads.length; c++) {
      var key = heads[c].getAttribute("data-col");
      if (!key) {
        continue;
      }
      var hide = hidden.indexOf(key) !== -1;
      heads[c].hidden = hide;
      for (var b = 0; b < table.tBodies.length; b++) {
        var rows = table.tBodies[b].rows;
        for (var r = 0; r < rows.length; r++) {
          if (rows[r].cells[c]) {
            rows[r].cells[c].hidden = hide;
          }
        }
      }
    }
  }

  function boxes(chooser) {
    return chooser.querySelectorAll("input[type=checkbox][data-col]");
  }

  function build(chooser, table) {
    var fieldset = chooser.querySelector("fieldset");
    if (!fieldset || boxes(chooser).length) {
      return;
    }
    var heads = headerCells(table);
    for (var c = 0; c < heads.length; c++) {
      var key = heads[c].getAttribute("data-col");
      if (!key) {
        continue;
      }
      var label = document.createElement("label");
      label.className = "col-choice";
      var box = document.createElement("input");
      box.type = "checkbox";
      box.setAttribute("data-col", key);
      box.checked = !heads[c].hidden;
      label.appendChild(box);
      label.appendChild(document.createTextNode(" " + labelOf(heads[c])));
      fieldset.appendChild(label);
    }
  }

  function count(chooser) {
    var all = boxes(chooser);
    var on = 0;
    for (var i = 0; i < all.length; i++) {
      if (all[i].checked) {
        on += 1;
      }
    }
    var out = chooser.querySelector("[data-columns-count]");
    if (out) {
      out.textContent = "(" + on + " of " + all.length + ")";
    }
  }

  function hiddenKeys(chooser) {
    var all = boxes(chooser);
    var hidden = [];
    for (var i = 0; i < all.length; i++) {
      if (!all[i].checked && !all[i].disabled) {
        hidden.push(all[i].getAttribute("data-col"));
      }
    }
    return hidden;
  }

  function setUp(chooser) {
    var table = document.getElementById(chooser.getAttribute("data-columns-for"));
    if (!table || chooser.hasAttribute("data-columns-param")) {
      count(chooser);
      return;
    }
    build(chooser, table);
    var stored = readHidden(chooser);
    if (stored) {
      var all = boxes(chooser);
      for (var i = 0; i < all.length; i++) {
        if (!all[i].disabled) {
          all[i].checked = stored.indexOf(all[i].getAttribute("data-col")) === -1;
        }
      }
    }
    applyHidden(table, hiddenKeys(chooser));
    count(chooser);
    chooser.hidden = false;
  }

  function setUpAll(root) {
    var scope = root || document;
    var choosers = scope.querySelectorAll("details[data-columns-for]");
    if (scope.matches && scope.matches("details[data-columns-for]")) {
      choosers = [scope];
    }
    for (var i = 0; i < choosers.length; i++) {
      setUp(choosers[i]);
    }
    /* A swapped-in table whose chooser stayed outside the swapped part. */
    var tables = scope.querySelectorAll ? scope.querySelectorAll("table[id]") : [];
    for (var t = 0; t < tables.length; t++) {
      var outside = document.querySelector('details[data-columns-for="' + tables[t].id + '"]');
      if (outside && !scope.contains(outside) && !outside.hasAttribute("data-columns-param")) {
        applyHidden(tables[t], hiddenKeys(outside));
      }
    }
    var buttons = scope.querySelectorAll("form[data-submit-on-change] [data-without-js]");
    for (var b = 0; b < buttons.length; b++) {
      buttons[b].hidden = true;
    }
  }

  function remember(chooser) {
    var key = chooser.getAttribute("data-columns-key") || chooser.getAttribute("data-columns-for");
    var all = boxes(chooser);
    var shown = [];
    for (var i = 0; i < all.length; i++) {
      if (all[i].checked) {
        shown.push(all[i].value);
      }
    }
    document.cookie = "graded_columns_" + key + "=" + encodeURIComponent(JSON.stringify(shown)) +
      "; path=/; max-age=31536000; SameSite=Lax";
  }

  document.addEventListener("change", function (event) {
    var target = event.target;
    var chooser = target.closest && target.closest("details[data-columns-for]");
    if (chooser && !chooser.hasAttribute("data-columns-param")) {
      var table = document.getElementById(chooser.getAttribute("data-columns-for"));
      var hidden = hiddenKeys(chooser);
      if (table) {
        applyHidden(table, hidden);
      }
      writeHidden(chooser, hidden);
      count(chooser);
      return;
    }
    if (chooser) {
      remember(chooser);
    }
    var form = target.closest && target.closest("form[data-submit-on-change]");
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
    setUpAll(document);
  });
  document.addEventListener("htmx:load", function (event) {
    setUpAll(event.target);
  });
})();
