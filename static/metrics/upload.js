/*
 * Graded — run upload: drag-and-drop onto the drop zone and an upload progress bar.
 *
 * Progressive enhancement of a plain multipart form ([data-upload-form]): without
 * JavaScript the browser posts it as usual. With it, the file can be dropped onto
 * [data-drop-zone], and the form is sent with XMLHttpRequest so that upload progress can
 * be shown. On success the server answers 201 with the run page as Location, and that
 * page is opened; when the run is refused, the returned page's form (with its error list)
 * replaces this one.
 *
 * Every listener is delegated to `document` and installed once, so the script keeps
 * working when htmx swaps the page body. No eval, no inline handlers or styles (CSP).
 */
(function () {
  "use strict";

  if (window.gradedUpload) {
    return;
  }
  window.gradedUpload = true;

  var FORM = "[data-upload-form]";
  var ZONE = "[data-drop-zone]";

  function zoneOf(target) {
    return target instanceof Element ? target.closest(ZONE) : null;
  }

  function describe(zone) {
    var input = zone.querySelector("input[type=file]");
    var text = zone.querySelector("[data-drop-text]");
    if (!input || !text) {
      return;
    }
    if (input.files && input.files.length) {
      var file = input.files[0];
      text.textContent = "Selected: " + file.name + " (" + formatBytes(file.size) + ")";
      zone.classList.add("has-file");
    } else {
      text.textContent = "Drop the run file here, or choose it above.";
      zone.classList.remove("has-file");
    }
  }

  function formatBytes(n) {
    if (n < 1024) {
      return n + " bytes";
    }
    if (n < 1024 * 1024) {
      return (n / 1024).toFixed(1) + " KB";
    }
    return (n / (1024 * 1024)).toFixed(1) + " MB";
  }

  document.addEventListener("dragover", function (event) {
    var zone = zoneOf(event.target);
    if (zone) {
      event.preventDefault();
      event.dataTransfer.dropEffect = "copy";
      zone.classList.add("is-dragging");
    }
  });

  document.addEventListener("dragleave", function (event) {
    var zone = zoneOf(event.target);
    if (zone && !zone.contains(event.relatedTarget)) {
      zone.classList.remove("is-dragging");
    }
  });

  document.addEventListener("drop", function (event) {
    var zone = zoneOf(event.target);
    if (!zone) {
      return;
    }
    event.preventDefault();
    zone.classList.remove("is-dragging");
    var input = zone.querySelector("input[type=file]");
    var files = event.dataTransfer && event.dataTransfer.files;
    if (input && files && files.length) {
      input.files = files;
      describe(zone);
      fillTag(zone, files[0]);
    }
  });

  // The tag defaults to the file's name without its extension, however the file was chosen.
  function fillTag(zone, file) {
    var form = zone.closest("form");
    var tag = form && form.querySelector("input[name=tag]");
    if (tag && !tag.value && file) {
      tag.value = file.name.replace(/\.[^.]*$/, "").slice(0, 100);
    }
  }

  document.addEventListener("change", function (event) {
    var zone = zoneOf(event.target);
    if (zone && event.target.matches("input[type=file]")) {
      describe(zone);
      fillTag(zone, event.target.files && event.target.files[0]);
    }
  });

  function setProgress(form, percent, message) {
    var box = form.querySelector("[data-upload-progress]");
    var bar = form.querySelector("[data-upload-bar]");
    var status = form.querySelector("[data-upload-status]");
    if (box) {
      box.hidden = false;
    }
    if (bar) {
      if (percent === null) {
        bar.removeAttribute("value");
      } else {
        bar.value = percent;
      }
    }
    if (status) {
      status.textContent = message;
    }
  }

  function replaceForm(form, html) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    var fresh = doc.querySelector(FORM);
    if (!fresh) {
      return false;
    }
    var incoming = document.importNode(fresh, true);
    // Keep the chosen file: the refused page comes back with an empty file input.
    var before = form.querySelector("input[type=file]");
    var after = incoming.querySelector("input[type=file]");
    if (before && after && before.files && before.files.length) {
      after.files = before.files;
    }
    form.replaceWith(incoming);
    var zone = incoming.querySelector(ZONE);
    if (zone) {
      describe(zone);
    }
    var first = incoming.querySelector("[role=alert]");
    if (first) {
      first.setAttribute("tabindex", "-1");
      first.focus();
    }
    return true;
  }

  document.addEventListener(
    "submit",
    function (event) {
      var form = event.target;
      if (!(form instanceof HTMLFormElement) || !form.matches(FORM) || !window.FormData) {
        return;
      }
      event.preventDefault();
      event.stopPropagation();
      var button = form.querySelector("[data-upload-submit]");
      if (button) {
        button.disabled = true;
      }
      var xhr = new XMLHttpRequest();
      xhr.open("POST", form.action);
      xhr.setRequestHeader("X-Requested-With", "XMLHttpRequest");
      xhr.upload.addEventListener("progress", function (e) {
        if (e.lengthComputable) {
          var percent = Math.round((e.loaded / e.total) * 100);
          setProgress(form, percent, "Uploading… " + percent + "% (" + formatBytes(e.loaded) + " of " + formatBytes(e.total) + ")");
        } else {
          setProgress(form, null, "Uploading… " + formatBytes(e.loaded));
        }
      });
      xhr.upload.addEventListener("load", function () {
        setProgress(form, null, "Uploaded. Checking and scoring the run…");
      });
      xhr.addEventListener("load", function () {
        var created = xhr.status === 201 && xhr.getResponseHeader("Location");
        if (created) {
          window.location.assign(created);
          return;
        }
        // 400: the file's problems; 429: the team's runs per day are used (the page says when).
        if ((xhr.status === 400 || xhr.status === 429) && replaceForm(form, xhr.responseText)) {
          return;
        }
        setProgress(form, 0, "The upload failed (HTTP " + xhr.status + "). Please try again.");
        if (button) {
          button.disabled = false;
        }
      });
      xhr.addEventListener("error", function () {
        setProgress(form, 0, "The upload failed: the connection was lost. Please try again.");
        if (button) {
          button.disabled = false;
        }
      });
      setProgress(form, 0, "Uploading…");
      xhr.send(new FormData(form));
    },
    true
  );
})();
