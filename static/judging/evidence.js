/*
 * Graded — evidence spans on the judging card (judging/evidence.py is the server's side).
 *
 * A judge selects text in the document's body — with the mouse, by pressing and holding on
 * a touch screen, or with the keyboard — and adds it as evidence for the grade. Spans are
 * highlighted in the body, listed under it (each can be removed) and sent with the label
 * in the hidden `evidence` field as [{"start", "end", "text"}].
 *
 * Offsets: the server counts Unicode code points in the body's text (its text nodes, in
 * order); JavaScript strings count UTF-16 units, so an emoji is 2 here and 1 there. The
 * card works in UTF-16 on the concatenated text nodes and converts at the edges
 * (toPoints / fromPoints).
 *
 * Keys (outside text fields, no Ctrl/Alt/Meta):
 *   A              add the selected text as evidence
 *   E              evidence mode: the keyboard selects, starting at the first word
 *     ← →          previous / next word (Shift: shrink / extend the selection by a word)
 *     ↑ ↓          previous / next sentence (Shift: extend to the previous / next one)
 *     Enter        add the selection as evidence
 *     Delete, ⌫    remove the last span
 *     Esc, E       leave evidence mode
 * Grades (0–4) and the card's other keys keep working. No eval, no inline handlers or
 * styles (the page's Content-Security-Policy forbids them).
 */
(function () {
  "use strict";

  var state = null; // {root, body, field, spans: [[start, end]] in UTF-16, pending, mode}

  function isHigh(code) {
    return code >= 0xd800 && code <= 0xdbff;
  }

  function isLow(code) {
    return code >= 0xdc00 && code <= 0xdfff;
  }

  // The body's text nodes and where each starts in their concatenation (UTF-16).
  function textModel(body) {
    var walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
    var nodes = [];
    var starts = [];
    var text = "";
    var node;
    while ((node = walker.nextNode())) {
      nodes.push(node);
      starts.push(text.length);
      text += node.data;
    }
    return { nodes: nodes, starts: starts, text: text };
  }

  // UTF-16 offset -> code points, and back.
  function toPoints(text, offset) {
    var count = 0;
    for (var i = 0; i < offset; i++) {
      if (!(isLow(text.charCodeAt(i)) && i > 0 && isHigh(text.charCodeAt(i - 1)))) {
        count++;
      }
    }
    return count;
  }

  function fromPoints(text, points) {
    var i = 0;
    while (points > 0 && i < text.length) {
      i += isHigh(text.charCodeAt(i)) && isLow(text.charCodeAt(i + 1)) ? 2 : 1;
      points--;
    }
    return i;
  }

  // A DOM boundary point -> UTF-16 offset in the body's text (clamped to the body).
  function offsetOf(body, node, offset, size) {
    var whole = document.createRange();
    whole.selectNodeContents(body);
    var where = whole.comparePoint(node, offset);
    if (where < 0) {
      return 0;
    }
    if (where > 0) {
      return size;
    }
    var range = document.createRange();
    range.setStart(body, 0);
    range.setEnd(node, offset);
    return range.toString().length;
  }

  // UTF-16 offset -> a DOM boundary point (text node, offset).
  function pointAt(model, offset, isEnd) {
    var nodes = model.nodes;
    for (var i = 0; i < nodes.length; i++) {
      var start = model.starts[i];
      var end = start + nodes[i].data.length;
      if (offset < end || (isEnd && offset === end) || i === nodes.length - 1) {
        return { node: nodes[i], offset: Math.min(Math.max(offset - start, 0), nodes[i].data.length) };
      }
    }
    return null;
  }

  // Trim white space off both ends of [start, end).
  function trimmed(text, start, end) {
    while (start < end && /\s/.test(text.charAt(start))) {
      start++;
    }
    while (end > start && /\s/.test(text.charAt(end - 1))) {
      end--;
    }
    return end > start ? [start, end] : null;
  }

  function merged(spans) {
    var sorted = spans.slice().sort(function (a, b) {
      return a[0] - b[0] || a[1] - b[1];
    });
    var out = [];
    sorted.forEach(function (span) {
      var last = out[out.length - 1];
      if (last && span[0] <= last[1]) {
        last[1] = Math.max(last[1], span[1]);
      } else {
        out.push([span[0], span[1]]);
      }
    });
    return out;
  }

  // --- drawing -----------------------------------------------------------------------

  function unmark(body) {
    var marks = body.querySelectorAll("mark.evidence-mark");
    marks.forEach(function (mark) {
      var parent = mark.parentNode;
      while (mark.firstChild) {
        parent.insertBefore(mark.firstChild, mark);
      }
      parent.removeChild(mark);
    });
    body.normalize();
  }

  function mark(body, spans) {
    var model = textModel(body);
    var pieces = [];
    spans.forEach(function (span, index) {
      model.nodes.forEach(function (node, i) {
        var start = model.starts[i];
        var end = start + node.data.length;
        var from = Math.max(span[0], start);
        var to = Math.min(span[1], end);
        if (from < to) {
          pieces.push({ node: node, from: from - start, to: to - start, at: from, index: index });
        }
      });
    });
    pieces.sort(function (a, b) {
      return b.at - a.at; // last first: splitting a node keeps its earlier part in place
    });
    pieces.forEach(function (piece) {
      var middle = piece.node.splitText(piece.from);
      middle.splitText(piece.to - piece.from);
      var element = document.createElement("mark");
      element.className = "evidence-mark";
      element.setAttribute("data-evidence-index", String(piece.index + 1));
      middle.parentNode.insertBefore(element, middle);
      element.appendChild(middle);
    });
  }

  function quote(text, limit) {
    var flat = text.replace(/\s+/g, " ");
    return flat.length > limit ? flat.slice(0, limit - 1) + "…" : flat;
  }

  function render() {
    var s = state;
    unmark(s.body);
    var model = textModel(s.body);
    s.spans = merged(s.spans);
    mark(s.body, s.spans);
    s.field.value = JSON.stringify(
      s.spans.map(function (span) {
        return {
          start: toPoints(model.text, span[0]),
          end: toPoints(model.text, span[1]),
          text: model.text.slice(span[0], span[1]),
        };
      })
    );
    var list = s.root.querySelector("[data-evidence-list]");
    var empty = s.root.querySelector("[data-evidence-empty]");
    if (list) {
      list.textContent = "";
      s.spans.forEach(function (span, index) {
        var item = document.createElement("li");
        var text = document.createElement("q");
        text.textContent = quote(model.text.slice(span[0], span[1]), 160);
        var remove = document.createElement("button");
        remove.type = "button";
        remove.className = "button button-small";
        remove.setAttribute("data-evidence-remove", String(index));
        remove.setAttribute("aria-label", "Remove evidence " + (index + 1));
        remove.textContent = "Remove";
        item.appendChild(text);
        item.appendChild(document.createTextNode(" "));
        item.appendChild(remove);
        list.appendChild(item);
      });
    }
    if (empty) {
      empty.hidden = s.spans.length > 0;
    }
  }

  function showPending() {
    var s = state;
    var button = s.root.querySelector("[data-evidence-add]");
    var line = s.root.querySelector("[data-evidence-pending]");
    if (button) {
      button.disabled = !s.pending;
      button.classList.toggle("is-pending", Boolean(s.pending));
    }
    if (line && s.pending) {
      var text = textModel(s.body).text;
      line.textContent = "Selected: “" + quote(text.slice(s.pending[0], s.pending[1]), 80) + "”";
    } else if (line) {
      line.textContent = s.spans.length
        ? s.spans.length + (s.spans.length === 1 ? " span" : " spans") + " of evidence."
        : line.getAttribute("data-idle") || line.textContent;
    }
  }

  // --- selecting ---------------------------------------------------------------------

  // The current DOM selection inside the body, as trimmed UTF-16 offsets, or null.
  function selectionOffsets() {
    var s = state;
    var selection = window.getSelection();
    if (!selection || selection.rangeCount === 0 || selection.isCollapsed) {
      return null;
    }
    var range = selection.getRangeAt(0);
    if (!range.intersectsNode(s.body)) {
      return null;
    }
    var model = textModel(s.body);
    var size = model.text.length;
    var start = offsetOf(s.body, range.startContainer, range.startOffset, size);
    var end = offsetOf(s.body, range.endContainer, range.endOffset, size);
    return trimmed(model.text, Math.min(start, end), Math.max(start, end));
  }

  function select(start, end) {
    var model = textModel(state.body);
    var a = pointAt(model, start, false);
    var b = pointAt(model, end, true);
    if (!a || !b) {
      return;
    }
    var selection = window.getSelection();
    selection.setBaseAndExtent(a.node, a.offset, b.node, b.offset);
    var element = a.node.parentElement;
    if (element) {
      element.scrollIntoView({ block: "nearest" });
    }
  }

  function addPending() {
    var s = state;
    var span = s.pending || selectionOffsets();
    if (!span) {
      return false;
    }
    s.spans.push(span);
    s.lastAdded = span;
    s.pending = null;
    var selection = window.getSelection();
    if (selection) {
      selection.removeAllRanges();
    }
    render();
    if (s.mode) {
      // keep going from the word after the span
      var words = wordRanges(textModel(s.body).text);
      var next = words.findIndex(function (w) {
        return w[0] >= span[1];
      });
      s.cursor = next < 0 ? null : { first: next, last: next };
    }
    showPending();
    return true;
  }

  function wordRanges(text) {
    var out = [];
    var pattern = /\S+/g;
    var match;
    while ((match = pattern.exec(text))) {
      out.push([match.index, match.index + match[0].length]);
    }
    return out;
  }

  // Sentences as ranges of word indexes: a word ending in . ! or ? (or before a line
  // break) ends one.
  function sentenceOf(words, text, index) {
    function ends(i) {
      var w = words[i];
      return /[.!?]["'”’)\]]*$/.test(text.slice(w[0], w[1])) ||
        (i + 1 < words.length && /\n/.test(text.slice(w[1], words[i + 1][0])));
    }
    var first = index;
    while (first > 0 && !ends(first - 1)) {
      first--;
    }
    var last = index;
    while (last < words.length - 1 && !ends(last)) {
      last++;
    }
    return [first, last];
  }

  function showCursor() {
    var s = state;
    var words = wordRanges(textModel(s.body).text);
    if (!s.cursor || !words.length) {
      return;
    }
    var first = Math.max(0, Math.min(s.cursor.first, words.length - 1));
    var last = Math.max(first, Math.min(s.cursor.last, words.length - 1));
    s.cursor = { first: first, last: last };
    select(words[first][0], words[last][1]);
    s.pending = [words[first][0], words[last][1]];
    showPending();
  }

  function setMode(on) {
    var s = state;
    s.mode = on;
    s.root.classList.toggle("is-evidence-mode", on);
    var hint = s.root.querySelector("[data-evidence-mode-hint]");
    if (hint) {
      hint.hidden = !on;
    }
    if (on) {
      var current = selectionOffsets();
      var words = wordRanges(textModel(s.body).text);
      var first = 0;
      if (current) {
        first = Math.max(0, words.findIndex(function (w) {
          return w[1] > current[0];
        }));
      }
      s.cursor = { first: first, last: first };
      showCursor();
    } else {
      s.cursor = null;
    }
  }

  function moveCursor(key, extend) {
    var s = state;
    var text = textModel(s.body).text;
    var words = wordRanges(text);
    if (!words.length) {
      return;
    }
    var c = s.cursor || { first: 0, last: 0 };
    var sentence;
    if (key === "ArrowRight") {
      c = extend ? { first: c.first, last: c.last + 1 } : { first: c.last + 1, last: c.last + 1 };
    } else if (key === "ArrowLeft") {
      if (extend) {
        c = { first: c.first, last: Math.max(c.first, c.last - 1) };
      } else {
        c = { first: c.first - 1, last: c.first - 1 };
      }
    } else if (key === "ArrowDown") {
      sentence = sentenceOf(words, text, Math.min(c.last + 1, words.length - 1));
      c = extend ? { first: c.first, last: sentence[1] } : { first: sentence[0], last: sentence[1] };
    } else if (key === "ArrowUp") {
      sentence = sentenceOf(words, text, Math.max(c.first - 1, 0));
      c = extend ? { first: sentence[0], last: c.last } : { first: sentence[0], last: sentence[1] };
    }
    s.cursor = c;
    showCursor();
  }

  // Remove the span added last (the one that now holds it, if merged), else the last one.
  function removeLast() {
    var s = state;
    var at = s.spans.length - 1;
    if (s.lastAdded) {
      var start = s.lastAdded[0];
      var found = s.spans.findIndex(function (span) {
        return span[0] <= start && start < span[1];
      });
      at = found < 0 ? at : found;
    }
    if (at >= 0) {
      s.spans.splice(at, 1);
    }
    s.lastAdded = null;
    render();
    showPending();
  }

  // --- wiring ------------------------------------------------------------------------

  function setUp() {
    var root = document.querySelector("[data-judging-card]");
    var field = root && root.querySelector("[data-evidence-field]");
    var body = root && root.querySelector("[data-doc-body]");
    if (!field || !body) {
      state = null;
      return;
    }
    var line = root.querySelector("[data-evidence-pending]");
    if (line) {
      line.setAttribute("data-idle", line.textContent);
    }
    state = { root: root, body: body, field: field, spans: [], pending: null, mode: false };
    var model = textModel(body);
    var given = [];
    try {
      given = JSON.parse(field.value || "[]");
    } catch (error) {
      given = [];
    }
    (Array.isArray(given) ? given : []).forEach(function (span) {
      if (span && typeof span.start === "number" && typeof span.end === "number") {
        var start = fromPoints(model.text, span.start);
        var end = fromPoints(model.text, span.end);
        if (end > start) {
          state.spans.push([start, end]);
        }
      }
    });
    render();
    showPending();
  }

  document.addEventListener("DOMContentLoaded", setUp);
  document.addEventListener("htmx:afterSettle", setUp);
  window.addEventListener("pageshow", function (event) {
    if (event.persisted) {
      setUp();
    }
  });

  // Remember the last selection made in the body: on a touch screen, tapping the button
  // may clear the selection before the click arrives. A selection cleared for longer
  // than a tap takes (the judge tapped elsewhere) is forgotten, and the button hides.
  var forget = null;
  document.addEventListener("selectionchange", function () {
    if (!state || !state.body.isConnected) {
      return;
    }
    var span = selectionOffsets();
    window.clearTimeout(forget);
    if (span) {
      state.pending = span;
      showPending();
    } else if (state.pending && !state.mode) {
      forget = window.setTimeout(function () {
        if (state && !selectionOffsets()) {
          state.pending = null;
          showPending();
        }
      }, 600);
    }
  });

  document.addEventListener("click", function (event) {
    var target = event.target instanceof Element ? event.target : null;
    if (!state || !target) {
      return;
    }
    if (target.closest("[data-evidence-add]")) {
      event.preventDefault();
      addPending();
      return;
    }
    var remove = target.closest("[data-evidence-remove]");
    if (remove) {
      event.preventDefault();
      state.spans.splice(Number(remove.getAttribute("data-evidence-remove")), 1);
      render();
      showPending();
    }
  });

  // Keep the selection when the add button is pressed (mouse and touch).
  document.addEventListener("pointerdown", function (event) {
    var target = event.target instanceof Element ? event.target : null;
    if (state && target && target.closest("[data-evidence-add]")) {
      event.preventDefault();
    }
  });

  function typing(element) {
    return (
      element instanceof Element &&
      (element.isContentEditable || element.closest("input, textarea, select, dialog") !== null)
    );
  }

  // Capture phase: runs before the card's own keys (Backspace goes back there).
  document.addEventListener(
    "keydown",
    function (event) {
      if (!state || !state.body.isConnected || event.defaultPrevented || event.isComposing) {
        return;
      }
      if (event.ctrlKey || event.altKey || event.metaKey || typing(event.target)) {
        return;
      }
      var key = event.key;
      var lower = key.length === 1 ? key.toLowerCase() : key;
      var handled = true;
      if (lower === "e" && !event.repeat) {
        setMode(!state.mode);
      } else if (lower === "a" && !event.repeat) {
        addPending();
      } else if (state.mode) {
        if (/^Arrow(Left|Right|Up|Down)$/.test(key)) {
          moveCursor(key, event.shiftKey);
        } else if (key === "Enter") {
          addPending();
        } else if (key === "Escape") {
          setMode(false);
        } else if (key === "Delete" || key === "Backspace") {
          removeLast();
          showPending();
        } else {
          handled = false;
        }
      } else {
        handled = false;
      }
      if (handled) {
        event.preventDefault();
        event.stopImmediatePropagation();
      }
    },
    true
  );
})();
