// Toolgate dashboard: the few conveniences the spec names. The server re-checks everything on Save.
// - repeatable rows (parameters, playground calls): add, remove, move up and down, renumbered in place;
// - the editor's locks: an array or object rides in the body, an array asks for its element type,
//   the subject is always a string;
// - a warning before unsaved changes are lost; focus on the error summary after a refused save.
(function () {
  "use strict";

  var BODY_ONLY = ["array", "object"];
  var SUBJECT = "subject";
  var fresh = 0;

  function field(row, name) {
    return row.querySelector('[data-field="' + name + '"]');
  }

  // Locked controls are disabled, so they are not sent: the registry then applies the same defaults
  // (a subject is a string, an array or object goes in the body), so what was shown is what is saved.
  function applyLocks(row) {
    var name = field(row, "name"), type = field(row, "type"), location = field(row, "location");
    var elementType = field(row, "element_type");
    if (!name || !type || !location) return;
    var notes = [];
    var isSubject = name.value.trim() === SUBJECT;
    if (isSubject) {
      type.value = "string";
      notes.push("The subject is always a string: the platform fills it from the session, never the model.");
    }
    type.disabled = isSubject;
    var bodyOnly = BODY_ONLY.indexOf(type.value) !== -1;
    if (bodyOnly) {
      location.value = "body";
      notes.push("An array or object rides in the request body only.");
    }
    location.disabled = bodyOnly;
    if (elementType) {
      var isArray = type.value === "array";
      row.querySelector("[data-element-type]").hidden = !isArray;
      elementType.disabled = !isArray;
    }
    var note = row.querySelector("[data-lock-note]");
    if (note) {
      note.textContent = notes.join(" ");
      note.hidden = notes.length === 0;
    }
  }

  // Names carry the row's position (parameters[2].name) and the server reads them in that order.
  function renumber(list) {
    var prefix = list.getAttribute("data-rows");
    var pattern = new RegExp("^" + prefix + "\\[[^\\]]*\\]");
    Array.prototype.forEach.call(list.children, function (row, i) {
      row.querySelectorAll("[name]").forEach(function (el) {
        if (pattern.test(el.name)) el.name = el.name.replace(pattern, prefix + "[" + i + "]");
        if (el.getAttribute("name") === "op") el.value = el.value.replace(/-\d+$/, "-" + i);
      });
      var number = row.querySelector("[data-row-number]");
      if (number) number.textContent = String(i + 1);
    });
  }

  function newRow(container) {
    var template = container.querySelector("template[data-row-template]");
    fresh += 1;
    var html = template.innerHTML.replace(/__ROW__/g, "new" + fresh);
    var holder = document.createElement("ol");
    holder.innerHTML = html.trim();
    return holder.firstElementChild;
  }

  function onRowOp(event) {
    var button = event.target.closest("[data-op]");
    if (!button) return;
    var container = button.closest("fieldset.parameters, form");
    var list = container.querySelector("[data-rows]");
    var op = button.getAttribute("data-op");
    var row = button.closest("[data-row]");
    event.preventDefault();
    if (op === "add") {
      row = newRow(container);
      list.appendChild(row);
      applyLocks(row);
      renumber(list);
      row.querySelector("input, select, textarea").focus();
    } else if (op === "remove") {
      var next = row.nextElementSibling || row.previousElementSibling;
      row.remove();
      renumber(list);
      (next ? next.querySelector("input, textarea") : container.querySelector('[data-op="add"]')).focus();
    } else if (op === "up" && row.previousElementSibling) {
      list.insertBefore(row, row.previousElementSibling);
      renumber(list);
      button.focus();
    } else if (op === "down" && row.nextElementSibling) {
      list.insertBefore(row.nextElementSibling, row);
      renumber(list);
      button.focus();
    }
    markDirty(button.form);
  }

  function markDirty(form) {
    if (!form || !form.hasAttribute("data-warn-unsaved")) return;
    form.setAttribute("data-dirty", "true");
    var note = form.querySelector("[data-unsaved-note]");
    if (note) note.hidden = false;
  }

  function anyDirty() {
    return document.querySelector('form[data-warn-unsaved][data-dirty="true"]') !== null;
  }

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-rows] > [data-row]").forEach(applyLocks);
    document.querySelectorAll("[data-rows]").forEach(function (list) {
      var form = list.closest("form");
      if (form) form.addEventListener("click", onRowOp);
    });
    document.querySelectorAll("form[data-editor]").forEach(function (form) {
      var relock = function (event) {
        var row = event.target.closest("[data-row]");
        if (row) applyLocks(row);
      };
      form.addEventListener("change", relock);
      form.addEventListener("input", relock);
    });
    document.querySelectorAll("form[data-warn-unsaved]").forEach(function (form) {
      form.addEventListener("input", function () { markDirty(form); });
      form.addEventListener("change", function () { markDirty(form); });
      // Saving is the deliberate way out: it must not be warned about.
      form.addEventListener("submit", function () { form.removeAttribute("data-dirty"); });
    });
    // After a refused save, the list of problems; after a step, its results.
    var focus = document.querySelector("[data-error-summary]") || document.querySelector("[data-focus-on-load]");
    if (focus) focus.focus();
  });

  window.addEventListener("beforeunload", function (event) {
    if (!anyDirty()) return;
    event.preventDefault();
    event.returnValue = "";
  });
})();
